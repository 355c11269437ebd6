#include "mpi/run_exchange.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "mpi/agree.h"
#include "mpi/exchange.h"

int h5g_run_exchange_alloc(size_t ranks, size_t nruns, h5g_run_exchange *x) {
  int rc = H5G_OK;
  size_t count = 2 * ranks * nruns + 2 * ranks;
  memset(x, 0, sizeof *x);
  x->ranks = ranks;
  x->nruns = nruns;
  x->send_runs = calloc(count, sizeof(uint64_t));
  CHECK_ALLOC(x->send_runs, count * sizeof(uint64_t));
  x->recv_runs = x->send_runs + ranks * nruns;
  x->send_total = x->recv_runs + ranks * nruns;
  x->recv_total = x->send_total + ranks;
done:
  return rc;
}

void h5g_run_exchange_free(h5g_run_exchange *x) {
  free(x->send_runs);
  memset(x, 0, sizeof *x);
}

int h5g_run_exchange_counts(MPI_Comm comm, const uint64_t *cuts, uint64_t share, uint64_t offset,
                            h5g_run_exchange *x, uint64_t *recv_offsets) {
  int rc = H5G_OK, rank = 0;
  size_t P = x->ranks, R = x->nruns;
  uint64_t received = 0, before = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  for (size_t d = 0; d < P; d++) {
    x->send_total[d] = 0;
    for (size_t j = 0; j < R; j++) {
      x->send_runs[d * R + j] = cuts[(d + 1) * R + j] - cuts[d * R + j];
      x->send_total[d] += x->send_runs[d * R + j];
    }
  }
  CHECK(h5g_exchange_counts(comm, x->send_runs, x->recv_runs, (int)R));
  recv_offsets[0] = 0;
  for (size_t d = 0; d < P; d++) x->recv_total[d] = 0;
  for (size_t i = 0; i < P * R; i++) {
    x->recv_total[i / R] += x->recv_runs[i];
    received += x->recv_runs[i];
    recv_offsets[i + 1] = recv_offsets[i] + x->recv_runs[i];
  }
  CHECK_MPI(MPI_Exscan(&received, &before, 1, MPI_UINT64_T, MPI_SUM, comm));
  if (rank == 0) before = 0;
  if (received != share || before != offset)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: rank %d would receive %llu keys at %llu, not %llu at %llu",
             rank, (unsigned long long)received, (unsigned long long)before,
             (unsigned long long)share, (unsigned long long)offset);
done:
  return rc;
}

void h5g_run_exchange_pack(const h5g_run_exchange *x, const uint64_t *cuts, const void *src,
                           void *dst, size_t elem_size) {
  size_t P = x->ranks, R = x->nruns;
  char *out = dst;
  for (size_t d = 0; d < P; d++)
    for (size_t j = 0; j < R; j++) {
      size_t bytes = x->send_runs[d * R + j] * elem_size;
      memcpy(out, (const char *)src + cuts[d * R + j] * elem_size, bytes);
      out += bytes;
    }
}
