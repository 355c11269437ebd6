/* How the pipeline's exchange moves data: MPI (host-staged, always available) or NCCL between
 * the ranks' GPUs (CUDA backend on every rank and a build with NCCL). The result is the same. */
#ifndef H5G_TRANSPORT_H
#define H5G_TRANSPORT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { H5G_EXCHANGE_AUTO, H5G_EXCHANGE_MPI, H5G_EXCHANGE_NCCL } h5g_exchange_choice;

typedef struct h5g_transport h5g_transport;

/* Collective. Picks the transport (auto: MPI, measured faster; NCCL when asked for, which needs
 * every rank on a GPU of its own and a build with NCCL) and connects it; `device` is this rank's GPU and
 * `staging_bytes` the device memory NCCL may use. Asking for NCCL where it cannot run is a usage
 * error. */
int h5g_transport_open(MPI_Comm comm, h5g_exchange_choice choice, int gpu_per_rank, int device,
                       uint64_t staging_bytes, h5g_transport **t);
/* Collective all-to-all: as h5g_exchange (mpi/exchange.h). */
int h5g_transport_exchange(h5g_transport *t, const void *send, const uint64_t *send_counts,
                           void *recv, const uint64_t *recv_counts, size_t elem_size);
const char *h5g_transport_name(const h5g_transport *t);
void h5g_transport_close(h5g_transport *t);

#endif
