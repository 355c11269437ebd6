/* --unique: one element per distinct key (composed key: a key tuple with numpy's equality,
 * src/keyset.h), the first of its group in the stable order, i.e. the earliest in the input, and
 * with --counts the size of its group. Equal keys lie together in the sorted output, but a group
 * may span ranks: every rank learns the first and last key of every other rank, keeps a group
 * only where it starts, and counts the rest of a group that goes on in the ranks after it. The
 * kept elements are packed at the front of the sorted share, which then shrinks. Keys of several
 * composed words (src/passes.c): the sorted keys are word 0, the other words are fetched in the
 * sorted order, and a key is all of its words.
 *
 * Before the exchange, where the sorted runs are in host memory (not on the GPU-resident path)
 * and the key is one word, each run already keeps only the first of each of its groups
 * (h5g_unique_runs): only distinct keys of a run travel, are merged and compared again after the
 * merge. With --counts the values then travel as the runs' group sizes, summed after the merge
 * (a gather of counts by source index, random accesses, would cost more than the cut saves):
 * that needs values free of source indices, so --counts with --carry, --index-out, fetched keys
 * (floats, tables, 2-D rows) keeps every row until after the merge.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/host_memory.h"
#include "mpi/agree.h"
#include "mpi/topology.h"
#include "src/unique.h"

#include "src/merge_runs.h"
#include "src/passes.h"

/* An edge of a rank: whether it holds keys, how many, the length of its first group and the
 * count of the elements in it, then its first and its last key (h5g_key_slots words per composed
 * word). */
enum { EDGE_HAS, EDGE_N, EDGE_FIRST_LENGTH, EDGE_FIRST_COUNT, EDGE_KEYS };

typedef struct {
  void *word[H5G_MAX_KEYS]; /* the sorted keys, word by word */
  int words;
  unsigned width;
} sorted_keys;


static int same_key(const sorted_keys *k, uint64_t i, uint64_t j) {
  for (int w = 0; w < k->words; w++)
    if (h5g_key_load(k->word[w], i, k->width) != h5g_key_load(k->word[w], j, k->width)) return 0;
  return 1;
}

/* Keys equal to key `begin` from begin on. */
static uint64_t group_length(const sorted_keys *k, uint64_t begin, uint64_t n) {
  uint64_t end = begin + 1;
  while (end < n && same_key(k, begin, end)) end++;
  return end - begin;
}

/* Packs the first element of each group of equal keys of [begin, end) at `kept` on (keys of
 * `width` bytes, word 0 of k; `values` moved with them unless NULL) and writes each group's count
 * (the sum of its `weights`, or its length when NULL) to counts[kept] unless NULL (counts may be
 * values: it then takes the count). Returns the new `kept`. Typed loops for one word: a call per
 * comparison made this packing the slowest step of --unique
 * (bench/RESULTS.md, "--top and --unique on 2^30 u4"). */
#define PACK_GROUPS(T, SAME)                                                                      \
  do {                                                                                            \
    T *keys_ = (T *)k->word[0];                                                                   \
    for (uint64_t i = begin; i < end;) {                                                          \
      uint64_t j = i + 1, count = weights ? weights[i] : 1;                                       \
      for (; j < end && SAME(j, i); j++) count += weights ? weights[j] : 1;                        \
      keys_[kept] = keys_[i];                                                                     \
      if (values) values[kept] = values[i];                                                       \
      if (counts) counts[kept] = count;                                                           \
      kept++;                                                                                     \
      i = j;                                                                                      \
    }                                                                                             \
  } while (0)
#define SAME_KEY(j, i) (keys_[j] == keys_[i])
#define SAME_WORDS(j, i) same_key(k, j, i)
#define PACK_BY_WIDTH(SAME)                                                                       \
  switch (k->width) {                                                                             \
  case 1: PACK_GROUPS(uint8_t, SAME); break;                                                      \
  case 2: PACK_GROUPS(uint16_t, SAME); break;                                                     \
  case 4: PACK_GROUPS(uint32_t, SAME); break;                                                     \
  case 8: PACK_GROUPS(uint64_t, SAME); break;                                                     \
  default: PACK_GROUPS(h5g_u128, SAME); break;                                                    \
  }
static uint64_t pack_groups(const sorted_keys *k, uint64_t *values, const uint64_t *weights,
                            uint64_t *counts, uint64_t begin, uint64_t end, uint64_t kept) {
  if (k->words > 1) { /* words of 16 bytes */
    PACK_GROUPS(h5g_u128, SAME_WORDS);
  } else {
    PACK_BY_WIDTH(SAME_KEY)
  }
  return kept;
}

/* The elements that `len` keys from `begin` stand for: `len`, or their counts from the pass
 * before the exchange. */
static uint64_t group_count(const uint64_t *counts, uint64_t begin, uint64_t len) {
  uint64_t sum = 0;
  if (!counts) return len;
  for (uint64_t i = begin; i < begin + len; i++) sum += counts[i];
  return sum;
}

static const uint64_t *edge_first(const uint64_t *e) { return e + EDGE_KEYS; }
static const uint64_t *edge_last(const uint64_t *e, size_t slots) { return e + EDGE_KEYS + slots; }
/* Edge keys are equal when their bytes are: the slots are zeroed before a key is copied in. */
static int same_edge_key(const uint64_t *a, const uint64_t *b, size_t slots) {
  return memcmp(a, b, slots * sizeof(uint64_t)) == 0;
}

/* Of the ranks after `rank`: how many elements continue the group of key `last`. */
static uint64_t continued_after(const uint64_t *edges, size_t edge_words, size_t slots, int rank,
                                int size, const uint64_t *last) {
  uint64_t more = 0;
  for (int s = rank + 1; s < size; s++) {
    const uint64_t *e = edges + (size_t)s * edge_words;
    if (!e[EDGE_HAS]) continue;
    if (!same_edge_key(edge_first(e), last, slots)) break;
    more += e[EDGE_FIRST_COUNT];
    if (e[EDGE_FIRST_LENGTH] < e[EDGE_N]) break; /* the group ends on rank s */
  }
  return more;
}

/* True when the nearest rank before `rank` holding keys ends with key `first`. */
static int continues_before(const uint64_t *edges, size_t edge_words, size_t slots, int rank,
                            const uint64_t *first) {
  for (int s = rank - 1; s >= 0; s--) {
    const uint64_t *e = edges + (size_t)s * edge_words;
    if (e[EDGE_HAS]) return same_edge_key(edge_last(e, slots), first, slots);
  }
  return 0;
}

/* Collective: keeps the first of every group, with its count (`counts`: what each sorted element
 * stands for, NULL: itself). */
static int keep_groups(const h5g_run *r, const sorted_keys *k, const uint64_t *counts,
                       h5g_data *d, h5g_extent *e) {
  int rc = H5G_OK;
  unsigned w = k->width;
  uint64_t n = e->out_n, *edges = NULL;
  size_t word_slots = h5g_key_slots(w), slots = (size_t)k->words * word_slots;
  size_t edge_words = EDGE_KEYS + 2 * slots;
  size_t edges_bytes = ((size_t)r->size + 1) * edge_words * sizeof(uint64_t);
  edges = malloc(edges_bytes);
  d->counts = r->opt->counts ? h5g_bulk_alloc(n * sizeof(uint64_t)) : NULL; /* spills */
  CHECK(h5g_agree_alloc(r->comm, edges && (d->counts || !r->opt->counts),
                        edges_bytes + n * sizeof(uint64_t)));
  uint64_t *mine = edges + (size_t)r->size * edge_words;
  memset(mine, 0, edge_words * sizeof(uint64_t));
  mine[EDGE_HAS] = n > 0;
  mine[EDGE_N] = n;
  mine[EDGE_FIRST_LENGTH] = n ? group_length(k, 0, n) : 0;
  mine[EDGE_FIRST_COUNT] = group_count(counts, 0, mine[EDGE_FIRST_LENGTH]);
  for (int word = 0; n && word < k->words; word++) {
    memcpy(mine + EDGE_KEYS + word * word_slots, k->word[word], w);
    memcpy(mine + EDGE_KEYS + slots + word * word_slots, (const char *)k->word[word] + (n - 1) * w,
           w);
  }
  CHECK_MPI(MPI_Allgather(mine, (int)edge_words, MPI_UINT64_T, edges, (int)edge_words,
                          MPI_UINT64_T, r->comm));
  uint64_t i = n && continues_before(edges, edge_words, slots, r->rank, edge_first(mine))
                   ? mine[EDGE_FIRST_LENGTH] : 0;
  uint64_t kept = pack_groups(k, d->sorted_values, counts, d->counts, i, n, 0);
  if (kept && d->counts)
    d->counts[kept - 1] +=
        continued_after(edges, edge_words, slots, r->rank, r->size, edge_last(mine, slots));
  uint64_t before = 0;
  CHECK_MPI(MPI_Exscan(&kept, &before, 1, MPI_UINT64_T, MPI_SUM, r->comm));
  CHECK_MPI(MPI_Allreduce(&kept, &e->out_total, 1, MPI_UINT64_T, MPI_SUM, r->comm));
  e->out_offset = r->rank == 0 ? 0 : before; /* MPI_Exscan leaves rank 0's undefined */
  e->out_n = kept;
done:
  free(edges);
  return rc;
}

/* The groups of the runs are cut down before the exchange (the same on every rank). */
static int runs_cut_down(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan) {
  int source_needed = h5g_options_moves_records(r->opt) ||
                      (v->composed && h5g_keyset_by_index(&v->layout));
  return r->opt->unique && plan->path != H5G_PATH_DEVICE_RESIDENT &&
         !(v->composed && v->layout.words > 1) &&
         !(r->opt->counts && source_needed);
}

int h5g_unique_runs(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, h5g_data *d,
                    h5g_extent *e) {
  int rc = H5G_OK;
  sorted_keys k = {{d->keys}, 1, plan->ks.width};
  uint64_t kept = 0, *offsets = d->runs;
  if (!runs_cut_down(r, v, plan)) goto done;
  for (size_t j = 0; j < plan->nruns; j++) {
    uint64_t begin = offsets[j];
    offsets[j] = kept;
    /* with --counts the values become the counts (src/plan.c makes values then) */
    kept = r->opt->counts ? pack_groups(&k, NULL, NULL, d->values, begin, offsets[j + 1], kept)
                          : pack_groups(&k, d->values, NULL, NULL, begin, offsets[j + 1], kept);
  }
  offsets[plan->nruns] = kept;
  d->values_are_counts = r->opt->counts != NULL;
  CHECK_MPI(MPI_Allreduce(&kept, &e->total, 1, MPI_UINT64_T, MPI_SUM, r->comm));
  e->out_offset = h5g_share_begin((uint64_t)r->rank, e->total, (uint64_t)r->size);
  e->out_n = h5g_share_begin((uint64_t)r->rank + 1, e->total, (uint64_t)r->size) - e->out_offset;
  e->out_total = e->total;
done:
  return rc;
}

int h5g_unique(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, h5g_data *d,
               h5g_extent *e) {
  int rc = H5G_OK;
  sorted_keys k = {{d->sorted}, v->composed ? v->layout.words : 1, plan->ks.width};
  size_t bytes = e->out_n * plan->ks.width;
  STEP(r, H5G_PHASE_MERGE, h5g_merge_wait(r, plan, e));
  for (int word = 1; word < k.words; word++) {
    k.word[word] = malloc(bytes ? bytes : 1);
    STEP(r, H5G_PHASE_MERGE, h5g_agree_alloc(r->comm, k.word[word] != NULL, bytes));
    CHECK(h5g_passes_word_in_order(r, v, plan, word, d->sorted_values, e->out_n, k.word[word],
                                   NULL));
  }
  STEP(r, H5G_PHASE_MERGE,
       keep_groups(r, &k, d->values_are_counts ? d->sorted_values : NULL, d, e));
done:
  for (int word = 1; word < k.words; word++) free(k.word[word]);
  return rc;
}
