#include "src/verify.h"

#include <stdlib.h>

#include "mpi/agree.h"
#include "base/error.h"

int h5g_checksum_share(MPI_Comm comm, const void *keys, uint64_t n, unsigned width,
                       uint64_t *checksum) {
  int rc = H5G_OK;
  uint64_t local = h5g_keys_checksum(keys, n, width);
  CHECK_MPI(MPI_Allreduce(&local, checksum, 1, MPI_UINT64_T, MPI_SUM, comm));
done:
  return rc;
}

int h5g_verify_share(MPI_Comm comm, void *keys, uint64_t n, uint64_t offset, const h5g_keyspec *ks,
                     h5g_verify_result *res) {
  int rc = H5G_OK, size;
  unsigned w = ks->width;
  uint64_t *edges = NULL;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  uint64_t local[3] = {n, 0, h5g_keys_checksum(keys, n, w)}, global[3];
  uint64_t first_bad = UINT64_MAX;
  h5g_keys_to_ordered(keys, n, ks);
  for (uint64_t i = 1; i < n; i++)
    if (h5g_key_load(keys, i - 1, w) > h5g_key_load(keys, i, w)) {
      if (!local[1]) first_bad = offset + i;
      local[1]++;
    }
  /* first and last key of every non-empty rank, to check the boundaries between ranks */
  uint64_t mine[4] = {n > 0, n ? h5g_key_load(keys, 0, w) : 0, n ? h5g_key_load(keys, n - 1, w) : 0,
                      offset};
  edges = malloc(4 * sizeof(uint64_t) * (size_t)size);
  CHECK(h5g_agree_alloc(comm, edges != NULL, 4 * sizeof(uint64_t) * (size_t)size));
  CHECK_MPI(MPI_Allgather(mine, 4, MPI_UINT64_T, edges, 4, MPI_UINT64_T, comm));
  CHECK_MPI(MPI_Allreduce(local, global, 3, MPI_UINT64_T, MPI_SUM, comm));
  CHECK_MPI(MPI_Allreduce(&first_bad, &res->first_bad, 1, MPI_UINT64_T, MPI_MIN, comm));
  int have_prev = 0;
  uint64_t prev_last = 0;
  for (int r = 0; r < size; r++) {
    const uint64_t *e = edges + 4 * r;
    if (!e[0]) continue;
    if (have_prev && prev_last > e[1]) {
      global[1]++;
      if (e[3] < res->first_bad) res->first_bad = e[3];
    }
    have_prev = 1;
    prev_last = e[2];
  }
  res->n = global[0];
  res->out_of_order = global[1];
  res->checksum = global[2];
done:
  free(edges);
  return rc;
}
