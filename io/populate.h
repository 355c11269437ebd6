/* The helper's tuning (internal to io/; its calls are in io/h5io.h: h5g_helper_*, h5g_populate_*).
 * The output's pages made in the page cache ahead of its write, by a process of its own, while the
 * rank waits for its GPU context (src/pipeline.c). A write into a fresh mapping of a new file
 * spends as long making its pages (allocating and zeroing them) as copying into them; made
 * beforehand, the copy alone is left. The pages are made by a process forked before MPI_Init
 * (the helper), not by threads of the rank: threads that fault pages in the rank's address
 * space slowed the driver's making of the context by about the time they saved (mmap lock and
 * TLB shootdowns shared with the driver), a process of its own did not. H100 machine (16 cores,
 * ext4, Linux 6.x), `bench_context_beside`, 4 GiB, whole seconds of the context then a copy by
 * 16 threads into a fresh mapping: alone 0.66-1.05; beside 8 processes populating in 2 MiB steps
 * 0.49-0.52, 15 in 2 MiB 0.49-0.50, 16 in 8 MiB 0.45-0.53; beside 8 threads of the rank
 * 0.58-0.68 (bench/RESULTS.md). Advice only: where anything fails, the write makes the pages. */
#ifndef H5G_IO_POPULATE_H
#define H5G_IO_POPULATE_H

/* Workers the helper runs (at most, and at most half the rank's CPUs) and the bytes each
 * makes at a time: how soon it stops once told. 8 workers in 2 MiB steps made 3.5-4.0 GiB in
 * the H100's 0.23-0.33 s context wait (bench_context_beside above). */
#define H5G_POPULATE_WORKERS 8
#define H5G_POPULATE_STEP_BYTES ((size_t)2 << 20)
/* Descriptors the helper holds at most (h5g_helper_hand_over): the GPU driver's of one context
 * are 23 with the context alive (H100, CUDA 13), 7 once destroyed. */
#define H5G_HELPER_DESCRIPTORS 256

#endif
