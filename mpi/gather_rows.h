/* Gathering rows by global index: how carried datasets follow the sorted keys. */
#ifndef H5G_MPI_GATHER_ROWS_H
#define H5G_MPI_GATHER_ROWS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* A table of n_total rows is spread over the ranks, rank r holding rows [r*N/P, (r+1)*N/P)
 * (h5g_share_begin). A route says, for `n_out` rows of this rank's output, which table row each
 * receives (src_index[i] for output row i): made once, it moves any number of tables of that
 * spread (every carried dataset) with one exchange of rows each. Its requests (the indices sent
 * to the ranks that hold the rows) are exchanged once, when it is made. */
typedef struct h5g_row_route h5g_row_route;

/* Collective. `src_index` is borrowed: it must stay unchanged while the route lives. The copies
 * and the grouping of requests take up to `threads` threads, the caller's one of them. */
int h5g_row_route_make(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                       uint64_t n_total, int threads, h5g_row_route **route);
/* Collective: row i of `out` (i < n_out) receives row src_index[i] of the table whose rows this
 * rank holds in `local_rows` (row_bytes each, the same on every rank). */
int h5g_row_route_move(h5g_row_route *route, const void *local_rows, size_t row_bytes, void *out);
/* Bytes a route and one move of rows of row_bytes may take beyond the tables, for n_local rows
 * held and n_out received on a rank of `size` (an upper bound where each table row goes to one
 * output row at most, as a permutation does: every row from another rank). */
uint64_t h5g_row_route_bytes(uint64_t n_local, uint64_t n_out, int size, size_t row_bytes);
void h5g_row_route_free(h5g_row_route *route);

/* Collective: the route made, one table moved, the route freed. */
int h5g_gather_rows(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                    const void *local_rows, uint64_t n_total, size_t row_bytes, void *out,
                    int threads);

#endif
