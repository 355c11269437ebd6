/* The output's pages made in the page cache ahead of its write, by a process of its own, while
 * the rank waits for its GPU context (src/pipeline.c). A write into a fresh mapping of a new file
 * spends as long making its pages (allocating and zeroing them) as copying into them; made
 * beforehand, the copy alone is left. The pages are made by a process forked before MPI_Init
 * (the populator), not by threads of the rank: threads that fault pages in the rank's address
 * space slowed the driver's making of the context by about the time they saved (mmap lock and
 * TLB shootdowns shared with the driver), a process of its own did not. H100 machine (16 cores,
 * ext4, Linux 6.x), `bench_context_beside`, 4 GiB, whole seconds of the context then a copy by
 * 16 threads into a fresh mapping: alone 0.66-1.05; beside 8 processes populating in 2 MiB steps
 * 0.49-0.52, 15 in 2 MiB 0.49-0.50, 16 in 8 MiB 0.45-0.53; beside 8 threads of the rank
 * 0.58-0.68 (bench/RESULTS.md). Advice only: where anything fails, the write makes the pages. */
#ifndef H5G_IO_POPULATE_H
#define H5G_IO_POPULATE_H

#include <stdint.h>
#include <sys/types.h>

/* Workers the populator runs (at most, and at most half the rank's CPUs) and the bytes each
 * makes at a time: how soon it stops once told. 8 workers in 2 MiB steps made 3.5-4.0 GiB in
 * the H100's 0.23-0.33 s context wait (bench_context_beside above). */
#define H5G_POPULATE_WORKERS 8
#define H5G_POPULATE_STEP_BYTES ((size_t)2 << 20)

/* Forks the populator; call while the process has one thread (before MPI_Init). It waits for one
 * range to populate (h5g_populate_start) and ends when told to stop or when this process ends.
 * Does nothing where the fork fails. */
void h5g_populate_fork(void);
/* 1 while a populator waits for its range. */
int h5g_populate_ready(void);
/* The populator allocates bytes [offset, offset + bytes) of the file at `path` (fallocate, as the
 * write's mapping does: io/direct.c) and makes their pages with up to `workers` workers. Returns
 * 1 when it was told, 0 when there is none. */
int h5g_populate_start(const char *path, off_t offset, uint64_t bytes, int workers);
/* Tells the populator to stop (it ends on its own, the pages it made stay in the page cache). */
void h5g_populate_stop(void);
/* h5g_populate_stop, then waits for the populator to end. */
void h5g_populate_reap(void);

#endif
