/* CPU LSD radix sort: one read pass builds every digit's histogram, then one scatter pass per
 * digit, ping-ponging between keys and scratch. A digit that is the same for every key (its
 * histogram has a single bucket holding all n keys) leaves the order unchanged, so its pass is
 * skipped: keys that differ only in a few bytes cost only those bytes' passes. */
#include "cpu/radix_sort.h"

#include <stdint.h>
#include <string.h>

#include "cpu/pingpong.h"

/* Tuning, with a 10^7-key uniform random sort on one core (bench/RESULTS.md, "CPU local sort"):
 * wider digits save passes but every pass got slower, so 8 bits (a 2 KiB histogram per digit
 * that stays in L1) for every width. Prefetching the bucket's write position ahead matters
 * most: without it each new destination cache line stalls on a read-for-ownership miss; 128
 * bytes ahead did as well as 256, and better than nearer or farther. */
enum {
  RADIX_DIGIT_BITS = 8,       /* bits per LSD pass */
  RADIX_PREFETCH_BYTES = 128, /* how far ahead of a bucket's write position to prefetch */
  /* every digit histogram of the widest key, on the stack (32 KiB): the sort allocates nothing */
  RADIX_COUNTS = ((128 + RADIX_DIGIT_BITS - 1) / RADIX_DIGIT_BITS) << RADIX_DIGIT_BITS
};

/* One implementation for keys alone and for key+value pairs: MOVE_VALUES is a constant 0 or 1,
 * so the keys-only instances compile to exactly the keys-only loops (values are NULL there).
 * LSD scatter passes keep the order of equal digits, so the pairs sort is stable.
 * counts holds `passes` histograms of `radix` buckets each. */
#define DEFINE_RADIX_SORT(NAME, T, BITS, MOVE_VALUES)                                             \
  static void NAME(void *keys_in, uint64_t *values, void *scratch_in, uint64_t *scratch_values,   \
                   size_t n) {                                                                    \
    T *const keys = keys_in;                                                                      \
    const unsigned digit_bits = RADIX_DIGIT_BITS;                                                 \
    const unsigned passes = (BITS + digit_bits - 1) / digit_bits;                                 \
    const size_t radix = (size_t)1 << digit_bits;                                                 \
    const T digit_mask = (T)(radix - 1);                                                          \
    const size_t prefetch_keys = RADIX_PREFETCH_BYTES / sizeof(T);                              \
    size_t counts[RADIX_COUNTS];                                                                  \
    memset(counts, 0, passes * radix * sizeof counts[0]);                                         \
    for (size_t i = 0; i < n; i++) {                                                              \
      const T key = keys[i];                                                                      \
      for (unsigned p = 0; p < passes; p++)                                                       \
        counts[p * radix + (size_t)((T)(key >> (p * digit_bits)) & digit_mask)]++;                \
    }                                                                                             \
    T *src = keys, *dst = scratch_in;                                                             \
    uint64_t *src_values = values, *dst_values = scratch_values;                                  \
    for (unsigned p = 0; p < passes; p++) {                                                       \
      const unsigned shift = p * digit_bits;                                                      \
      size_t *offsets = counts + p * radix;                                                       \
      if (offsets[(T)(src[0] >> shift) & digit_mask] == n) continue;                              \
      size_t running = 0;                                                                         \
      for (size_t d = 0; d < radix; d++) {                                                        \
        size_t count = offsets[d];                                                                \
        offsets[d] = running;                                                                     \
        running += count;                                                                         \
      }                                                                                           \
      for (size_t i = 0; i < n; i++) {                                                            \
        const T key = src[i];                                                                     \
        const size_t at = offsets[(T)(key >> shift) & digit_mask]++;                              \
        dst[at] = key;                                                                            \
        if (MOVE_VALUES) dst_values[at] = src_values[i];                                          \
        /* fetch this bucket's next cache lines before they are written: without it every new */ \
        /* line stalls on a read-for-ownership miss (bench/RESULTS.md, "CPU local sort") */      \
        const size_t ahead = at + prefetch_keys < n ? at + prefetch_keys : at;                    \
        __builtin_prefetch(dst + ahead, 1);                                                       \
        /* values too, the same number of elements ahead: without it the pairs sort stalls */     \
        /* the same way on the values' lines (bench/RESULTS.md, "CPU local sort") */              \
        if (MOVE_VALUES) __builtin_prefetch(dst_values + ahead, 1);                               \
      }                                                                                           \
      H5G_PINGPONG_SWAP(T, src, dst, src_values, dst_values);                                     \
    }                                                                                             \
    h5g_pingpong_finish(keys, src, sizeof(T), MOVE_VALUES ? values : NULL, src_values, n);        \
  }

DEFINE_RADIX_SORT(radix_sort_8, uint8_t, 8, 0)
DEFINE_RADIX_SORT(radix_sort_16, uint16_t, 16, 0)
DEFINE_RADIX_SORT(radix_sort_32, uint32_t, 32, 0)
DEFINE_RADIX_SORT(radix_sort_64, uint64_t, 64, 0)
DEFINE_RADIX_SORT(radix_sort_128, h5g_u128, 128, 0)
DEFINE_RADIX_SORT(radix_sort_pairs_8, uint8_t, 8, 1)
DEFINE_RADIX_SORT(radix_sort_pairs_16, uint16_t, 16, 1)
DEFINE_RADIX_SORT(radix_sort_pairs_32, uint32_t, 32, 1)
DEFINE_RADIX_SORT(radix_sort_pairs_64, uint64_t, 64, 1)
DEFINE_RADIX_SORT(radix_sort_pairs_128, h5g_u128, 128, 1)

typedef void radix_sort_fn(void *keys, uint64_t *values, void *scratch, uint64_t *scratch_values,
                           size_t n);

void h5g_radix_sort(void *keys, uint64_t *values, void *scratch, uint64_t *scratch_values,
                    size_t n, unsigned width) {
  /* [with values][width]: keys alone take the instances without value code */
  static radix_sort_fn *const sorts[2][5] = {
      {radix_sort_8, radix_sort_16, radix_sort_32, radix_sort_64, radix_sort_128},
      {radix_sort_pairs_8, radix_sort_pairs_16, radix_sort_pairs_32, radix_sort_pairs_64,
       radix_sort_pairs_128}};
  if (n < 2) return;
  sorts[values != NULL][h5g_width_index(width)](keys, values, scratch, scratch_values, n);
}
