/* CPU merge of sorted runs: a pairwise merge tree. Level L merges groups of 2^L runs pairwise,
 * reading from one buffer and writing to the other, so ceil(log2(nruns)) passes move every key
 * once each; a group's bounds come straight from run_offsets, so no extra memory is needed. */
#include "src/merge.h"

#include <string.h>

#define DEFINE_MERGE(T, BITS)                                                                     \
  /* Merges the sorted ranges a[0..na) and b[0..nb) into out. */                                  \
  static void merge_two_##BITS(const T *a, size_t na, const T *b, size_t nb, T *out) {            \
    size_t i = 0, j = 0, o = 0;                                                                   \
    while (i < na && j < nb) {                                                                    \
      /* branch-free select: merge comparisons are unpredictable on random data */                \
      const T x = a[i], y = b[j];                                                                 \
      const int take_b = y < x; /* ties take a first: the merge is stable */                      \
      out[o++] = take_b ? y : x;                                                                  \
      j += (size_t)take_b;                                                                        \
      i += (size_t)!take_b;                                                                       \
    }                                                                                             \
    memcpy(out + o, a + i, (na - i) * sizeof(T));                                                 \
    memcpy(out + o + (na - i), b + j, (nb - j) * sizeof(T));                                      \
  }                                                                                               \
                                                                                                  \
  static void merge_runs_##BITS(T *keys, T *scratch, size_t n, const uint64_t *run_offsets,       \
                                size_t nruns) {                                                   \
    T *src = keys, *dst = scratch;                                                                \
    for (size_t group = 1; group < nruns; group *= 2) {                                           \
      for (size_t first = 0; first < nruns; first += 2 * group) {                                 \
        const size_t mid_run = first + group < nruns ? first + group : nruns;                     \
        const size_t end_run = first + 2 * group < nruns ? first + 2 * group : nruns;             \
        const size_t begin = (size_t)run_offsets[first];                                          \
        const size_t mid = (size_t)run_offsets[mid_run];                                          \
        const size_t end = (size_t)run_offsets[end_run];                                          \
        merge_two_##BITS(src + begin, mid - begin, src + mid, end - mid, dst + begin);            \
      }                                                                                           \
      T *swap = src;                                                                              \
      src = dst;                                                                                  \
      dst = swap;                                                                                 \
    }                                                                                             \
    if (src != keys) memcpy(keys, src, n * sizeof(T));                                            \
  }

DEFINE_MERGE(uint8_t, 8)
DEFINE_MERGE(uint16_t, 16)
DEFINE_MERGE(uint32_t, 32)
DEFINE_MERGE(uint64_t, 64)

void h5g_merge_runs(void *keys, void *scratch, size_t n, unsigned width,
                    const uint64_t *run_offsets, size_t nruns) {
  if (n == 0) return; /* keys and scratch may then be NULL */
  switch (width) {
  case 1: merge_runs_8(keys, scratch, n, run_offsets, nruns); break;
  case 2: merge_runs_16(keys, scratch, n, run_offsets, nruns); break;
  case 4: merge_runs_32(keys, scratch, n, run_offsets, nruns); break;
  default: merge_runs_64(keys, scratch, n, run_offsets, nruns); break;
  }
}
