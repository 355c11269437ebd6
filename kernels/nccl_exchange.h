/* All-to-all exchange between the ranks' GPUs with NCCL (one GPU per rank), of device buffers
 * (the keys the CUDA backend keeps on the GPU) or of host buffers (pinned, as the CUDA backend
 * allocates them) staged through a fixed device buffer in rounds, so any 64-bit count passes
 * within a known amount of device memory. Knows nothing of MPI: the caller broadcasts the id
 * that rank 0 makes. */
#ifndef H5G_NCCL_EXCHANGE_H
#define H5G_NCCL_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct h5g_nccl h5g_nccl;

/* Bytes of the id that connects the ranks (ncclUniqueId). */
size_t h5g_nccl_id_bytes(void);
/* On one rank: makes the id every rank passes to h5g_nccl_create. */
int h5g_nccl_make_id(void *id);
/* Collective over the `size` ranks: joins the NCCL communicator on GPU `device` and connects
 * every pair of ranks; host exchanges will stage through `staging_bytes` of device memory (split
 * between send and receive, allocated by the first one). */
int h5g_nccl_create(h5g_nccl **out, const void *id, int rank, int size, int device,
                    uint64_t staging_bytes);
/* Collective: sends send_counts[p] elements of elem_size bytes to rank p (blocks contiguous in
 * rank order) and receives recv_counts[p] from rank p into recv (in rank order). */
int h5g_nccl_exchange(h5g_nccl *c, const void *send, const uint64_t *send_counts, void *recv,
                      const uint64_t *recv_counts, size_t elem_size);
/* The same for device buffers send and recv: no staging. */
int h5g_nccl_exchange_device(h5g_nccl *c, const void *send, const uint64_t *send_counts,
                             void *recv, const uint64_t *recv_counts, size_t elem_size);
void h5g_nccl_destroy(h5g_nccl *c);

#ifdef __cplusplus
}
#endif
#endif
