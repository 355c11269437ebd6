#include "mpi/exchange.h"

#include <stdlib.h>
#include <string.h>

#include "mpi/agree.h"
#include "base/error.h"

uint64_t h5g_max_message_elems(void) {
  const char *env = getenv("H5GSORT_MAX_MESSAGE_ELEMS");
  uint64_t limit = env ? strtoull(env, NULL, 10) : 0;
  return limit ? limit : (uint64_t)1 << 30;
}

int h5g_exchange_counts(MPI_Comm comm, const uint64_t *send, uint64_t *recv, int per_peer) {
  int rc = H5G_OK;
  CHECK_MPI(MPI_Alltoall(send, per_peer, MPI_UINT64_T, recv, per_peer, MPI_UINT64_T, comm));
done:
  return rc;
}

/* Rounds of nonblocking point-to-point messages: in round i every pair exchanges its i-th
 * message of at most `limit` elements. A rank finishes when its own messages are through; peers
 * agree on message counts because they derive them from the same exchanged counts. */
int h5g_exchange(MPI_Comm comm, const void *sendbuf, const uint64_t *send_counts, void *recvbuf,
                 const uint64_t *recv_counts, size_t elem_size) {
  int rc = H5G_OK, rank, size;
  MPI_Datatype elem = MPI_DATATYPE_NULL;
  uint64_t *offsets = NULL;
  MPI_Request *requests = NULL;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  uint64_t limit = h5g_max_message_elems();
  if (limit > INT32_MAX) limit = INT32_MAX;
  CHECK_MPI(MPI_Type_contiguous((int)elem_size, MPI_BYTE, &elem));
  CHECK_MPI(MPI_Type_commit(&elem));
  offsets = calloc(2 * ((size_t)size + 1), sizeof(uint64_t));
  requests = malloc(2 * (size_t)size * sizeof(MPI_Request));
  CHECK(h5g_agree_alloc(comm, offsets != NULL, 2 * ((size_t)size + 1) * sizeof(uint64_t)));
  CHECK(h5g_agree_alloc(comm, requests != NULL, 2 * (size_t)size * sizeof(MPI_Request)));
  uint64_t *send_off = offsets, *recv_off = offsets + size + 1;
  for (int p = 0; p < size; p++) {
    send_off[p + 1] = send_off[p] + send_counts[p];
    recv_off[p + 1] = recv_off[p] + recv_counts[p];
  }
  const char *src = sendbuf;
  char *dst = recvbuf;
  CHECK(h5g_agree(comm, send_counts[rank] == recv_counts[rank]
                            ? H5G_OK
                            : h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "internal error: "
                                            "exchange counts disagree for the local block")));
  if (send_counts[rank])
    memcpy(dst + recv_off[rank] * elem_size, src + send_off[rank] * elem_size,
           send_counts[rank] * elem_size);
  uint64_t rounds = 0;
  for (int p = 0; p < size; p++) {
    if (p == rank) continue;
    uint64_t r_send = (send_counts[p] + limit - 1) / limit, r_recv = (recv_counts[p] + limit - 1) / limit;
    if (r_send > rounds) rounds = r_send;
    if (r_recv > rounds) rounds = r_recv;
  }
  for (uint64_t round = 0; round < rounds; round++) {
    int nreq = 0;
    uint64_t start = round * limit;
    for (int p = 0; p < size; p++) {
      if (p == rank || start >= recv_counts[p]) continue;
      uint64_t len = recv_counts[p] - start < limit ? recv_counts[p] - start : limit;
      CHECK_MPI(MPI_Irecv(dst + (recv_off[p] + start) * elem_size, (int)len, elem, p, 0, comm,
                          &requests[nreq++]));
    }
    for (int p = 0; p < size; p++) {
      if (p == rank || start >= send_counts[p]) continue;
      uint64_t len = send_counts[p] - start < limit ? send_counts[p] - start : limit;
      CHECK_MPI(MPI_Isend(src + (send_off[p] + start) * elem_size, (int)len, elem, p, 0, comm,
                          &requests[nreq++]));
    }
    CHECK_MPI(h5g_wait_all(nreq, requests));
  }
done:
  free(requests);
  free(offsets);
  if (elem != MPI_DATATYPE_NULL) MPI_Type_free(&elem);
  return rc;
}

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1 and declares MPI_Waitall's statuses as an
 * array, so GCC 11 and later read this call as writing `count` statuses into no memory
 * (-Wstringop-overflow; pmodels/mpich#5687): a false positive, silenced here alone. */
int h5g_wait_all(int count, MPI_Request *requests) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
  return MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}
