/* --unique: one element per distinct key (composed key: a key tuple with numpy's equality,
 * src/keyset.h), the first of its group in the stable order, i.e. the earliest in the input, and
 * with --counts the size of its group. Equal keys lie together in the sorted output, but a group
 * may span ranks: every rank learns the first and last key of every other rank, keeps a group
 * only where it starts, and counts the rest of a group that goes on in the ranks after it. The
 * kept elements are packed at the front of the sorted share, which then shrinks. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "mpi/agree.h"
#include "src/run.h"

enum { EDGE_HAS, EDGE_FIRST, EDGE_LAST, EDGE_FIRST_COUNT, EDGE_N, EDGE_WORDS };

/* Keys equal to keys[begin] from begin on. */
static uint64_t group_length(const void *keys, uint64_t begin, uint64_t n, unsigned w) {
  uint64_t key = h5g_key_load(keys, begin, w), end = begin + 1;
  while (end < n && h5g_key_load(keys, end, w) == key) end++;
  return end - begin;
}

/* Of the ranks after `rank`: how many elements continue the group of key `last`. */
static uint64_t continued_after(const uint64_t *edges, int rank, int size, uint64_t last) {
  uint64_t more = 0;
  for (int s = rank + 1; s < size; s++) {
    const uint64_t *e = edges + (size_t)s * EDGE_WORDS;
    if (!e[EDGE_HAS]) continue;
    if (e[EDGE_FIRST] != last) break;
    more += e[EDGE_FIRST_COUNT];
    if (e[EDGE_FIRST_COUNT] < e[EDGE_N]) break; /* the group ends on rank s */
  }
  return more;
}

/* True when the nearest rank before `rank` holding keys ends with key `first`. */
static int continues_before(const uint64_t *edges, int rank, uint64_t first) {
  for (int s = rank - 1; s >= 0; s--) {
    const uint64_t *e = edges + (size_t)s * EDGE_WORDS;
    if (e[EDGE_HAS]) return e[EDGE_LAST] == first;
  }
  return 0;
}

int h5g_unique(h5g_run *r) {
  int rc = H5G_OK;
  h5g_plan *plan = &r->plan;
  h5g_data *d = &r->data;
  unsigned w = plan->ks.width;
  uint64_t n = plan->out_n, *edges = NULL;
  size_t edges_bytes = (size_t)r->size * EDGE_WORDS * sizeof(uint64_t);
  /* on the resident path the sorted share is still coming back from the GPU */
  if (plan->path == H5G_PATH_DEVICE_RESIDENT) CHECK(h5g_agree(r->comm, r->be->wait_copied(r->be, n)));
  edges = malloc(edges_bytes);
  d->counts = r->opt->counts ? malloc(n ? n * sizeof(uint64_t) : 1) : NULL;
  CHECK(h5g_agree_alloc(r->comm, edges && (d->counts || !r->opt->counts),
                        edges_bytes + n * sizeof(uint64_t)));
  char *keys = d->sorted;
  uint64_t mine[EDGE_WORDS] = {n > 0, n ? h5g_key_load(keys, 0, w) : 0,
                               n ? h5g_key_load(keys, n - 1, w) : 0, n ? group_length(keys, 0, n, w) : 0, n};
  CHECK_MPI(MPI_Allgather(mine, EDGE_WORDS, MPI_UINT64_T, edges, EDGE_WORDS, MPI_UINT64_T, r->comm));
  uint64_t i = n && continues_before(edges, r->rank, mine[EDGE_FIRST]) ? mine[EDGE_FIRST_COUNT] : 0;
  uint64_t kept = 0;
  while (i < n) {
    uint64_t len = group_length(keys, i, n, w);
    memmove(keys + kept * w, keys + i * w, w);
    if (d->sorted_values) d->sorted_values[kept] = d->sorted_values[i];
    if (d->counts) d->counts[kept] = len;
    kept++;
    i += len;
  }
  if (kept && d->counts) d->counts[kept - 1] += continued_after(edges, r->rank, r->size, mine[EDGE_LAST]);
  uint64_t before = 0;
  CHECK_MPI(MPI_Exscan(&kept, &before, 1, MPI_UINT64_T, MPI_SUM, r->comm));
  CHECK_MPI(MPI_Allreduce(&kept, &plan->out_total, 1, MPI_UINT64_T, MPI_SUM, r->comm));
  plan->out_offset = r->rank == 0 ? 0 : before; /* MPI_Exscan leaves rank 0's undefined */
  plan->out_n = kept;
done:
  free(edges);
  return rc;
}
