#ifndef H5G_MPI_TOPOLOGY_H
#define H5G_MPI_TOPOLOGY_H

#include <mpi.h>
#include <stdint.h>

/* Rank of the caller among the ranks of its node (MPI_COMM_TYPE_SHARED), which picks the GPU,
 * and the number of ranks on the node. */
int h5g_local_rank(MPI_Comm comm, int *local_rank, int *local_size);

/* First global index of rank r's share of n elements over p ranks: floor(r * n / p), without
 * overflow for any 64-bit n. Rank r owns [h5g_share_begin(r), h5g_share_begin(r + 1)). */
static inline uint64_t h5g_share_begin(uint64_t r, uint64_t n, uint64_t p) {
  return r * (n / p) + (r * (n % p)) / p;
}

#endif
