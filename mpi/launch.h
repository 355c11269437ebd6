/* What the process sets up around MPI_Init (src/main.c): the few process-wide settings that must
 * precede any thread, each only where the user has set nothing, and the workarounds for one MPI
 * library, applied where that library runs (asked at run time, never decided at build time). */
#ifndef H5G_MPI_LAUNCH_H
#define H5G_MPI_LAUNCH_H

#include <stddef.h>

/* hwloc's GPU components, left out of the topology MPI asks hwloc for: they start the CUDA
 * driver and NVML to list GPUs that the placement of ranks does not use (h5gsort asks CUDA
 * itself), which costs each rank's start (bench/RESULTS.md, "Start-up and tear-down"). */
#define H5G_HWLOC_NO_GPU "-cuda,-nvml,-opencl,-rsmi,-levelzero"

/* 1 when the MPI library this process runs is Open MPI (MPI_Get_library_version, which may be
 * called before MPI_Init). */
int h5g_mpi_is_open_mpi(void);

/* Before MPI_Init, while the process has one thread (setenv must not race a getenv): unless the
 * environment says otherwise, HWLOC_COMPONENTS=H5G_HWLOC_NO_GPU; and under Open MPI its
 * sharedfp components are left out (OMPI_MCA_sharedfp=^lockedfile,sm: h5gsort uses no shared
 * file pointers, and those components, reached from MPI_File_open, overflow a fixed buffer on
 * long paths). Returns 0, or -1 when a setting the run needs could not be made (out of memory):
 * the caller reports it once every rank runs MPI. */
int h5g_mpi_before_init(void);

/* After MPI_Init, under Open MPI's launcher: the rank's connection to the launcher's PMIx server
 * sends each message at once (TCP_NODELAY). PMIx leaves Nagle's algorithm on, so a message
 * written behind one the server has not acknowledged waits for its delayed ACK, in every
 * MPI_Finalize. Returns the connections set so (0 with no PMIx server on TCP). */
int h5g_mpi_pmix_nodelay(void);

/* The first line of the MPI library's version string (e.g. "Open MPI v4.1.4, ..."), for -v and
 * --report. */
void h5g_mpi_library(char *buf, size_t size);
/* --version: that line and the version of the MPI standard the library implements,
 * "... (MPI 3.1)"; before MPI_Init or after. */
void h5g_mpi_version(char *buf, size_t size);

#endif
