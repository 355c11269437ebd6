/* What host memory this process may use: the memory limit of its control group (cgroup v2
 * memory.max, v1 memory.limit_in_bytes, the lowest on its path, less what the group uses
 * already), and the node's MemAvailable. Slurm's --mem and --mem-per-cpu become such a limit;
 * past it the kernel kills the job with no word of why. The C library only. */
#ifndef H5G_MEMORY_LIMITS_H
#define H5G_MEMORY_LIMITS_H

#include <stdint.h>

typedef struct {
  uint64_t available; /* bytes the processes of this node may still take: the least below */
  uint64_t cgroup_free;   /* the cgroup's limit less its usage; UINT64_MAX: no limit found */
  uint64_t cgroup_limit;  /* UINT64_MAX: none */
  uint64_t mem_available; /* /proc/meminfo MemAvailable; UINT64_MAX: not readable */
  const char *bound;      /* which one binds: "cgroup memory.max", "MemAvailable", ... */
} h5g_memory_limits;

/* Reads the limits. `cap` (bytes; 0: none), e.g. --host-memory, replaces them all: the memory
 * the job may use on this node, as a scheduler without cgroups would give it. */
void h5g_memory_limits_read(uint64_t cap, h5g_memory_limits *limits);

#endif
