/* How the pipeline's exchange moves data: MPI (host-staged, always available) or NCCL between
 * the ranks' GPUs (CUDA backend on every rank and a build with NCCL). The result is the same. */
#ifndef H5G_TRANSPORT_H
#define H5G_TRANSPORT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { H5G_EXCHANGE_AUTO, H5G_EXCHANGE_MPI, H5G_EXCHANGE_NCCL } h5g_exchange_choice;

typedef struct h5g_transport h5g_transport;

/* Collective. Picks the transport and connects it: with `choice` nccl every exchange goes
 * through NCCL (which needs every rank on a GPU of its own, `gpu_per_rank`, and a build with
 * NCCL: a usage error otherwise); with auto, NCCL is connected for exchanges of device buffers
 * when every rank has its own GPU and the pipeline may keep its keys there (`device_buffers`:
 * keys only, ranks on more than one node), and host buffers go through MPI; with mpi, MPI only.
 * `device` is this rank's GPU and `staging_bytes` the device memory NCCL may stage host buffers
 * through. */
int h5g_transport_open(MPI_Comm comm, h5g_exchange_choice choice, int gpu_per_rank,
                       int device_buffers, int device, uint64_t staging_bytes, h5g_transport **t);
/* NCCL connects in the background after h5g_transport_open; this waits for it and returns its
 * status (H5G_OK without NCCL). Agree on it before the exchange. */
int h5g_transport_wait(h5g_transport *t);
/* Collective all-to-all of host buffers: as h5g_exchange (mpi/exchange.h). */
int h5g_transport_exchange(h5g_transport *t, const void *send, const uint64_t *send_counts,
                           void *recv, const uint64_t *recv_counts, size_t elem_size);
/* True when h5g_transport_exchange_device can run (NCCL is connected). */
int h5g_transport_moves_device_buffers(const h5g_transport *t);
/* Collective all-to-all of device buffers (same counts and layout), between the ranks' GPUs. */
int h5g_transport_exchange_device(h5g_transport *t, const void *send, const uint64_t *send_counts,
                                  void *recv, const uint64_t *recv_counts, size_t elem_size);
/* "nccl" when NCCL moved (or, with --exchange nccl, will move) the keys, else "mpi". */
const char *h5g_transport_name(const h5g_transport *t);
void h5g_transport_close(h5g_transport *t);

#endif
