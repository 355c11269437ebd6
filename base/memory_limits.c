/* Host memory limits: base/memory_limits.h. */
#include "base/memory_limits.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The first unsigned number in file `path` ("max" and missing files: UINT64_MAX). */
static uint64_t read_number(const char *path) {
  FILE *f = fopen(path, "r");
  uint64_t value = UINT64_MAX;
  if (!f) return value;
  if (fscanf(f, "%" SCNu64, &value) != 1) value = UINT64_MAX;
  fclose(f);
  return value;
}

/* The value of `key` in a memory.stat file (0 when absent). */
static uint64_t stat_value(const char *path, const char *key) {
  FILE *f = fopen(path, "r");
  char line[256], name[128];
  uint64_t value = 0, v;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "%127s %" SCNu64, name, &v) == 2 && strcmp(name, key) == 0) value = v;
  if (f) fclose(f);
  return value;
}

/* /proc/meminfo's MemAvailable in bytes. */
static uint64_t mem_available(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  uint64_t kib = 0, bytes = UINT64_MAX;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kib) == 1) bytes = kib * 1024;
  if (f) fclose(f);
  return bytes;
}

/* This process's cgroup path for the v1 memory controller (`v1`) or in the v2 hierarchy. */
static int cgroup_path(int v1, char *path, size_t len) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  char line[4096];
  int found = 0;
  while (f && !found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    const char *rest = v1                             ? strstr(line, ":memory:")
                       : strncmp(line, "0::", 3) == 0 ? line + 1
                                                      : NULL;
    if (!rest) continue;
    rest = strchr(rest + 1, ':') + 1;
    found = snprintf(path, len, "%s", strcmp(rest, "/") == 0 ? "" : rest) < (int)len;
  }
  if (f) fclose(f);
  return found;
}

/* The lowest limit less usage on the cgroup's path up to the root of the mounted hierarchy
 * (`root`: /sys/fs/cgroup or /sys/fs/cgroup/memory). A container mounts its own group as the
 * root, where the path of /proc/self/cgroup does not exist: the root's files count then. */
static void cgroup_free(const char *root, const char *limit_file, const char *usage_file, int v1,
                        h5g_memory_limits *l) {
  /* the group's usage counts its page cache, which the kernel reclaims before it kills: a
   * pipeline's previous stage that wrote the input leaves the group "full" of it. Inactive file
   * pages count as free (the working set, as kubelet reckons it); active ones as used. */
  const char *cache_key = v1 ? "total_inactive_file" : "inactive_file";
  char group[4096], file[8192];
  if (!cgroup_path(v1, group, sizeof group)) return;
  for (;;) {
    snprintf(file, sizeof file, "%s%s/%s", root, group, limit_file);
    uint64_t limit = read_number(file);
    snprintf(file, sizeof file, "%s%s/%s", root, group, usage_file);
    uint64_t usage = read_number(file);
    snprintf(file, sizeof file, "%s%s/memory.stat", root, group);
    uint64_t cache = usage == UINT64_MAX ? 0 : stat_value(file, cache_key);
    if (cache <= usage) usage -= cache;
    /* v1 reports "no limit" as a huge page-rounded number */
    if (limit < ((uint64_t)1 << 60) && limit < l->cgroup_limit) {
      l->cgroup_limit = limit;
      l->cgroup_free = usage == UINT64_MAX ? limit : usage < limit ? limit - usage : 0;
    }
    char *slash = strrchr(group, '/');
    if (!slash) break;
    *slash = '\0';
  }
}

void h5g_memory_limits_read(uint64_t cap, h5g_memory_limits *l) {
  l->cgroup_free = l->cgroup_limit = UINT64_MAX;
  l->mem_available = mem_available();
  if (cap) {
    l->available = cap;
    l->bound = "--host-memory";
    return;
  }
  cgroup_free("/sys/fs/cgroup", "memory.max", "memory.current", 0, l);
  cgroup_free("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes", 1, l);
  int cgroup_binds = l->cgroup_free <= l->mem_available;
  l->available = cgroup_binds ? l->cgroup_free : l->mem_available;
  l->bound = cgroup_binds ? "the job's cgroup memory limit" : "MemAvailable";
}
