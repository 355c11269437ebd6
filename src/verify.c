#include "src/verify.h"

#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "mpi/agree.h"
#include "mpi/reduce_u64.h"
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

void h5g_verify_begin(h5g_verify_state *s, int words, uint64_t offset, const h5g_keyspec *ks,
                      int strict, int threads) {
  memset(s, 0, sizeof *s);
  s->ks = ks;
  s->words = words;
  s->strict = strict;
  s->threads = threads;
  s->offset = offset;
  s->first_bad = UINT64_MAX;
}

/* One piece's keys split among threads, each part checksummed, transformed and its pairs
 * checked; the pairs across the parts' starts are checked once they are all transformed. */
typedef struct {
  const h5g_verify_state *s;
  void *const *keys;
  uint64_t n;
  uint64_t checksum[H5G_MAX_PARTS], out_of_order[H5G_MAX_PARTS], first_bad[H5G_MAX_PARTS];
} piece_job;

/* Whether pair (i - 1, i) of the piece is out of order (with strict, also equal). */
static int pair_bad(const h5g_verify_state *s, void *const *keys, uint64_t i) {
  return compare(keys, i - 1, keys, i, s->words, s->ks->width) >= 1 - s->strict;
}

/* Pair (i - 1, i) out of order: counted, and the first one kept (pairs taken in order). */
static void count_bad(const h5g_verify_state *s, void *const *keys, uint64_t i, uint64_t *bad,
                      uint64_t *first_bad) {
  if (pair_bad(s, keys, i) && !(*bad)++) *first_bad = i;
}

/* Keys of a part's block: its checksum, transform and order checks take it from the cache. */
enum { BLOCK_KEYS = 1 << 14 };

static void check_part(void *arg, int part, int parts) {
  piece_job *job = arg;
  const h5g_verify_state *s = job->s;
  unsigned w = s->ks->width;
  size_t begin, end;
  h5g_share(job->n, part, parts, &begin, &end);
  job->checksum[part] = job->out_of_order[part] = 0;
  job->first_bad[part] = UINT64_MAX;
  for (size_t from = begin; from < end; from += BLOCK_KEYS) {
    size_t to = end - from < BLOCK_KEYS ? end : from + BLOCK_KEYS, first;
    for (int k = 0; k < s->words; k++) {
      char *keys = (char *)job->keys[k] + from * w;
      job->checksum[part] += h5g_keys_checksum(keys, to - from, w);
      h5g_keys_to_ordered(keys, to - from, s->ks);
    }
    /* the block's pairs and the one across its start (one word: the typed loop) */
    size_t at = from > begin ? from - 1 : from;
    if (s->words == 1) {
      size_t bad = h5g_keys_out_of_order((char *)job->keys[0] + at * w, to - at, w, s->strict,
                                         &first);
      if (bad && !job->out_of_order[part]) job->first_bad[part] = at + first;
      job->out_of_order[part] += bad;
    } else {
      for (uint64_t i = at + 1; i < to; i++)
        count_bad(s, job->keys, i, &job->out_of_order[part], &job->first_bad[part]);
    }
  }
}

/* Keys at least this many per thread: fewer are checked faster on fewer threads. */
enum { PART_MIN_KEYS = 1 << 16 };

void h5g_verify_piece(h5g_verify_state *s, void *const *keys, uint64_t n) {
  if (!n) return;
  unsigned w = s->ks->width;
  piece_job job = {s, keys, n, {0}, {0}, {0}};
  /* as many parts as h5g_parallel runs, each with its slot of the job's tables */
  int parts = h5g_parts(n, PART_MIN_KEYS, s->threads < H5G_MAX_PARTS ? s->threads : H5G_MAX_PARTS);
  h5g_parallel(parts, check_part, &job);
  uint64_t bad = 0, first_bad = UINT64_MAX;
  for (int p = 0; p < parts; p++) {
    size_t begin, end;
    h5g_share(n, p, parts, &begin, &end);
    s->checksum += job.checksum[p];
    bad += job.out_of_order[p];
    if (job.first_bad[p] < first_bad) first_bad = job.first_bad[p];
    /* the pair across the part's start, which comes before any of the part's own */
    if (p > 0 && begin < end && pair_bad(s, keys, begin)) {
      bad++;
      if (begin < first_bad) first_bad = begin;
    }
  }
  /* the pair across the piece's start: the last key of the piece before */
  void *last[H5G_MAX_KEYS];
  for (int k = 0; k < s->words; k++) last[k] = &s->last[k];
  if (s->n && compare(last, 0, keys, 0, s->words, w) >= 1 - s->strict) {
    bad++;
    first_bad = 0;
  }
  for (int k = 0; k < s->words; k++) {
    if (!s->n) memcpy(&s->first[k], keys[k], w);
    memcpy(&s->last[k], (const char *)keys[k] + (n - 1) * w, w);
  }
  if (bad && !s->out_of_order) s->first_bad = s->offset + s->n + first_bad;
  s->out_of_order += bad;
  s->n += n;
}

int h5g_verify_share(MPI_Comm comm, void *const *keys, int words, uint64_t n, uint64_t offset,
                     const h5g_keyspec *ks, int strict, h5g_verify_result *res) {
  h5g_verify_state s;
  h5g_verify_begin(&s, words, offset, ks, strict, 1);
  h5g_verify_piece(&s, keys, n);
  return h5g_verify_end(comm, &s, res);
}

int h5g_verify_end(MPI_Comm comm, const h5g_verify_state *s, h5g_verify_result *res) {
  int rc = H5G_OK, size, words = s->words;
  unsigned w = s->ks->width;
  size_t slots = h5g_key_slots(w);
  size_t edge_words = 2 + 2 * (size_t)words * slots; /* has keys, offset, first key, last key */
  uint64_t *edges = NULL, *mine = NULL;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  uint64_t local[3] = {s->n, s->out_of_order, s->checksum}, global[3];
  /* first and last key of every non-empty rank, to check the boundaries between ranks */
  edges = malloc(edge_words * sizeof(uint64_t) * ((size_t)size + 1));
  CHECK(h5g_agree_alloc(comm, edges != NULL, edge_words * sizeof(uint64_t) * ((size_t)size + 1)));
  mine = edges + edge_words * (size_t)size;
  memset(mine, 0, edge_words * sizeof(uint64_t));
  mine[0] = s->n > 0;
  mine[1] = s->offset;
  for (int k = 0; s->n && k < words; k++) {
    memcpy(mine + 2 + k * slots, &s->first[k], w);
    memcpy(mine + 2 + (words + k) * slots, &s->last[k], w);
  }
  CHECK_MPI(MPI_Allgather(mine, (int)edge_words, MPI_UINT64_T, edges, (int)edge_words, MPI_UINT64_T,
                          comm));
  CHECK_MPI(MPI_Allreduce(local, global, 3, MPI_UINT64_T, MPI_SUM, comm));
  CHECK(h5g_allreduce_u64(comm, &s->first_bad, &res->first_bad, 1, H5G_REDUCE_MIN));
  const uint64_t *prev = NULL;
  for (int r = 0; r < size; r++) {
    const uint64_t *e = edges + edge_words * (size_t)r;
    if (!e[0]) continue;
    void *last[H5G_MAX_KEYS], *first[H5G_MAX_KEYS];
    for (int k = 0; prev && k < words; k++) {
      last[k] = (void *)(prev + 2 + (words + k) * slots);
      first[k] = (void *)(e + 2 + k * slots);
    }
    if (prev && compare(last, 0, first, 0, words, w) >= 1 - s->strict) {
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
