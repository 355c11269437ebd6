/* Exact splitters: where each rank cuts its sorted runs so that destination rank d receives
 * exactly the global ranks [d*N/P, (d+1)*N/P), whatever the key distribution. */
#ifndef H5G_MPI_SPLITTERS_H
#define H5G_MPI_SPLITTERS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Collective. `keys` holds this rank's ordered-bit keys of `width` bytes as `nruns` ascending runs
 * (run j is keys[run_offsets[j] .. run_offsets[j+1])); every rank passes the same nruns and
 * n_global is the total over ranks. Fills cuts[(P+1) * nruns]: destination d receives
 * keys[cuts[d*nruns + j] .. cuts[(d+1)*nruns + j]) of every run j.
 *
 * Method: for every target global rank t_k = k*N/P the key value v_k of that rank is found by
 * binary lifting over the bits in which the global min and max differ (one MPI_Allreduce of P-1
 * counts per bit, each count a binary search per run), then runs of keys equal to v_k are split
 * across ranks in rank order with MPI_Exscan of the local equal counts, so the cut is exact. */
int h5g_exact_cuts(MPI_Comm comm, const void *keys, unsigned width, const uint64_t *run_offsets,
                   size_t nruns, uint64_t n_global, uint64_t *cuts);

/* The same cut at any m ascending global ranks targets[0..m) (each <= n_global): fills
 * cuts[(m + 2) * nruns], row 0 the run starts, row m + 1 the run ends, row k + 1 where the keys
 * of global ranks below targets[k] end in every run. Keys equal at a cut are taken in rank order,
 * then run order, so cutting and merging in order is stable. On MPI_COMM_SELF it cuts local
 * runs into pieces that merge independently (the pipeline's merge in chunks). */
int h5g_cuts_at(MPI_Comm comm, const void *keys, unsigned width, const uint64_t *run_offsets,
                size_t nruns, const uint64_t *targets, int m, uint64_t *cuts);

#endif
