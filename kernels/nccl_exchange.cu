#include "kernels/nccl_exchange.h"

#include <nccl.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/check_cuda.cuh"
#include "kernels/host_copy.cuh"

#define CHECK_NCCL(call)                                                                          \
  do {                                                                                            \
    ncclResult_t check_nccl_res_ = (call);                                                        \
    if (check_nccl_res_ != ncclSuccess) {                                                         \
      rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "NCCL error in %s: %s", #call,      \
                         ncclGetErrorString(check_nccl_res_));                                    \
      goto done;                                                                                  \
    }                                                                                             \
  } while (0)

struct h5g_nccl {
  ncclComm_t comm;
  cudaStream_t stream;
  char *d_send, *d_recv; /* staging for host buffers, allocated on first need */
  size_t slot_bytes;     /* staging per peer and direction */
  int rank, size, device;
  uint64_t *offsets; /* [2 * (size + 1)]: byte offsets of the blocks */
};

extern "C" size_t h5g_nccl_id_bytes(void) { return sizeof(ncclUniqueId); }

extern "C" int h5g_nccl_make_id(void *id) {
  int rc = H5G_OK;
  CHECK_NCCL(ncclGetUniqueId((ncclUniqueId *)id));
done:
  return rc;
}

/* Sends and receives one byte to and from every peer: NCCL connects peers on first use, and that
 * set-up belongs to the connection, not to the first exchange's time. */
static int connect_peers(h5g_nccl *c) {
  int rc = H5G_OK;
  char *bytes = NULL;
  CHECK_CUDA(cudaMalloc((void **)&bytes, 2 * (size_t)c->size));
  CHECK_NCCL(ncclGroupStart());
  for (int p = 0; p < c->size; p++) {
    CHECK_NCCL(ncclSend(bytes + p, 1, ncclUint8, p, c->comm, c->stream));
    CHECK_NCCL(ncclRecv(bytes + c->size + p, 1, ncclUint8, p, c->comm, c->stream));
  }
  CHECK_NCCL(ncclGroupEnd());
  CHECK_CUDA(cudaStreamSynchronize(c->stream));
done:
  cudaFree(bytes);
  return rc;
}

extern "C" int h5g_nccl_create(h5g_nccl **out, const void *id, int rank, int size, int device,
                               uint64_t staging_bytes) {
  int rc = H5G_OK;
  ncclUniqueId unique;
  h5g_nccl *c = (h5g_nccl *)calloc(1, sizeof *c);
  CHECK_ALLOC(c, sizeof *c);
  c->rank = rank;
  c->size = size;
  c->device = device;
  /* 256-byte aligned slots: NCCL and the copy engines move aligned blocks fastest */
  c->slot_bytes = (size_t)(staging_bytes / 2 / (uint64_t)size) / 256 * 256;
  if (c->slot_bytes == 0) c->slot_bytes = 256;
  c->offsets = (uint64_t *)calloc(2 * ((size_t)size + 1), sizeof(uint64_t));
  CHECK_ALLOC(c->offsets, 2 * ((size_t)size + 1) * sizeof(uint64_t));
  memcpy(&unique, id, sizeof unique);
  CHECK_CUDA(cudaSetDevice(device));
  CHECK_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
  CHECK_NCCL(ncclCommInitRank(&c->comm, size, unique, rank));
  CHECK(connect_peers(c));
  *out = c;
  c = NULL;
done:
  h5g_nccl_destroy(c);
  return rc;
}

/* Bytes of round `round` in a block of `total` bytes cut into slots of `slot` bytes. */
static size_t round_bytes(uint64_t total, uint64_t round, size_t slot) {
  uint64_t start = round * slot;
  return start >= total ? 0 : (size_t)(total - start < slot ? total - start : slot);
}

extern "C" int h5g_nccl_exchange(h5g_nccl *c, const void *send, const uint64_t *send_counts,
                                 void *recv, const uint64_t *recv_counts, size_t elem_size) {
  int rc = H5G_OK;
  const int P = c->size, me = c->rank;
  const char *src = (const char *)send;
  char *dst = (char *)recv;
  uint64_t *send_off = c->offsets, *recv_off = c->offsets + P + 1, rounds = 0;
  CHECK_CUDA(cudaSetDevice(c->device));
  for (int p = 0; p < P; p++) {
    send_off[p + 1] = send_off[p] + send_counts[p] * elem_size;
    recv_off[p + 1] = recv_off[p] + recv_counts[p] * elem_size;
    if (p == me) continue;
    uint64_t longest = send_counts[p] > recv_counts[p] ? send_counts[p] : recv_counts[p];
    uint64_t r = (longest * elem_size + c->slot_bytes - 1) / c->slot_bytes;
    if (r > rounds) rounds = r;
  }
  if (send_counts[me] != recv_counts[me])
    H5G_FAIL(H5G_ERR_RUNTIME, "exchange counts disagree for the local block");
  if (!c->d_send) {
    CHECK_CUDA(cudaMalloc((void **)&c->d_send, c->slot_bytes * (size_t)P));
    CHECK_CUDA(cudaMalloc((void **)&c->d_recv, c->slot_bytes * (size_t)P));
  }
  if (send_counts[me])
    memcpy(dst + recv_off[me], src + send_off[me], send_counts[me] * elem_size);
  /* Round r moves the r-th slot of every block: stage in, one NCCL group of sends and receives,
   * stage out. Peers agree on which rounds carry data because both know the pair's counts. */
  for (uint64_t r = 0; r < rounds; r++) {
    for (int p = 0; p < P; p++) {
      size_t len = p == me ? 0 : round_bytes(send_off[p + 1] - send_off[p], r, c->slot_bytes);
      if (len)
        CHECK_CUDA(h5g::host_copy_async(c->d_send + (size_t)p * c->slot_bytes,
                                        src + send_off[p] + r * c->slot_bytes, len,
                                        cudaMemcpyHostToDevice, c->stream));
    }
    CHECK_NCCL(ncclGroupStart());
    for (int p = 0; p < P; p++) {
      if (p == me) continue;
      size_t out = round_bytes(send_off[p + 1] - send_off[p], r, c->slot_bytes);
      size_t in = round_bytes(recv_off[p + 1] - recv_off[p], r, c->slot_bytes);
      if (out)
        CHECK_NCCL(ncclSend(c->d_send + (size_t)p * c->slot_bytes, out, ncclUint8, p, c->comm,
                            c->stream));
      if (in)
        CHECK_NCCL(ncclRecv(c->d_recv + (size_t)p * c->slot_bytes, in, ncclUint8, p, c->comm,
                            c->stream));
    }
    CHECK_NCCL(ncclGroupEnd());
    for (int p = 0; p < P; p++) {
      size_t len = p == me ? 0 : round_bytes(recv_off[p + 1] - recv_off[p], r, c->slot_bytes);
      if (len)
        CHECK_CUDA(h5g::host_copy_async(dst + recv_off[p] + r * c->slot_bytes,
                                        c->d_recv + (size_t)p * c->slot_bytes, len,
                                        cudaMemcpyDeviceToHost, c->stream));
    }
    CHECK_CUDA(cudaStreamSynchronize(c->stream));
  }
done:
  return rc;
}

extern "C" int h5g_nccl_exchange_device(h5g_nccl *c, const void *send, const uint64_t *send_counts,
                                        void *recv, const uint64_t *recv_counts, size_t elem_size) {
  int rc = H5G_OK;
  const int P = c->size, me = c->rank;
  uint64_t send_at = 0, recv_at = 0;
  CHECK_CUDA(cudaSetDevice(c->device));
  if (send_counts[me] != recv_counts[me])
    H5G_FAIL(H5G_ERR_RUNTIME, "exchange counts disagree for the local block");
  CHECK_NCCL(ncclGroupStart());
  for (int p = 0; p < P; p++) {
    const char *out = (const char *)send + send_at * elem_size;
    char *in = (char *)recv + recv_at * elem_size;
    /* The local block too goes through NCCL, inside the group: a copy on the stream before it
     * would not overlap the transfers, and made the all-to-all much slower. NCCL counts are
     * size_t: any 64-bit block in one call. */
    if (send_counts[p]) CHECK_NCCL(ncclSend(out, send_counts[p] * elem_size, ncclUint8, p, c->comm, c->stream));
    if (recv_counts[p]) CHECK_NCCL(ncclRecv(in, recv_counts[p] * elem_size, ncclUint8, p, c->comm, c->stream));
    send_at += send_counts[p];
    recv_at += recv_counts[p];
  }
  CHECK_NCCL(ncclGroupEnd());
  CHECK_CUDA(cudaStreamSynchronize(c->stream));
done:
  return rc;
}

extern "C" void h5g_nccl_destroy(h5g_nccl *c) {
  if (!c) return;
  cudaSetDevice(c->device);
  if (c->comm) ncclCommDestroy(c->comm);
  cudaFree(c->d_send);
  cudaFree(c->d_recv);
  if (c->stream) cudaStreamDestroy(c->stream);
  free(c->offsets);
  free(c);
}
