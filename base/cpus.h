/* The CPUs this process may run on (its affinity mask, as the launcher set it): Open MPI's
 * mpirun binds each rank to one core when there are 1 or 2 ranks, Slurm gives --cpus-per-task. */
#ifndef H5G_CPUS_H
#define H5G_CPUS_H

#include <stddef.h>

/* How many CPUs this process may run on (>= 1). */
int h5g_cpus_allowed(void);
/* CPUs online on this machine (>= 1). */
int h5g_cpus_online(void);
/* The allowed CPUs as a list such as "0-3,8" (truncated to len). */
void h5g_cpus_list(char *buf, size_t len);
/* Widens this process's affinity to share `share` of `shares` (in order of CPU number) of the
 * CPUs its parent (the launcher's daemon) may run on, when that share holds more CPUs than this
 * process has now; call before any thread starts. Returns 1 when it widened, else 0. */
int h5g_cpus_take_share(int share, int shares);

#endif
