/* CPU merge of sorted runs: a pairwise merge tree. Level L merges groups of 2^L runs pairwise,
 * reading from one buffer and writing to the other, so ceil(log2(nruns)) passes move every key
 * once each; a group's bounds come straight from run_offsets, so no extra memory is needed. */
#include "cpu/merge.h"

#include <string.h>

#include "cpu/pingpong.h"

/* One implementation for keys alone and for key+value pairs: MOVE_VALUES is a constant 0 or 1,
 * so the keys-only instances compile to exactly the keys-only loops (values are NULL there). */
#define DEFINE_MERGE(NAME, T, MOVE_VALUES)                                                        \
  /* Merges the sorted ranges a[0..na) and b[0..nb) (values va, vb) into out (out_values). */     \
  static void NAME##_two(const T *a, const uint64_t *va, size_t na, const T *b,                   \
                         const uint64_t *vb, size_t nb, T *out, uint64_t *out_values) {           \
    size_t i = 0, j = 0, o = 0;                                                                   \
    while (i < na && j < nb) {                                                                    \
      /* branch-free select: merge comparisons are unpredictable on random data */                \
      const T x = a[i], y = b[j];                                                                 \
      const int take_b = y < x; /* ties take a first: the merge is stable */                      \
      if (MOVE_VALUES) out_values[o] = take_b ? vb[j] : va[i];                                    \
      out[o++] = take_b ? y : x;                                                                  \
      j += (size_t)take_b;                                                                        \
      i += (size_t)!take_b;                                                                       \
    }                                                                                             \
    memcpy(out + o, a + i, (na - i) * sizeof(T));                                                 \
    memcpy(out + o + (na - i), b + j, (nb - j) * sizeof(T));                                      \
    if (MOVE_VALUES) {                                                                            \
      memcpy(out_values + o, va + i, (na - i) * sizeof(uint64_t));                                \
      memcpy(out_values + o + (na - i), vb + j, (nb - j) * sizeof(uint64_t));                     \
    }                                                                                             \
  }                                                                                               \
                                                                                                  \
  static void NAME(void *keys_in, uint64_t *values, void *scratch_in, uint64_t *scratch_values,   \
                   size_t n, const uint64_t *run_offsets, size_t nruns) {                         \
    T *const keys = keys_in;                                                                      \
    T *src = keys, *dst = scratch_in;                                                             \
    uint64_t *src_values = values, *dst_values = scratch_values;                                  \
    for (size_t group = 1; group < nruns; group *= 2) {                                           \
      for (size_t first = 0; first < nruns; first += 2 * group) {                                 \
        const size_t mid_run = first + group < nruns ? first + group : nruns;                     \
        const size_t end_run = first + 2 * group < nruns ? first + 2 * group : nruns;             \
        const size_t begin = (size_t)run_offsets[first];                                          \
        const size_t mid = (size_t)run_offsets[mid_run];                                          \
        const size_t end = (size_t)run_offsets[end_run];                                          \
        /* keys-only: the value pointers stay NULL, and NULL + offset is undefined */             \
        NAME##_two(src + begin, MOVE_VALUES ? src_values + begin : NULL, mid - begin, src + mid,  \
                   MOVE_VALUES ? src_values + mid : NULL, end - mid, dst + begin,                 \
                   MOVE_VALUES ? dst_values + begin : NULL);                                      \
      }                                                                                           \
      H5G_PINGPONG_SWAP(T, src, dst, src_values, dst_values);                                     \
    }                                                                                             \
    h5g_pingpong_finish(keys, src, sizeof(T), MOVE_VALUES ? values : NULL, src_values, n);        \
  }

DEFINE_MERGE(merge_runs_8, uint8_t, 0)
DEFINE_MERGE(merge_runs_16, uint16_t, 0)
DEFINE_MERGE(merge_runs_32, uint32_t, 0)
DEFINE_MERGE(merge_runs_64, uint64_t, 0)
DEFINE_MERGE(merge_runs_128, h5g_u128, 0)
DEFINE_MERGE(merge_runs_pairs_8, uint8_t, 1)
DEFINE_MERGE(merge_runs_pairs_16, uint16_t, 1)
DEFINE_MERGE(merge_runs_pairs_32, uint32_t, 1)
DEFINE_MERGE(merge_runs_pairs_64, uint64_t, 1)
DEFINE_MERGE(merge_runs_pairs_128, h5g_u128, 1)

typedef void merge_runs_fn(void *keys, uint64_t *values, void *scratch, uint64_t *scratch_values,
                           size_t n, const uint64_t *run_offsets, size_t nruns);

void h5g_merge_runs(void *keys, uint64_t *values, void *scratch, uint64_t *scratch_values,
                    size_t n, unsigned width, const uint64_t *run_offsets, size_t nruns) {
  /* [with values][width]: keys alone take the instances without value code */
  static merge_runs_fn *const merges[2][5] = {
      {merge_runs_8, merge_runs_16, merge_runs_32, merge_runs_64, merge_runs_128},
      {merge_runs_pairs_8, merge_runs_pairs_16, merge_runs_pairs_32, merge_runs_pairs_64,
       merge_runs_pairs_128}};
  if (n == 0) return; /* the buffers may then be NULL */
  merges[values != NULL][h5g_width_index(width)](keys, values, scratch, scratch_values, n,
                                             run_offsets, nruns);
}
