/* The CPUs this process may run on (its affinity mask, as the launcher set it): Open MPI's
 * mpirun binds each rank to one core when there are 1 or 2 ranks, Slurm gives --cpus-per-task. */
#ifndef H5G_CPUS_H
#define H5G_CPUS_H

#include <stddef.h>
#include <stdint.h>

/* How many CPUs this process may run on (>= 1). */
int h5g_cpus_allowed(void);
/* CPUs online on this machine (>= 1). */
int h5g_cpus_online(void);
/* The allowed CPUs as a list such as "0-3,8" (truncated to len). */
void h5g_cpus_list(char *buf, size_t len);
/* The allowed CPUs as bits (CPU c: bit c % 64 of word c / 64; none past the words), so that the
 * CPUs several ranks share can be counted (src/sizing.c: the cores each rank of a node gets). */
enum { H5G_CPUS_MASK_WORDS = 16 };
void h5g_cpus_mask(uint64_t mask[H5G_CPUS_MASK_WORDS]);

#endif
