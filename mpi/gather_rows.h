/* Gathering rows by global index: how carried datasets follow the sorted keys. */
#ifndef H5G_MPI_GATHER_ROWS_H
#define H5G_MPI_GATHER_ROWS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Collective. A table of n_total rows of row_bytes each is spread over the ranks, rank r holding
 * rows [r*N/P, (r+1)*N/P) in `local_rows`. Row i of `out` (i < n_out) receives table row
 * src_index[i]. Two exchanges: the indices go to the ranks that hold the rows, the rows come
 * back. The row copies (random reads and writes, bound by memory latency) take up to `threads`
 * threads, the caller's one of them. */
int h5g_gather_rows(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                    const void *local_rows, uint64_t n_total, size_t row_bytes, void *out,
                    int threads);

#endif
