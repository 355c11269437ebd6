#include "src/verify.h"

#include <stdlib.h>
#include <string.h>

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

/* Compares key i of a and key j of b (each `words` arrays): -1, 0 or 1. */
static int compare(void *const *a, uint64_t i, void *const *b, uint64_t j, int words, unsigned w) {
  for (int k = 0; k < words; k++) {
    h5g_u128 x = h5g_key_load(a[k], i, w), y = h5g_key_load(b[k], j, w);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

int h5g_verify_share(MPI_Comm comm, void *const *keys, int words, uint64_t n, uint64_t offset,
                     const h5g_keyspec *ks, int strict, h5g_verify_result *res) {
  int rc = H5G_OK, size;
  unsigned w = ks->width;
  size_t slots = h5g_key_slots(w);
  size_t edge_words = 2 + 2 * (size_t)words * slots; /* has keys, offset, first key, last key */
  uint64_t *edges = NULL, *mine = NULL;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  uint64_t local[3] = {n, 0, 0}, global[3];
  uint64_t first_bad = UINT64_MAX;
  for (int k = 0; k < words; k++) {
    local[2] += h5g_keys_checksum(keys[k], n, w);
    h5g_keys_to_ordered(keys[k], n, ks);
  }
  for (uint64_t i = 1; i < n; i++)
    if (compare(keys, i - 1, keys, i, words, w) >= 1 - strict) {
      if (!local[1]) first_bad = offset + i;
      local[1]++;
    }
  /* first and last key of every non-empty rank, to check the boundaries between ranks */
  edges = malloc(edge_words * sizeof(uint64_t) * ((size_t)size + 1));
  CHECK(h5g_agree_alloc(comm, edges != NULL, edge_words * sizeof(uint64_t) * ((size_t)size + 1)));
  mine = edges + edge_words * (size_t)size;
  memset(mine, 0, edge_words * sizeof(uint64_t));
  mine[0] = n > 0;
  mine[1] = offset;
  for (int k = 0; n && k < words; k++) {
    memcpy(mine + 2 + k * slots, keys[k], w);
    memcpy(mine + 2 + (words + k) * slots, (const char *)keys[k] + (n - 1) * w, w);
  }
  CHECK_MPI(MPI_Allgather(mine, (int)edge_words, MPI_UINT64_T, edges, (int)edge_words, MPI_UINT64_T,
                          comm));
  CHECK_MPI(MPI_Allreduce(local, global, 3, MPI_UINT64_T, MPI_SUM, comm));
  CHECK_MPI(MPI_Allreduce(&first_bad, &res->first_bad, 1, MPI_UINT64_T, MPI_MIN, comm));
  const uint64_t *prev = NULL;
  for (int r = 0; r < size; r++) {
    const uint64_t *e = edges + edge_words * (size_t)r;
    if (!e[0]) continue;
    void *last[H5G_MAX_KEYS], *first[H5G_MAX_KEYS];
    for (int k = 0; prev && k < words; k++) {
      last[k] = (void *)(prev + 2 + (words + k) * slots);
      first[k] = (void *)(e + 2 + k * slots);
    }
    if (prev && compare(last, 0, first, 0, words, w) >= 1 - strict) {
      global[1]++;
      if (e[1] < res->first_bad) res->first_bad = e[1];
    }
    prev = e;
  }
  res->n = global[0];
  res->out_of_order = global[1];
  res->checksum = global[2];
done:
  free(edges);
  return rc;
}
