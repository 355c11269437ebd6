/* The counts and layout of an exchange of sorted runs: every rank holds R sorted runs, cut by the
 * exact splitters (mpi/splitters.h) into one piece per destination rank; rank d receives the
 * pieces of every run of every rank, P * R sorted runs that it then merges. */
#ifndef H5G_MPI_RUN_EXCHANGE_H
#define H5G_MPI_RUN_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  size_t ranks, nruns;
  uint64_t *send_runs, *recv_runs;   /* [ranks * nruns]: piece of run j for / from rank d */
  uint64_t *send_total, *recv_total; /* [ranks]: elements for / from rank d */
} h5g_run_exchange;

/* Local: the tables (agree on the status before the next collective call). */
int h5g_run_exchange_alloc(size_t ranks, size_t nruns, h5g_run_exchange *x);
void h5g_run_exchange_free(h5g_run_exchange *x);

/* Collective: the send counts from cuts[(P + 1) * R] (h5g_exact_cuts), the receive counts from
 * the other ranks, and recv_offsets[P * R + 1] where each received run starts. Fails (after its
 * last collective call) unless this rank receives exactly its share of `share` elements at
 * global `offset`, which the exact splitters promise. */
int h5g_run_exchange_counts(MPI_Comm comm, const uint64_t *cuts, uint64_t share, uint64_t offset,
                            h5g_run_exchange *x, uint64_t *recv_offsets);

/* True when the runs must be packed: with more than one run, the pieces for one destination are
 * not contiguous in the slice. */
static inline int h5g_run_exchange_needs_packing(const h5g_run_exchange *x) { return x->nruns > 1; }

/* Local: copies the pieces of `src` (elements of elem_size bytes, laid out as the runs the cuts
 * were taken from) to `dst` so that the pieces for each destination lie together, in rank order
 * and run order within it. */
void h5g_run_exchange_pack(const h5g_run_exchange *x, const uint64_t *cuts, const void *src,
                           void *dst, size_t elem_size);

#endif
