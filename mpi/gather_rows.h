/* Gathering rows by global index: how carried datasets follow the sorted keys. */
#ifndef H5G_MPI_GATHER_ROWS_H
#define H5G_MPI_GATHER_ROWS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* A table of n_total rows is spread over the ranks, rank r holding rows [r*N/P, (r+1)*N/P)
 * (h5g_share_begin). A route says, for `n_out` rows of this rank's output, which table row each
 * receives (src_index[i] for output row i): made once, it moves any number of tables of that
 * spread (every carried dataset) with one exchange of rows each. A route made of requests (the
 * indices sent to the ranks that hold the rows) exchanges them once, when it is made; one that
 * follows an exchange of sorted runs needs none. */
typedef struct h5g_row_route h5g_row_route;

/* Collective. `src_index` is borrowed: it must stay unchanged while the route lives. The copies
 * and the grouping of requests take up to `threads` threads, the caller's one of them. */
int h5g_row_route_make(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                       uint64_t n_total, int threads, h5g_row_route **route);
/* Collective: the route of rows that follow an exchange of sorted runs (mpi/run_exchange.h)
 * whose values were their source indices, made with no requests. Rank r held table rows
 * [r*N/P, (r+1)*N/P) in `nruns` runs of its own rows [j*n_r/R, (j+1)*n_r/R) (h5g_share_begin);
 * it sent `sent_index` (the source indices of the elements it sent, in the order sent: to each
 * rank in turn, send_counts[d] of them) and received the pieces of every rank's runs, piece i
 * (rank i / R, run i % R) at piece_offsets[i] (P * R + 1 entries), which it merged into
 * src_index (n_out = piece_offsets[P * R]). A merge takes each piece in its order, so output row
 * i is the next row not yet taken of the piece its source index lies in. `sent_index`, the
 * counts and `src_index` are borrowed. */
int h5g_row_route_follow(MPI_Comm comm, const uint64_t *sent_index, const uint64_t *send_counts,
                         const uint64_t *piece_offsets, size_t nruns, const uint64_t *src_index,
                         uint64_t n_out, uint64_t n_total, int threads, h5g_row_route **route);
/* Collective: row i of `out` (i < n_out) receives row src_index[i] of the table whose rows this
 * rank holds in `local_rows` (row_bytes each, the same on every rank). */
int h5g_row_route_move(h5g_row_route *route, const void *local_rows, size_t row_bytes, void *out);
/* Bytes a route and one move of rows of row_bytes may take beyond the tables, for n_local rows
 * held and n_out received on a rank of `size` (an upper bound: every row from another rank);
 * `follows`: a route that follows the exchange, with the sent index it borrows. */
uint64_t h5g_row_route_bytes(uint64_t n_local, uint64_t n_out, int size, size_t row_bytes,
                             int follows);
void h5g_row_route_free(h5g_row_route *route);

/* Collective: the route made, one table moved, the route freed. */
int h5g_gather_rows(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                    const void *local_rows, uint64_t n_total, size_t row_bytes, void *out,
                    int threads);

#endif
