/* CPU LSD radix sort: one read pass builds every digit's histogram, then one scatter pass per
 * digit, ping-ponging between keys and scratch. A digit that is the same for every key (its
 * histogram has a single bucket holding all n keys) leaves the order unchanged, so its pass is
 * skipped: keys that differ only in a few bytes cost only those bytes' passes. */
#include "src/radix_sort.h"

#include <stdint.h>
#include <string.h>

/* Tuning, measured with a 10^7-key uniform random sort on the 2-core dev machine (Intel Xeon VM,
 * one core, M keys/s, noisy: other builds were running):
 *   digit bits:       8     11     16        prefetch bytes (4-byte keys, 8-bit digits):
 *   2-byte keys:    226    180    147          none 42, 64: 74, 128: 76, 256: 76, 512: 50
 *   4-byte keys:     74     70     59
 *   8-byte keys:     32     32     34
 * Wider digits save passes but every pass got slower, so 8 bits (a 2 KiB histogram per digit
 * that stays in L1) for every width. Prefetching the bucket's write position ahead matters
 * most: without it each new destination cache line stalls on a read-for-ownership miss. */
enum {
  RADIX_DIGIT_BITS = 8,       /* bits per LSD pass */
  RADIX_PREFETCH_BYTES = 128, /* how far ahead of a bucket's write position to prefetch */
  /* every digit histogram of the widest key, on the stack (16 KiB): the sort allocates nothing */
  RADIX_COUNTS = ((64 + RADIX_DIGIT_BITS - 1) / RADIX_DIGIT_BITS) << RADIX_DIGIT_BITS
};

/* counts holds `passes` histograms of `radix` buckets each. */
#define DEFINE_RADIX_SORT(T, BITS)                                                                \
  static void radix_sort_##BITS(T *keys, T *scratch, size_t n) {                                  \
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
    T *src = keys, *dst = scratch;                                                                \
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
        /* fetch this bucket's next cache lines before they are written: without it every new */ \
        /* line stalls on a read-for-ownership miss (a pass ran 3x slower) */                    \
        const size_t ahead = at + prefetch_keys;                                                  \
        __builtin_prefetch(dst + (ahead < n ? ahead : at), 1);                                    \
      }                                                                                           \
      T *swap = src;                                                                              \
      src = dst;                                                                                  \
      dst = swap;                                                                                 \
    }                                                                                             \
    if (src != keys) memcpy(keys, src, n * sizeof(T));                                            \
  }

DEFINE_RADIX_SORT(uint8_t, 8)
DEFINE_RADIX_SORT(uint16_t, 16)
DEFINE_RADIX_SORT(uint32_t, 32)
DEFINE_RADIX_SORT(uint64_t, 64)

void h5g_radix_sort(void *keys, void *scratch, size_t n, unsigned width) {
  if (n < 2) return;
  switch (width) {
  case 1: radix_sort_8(keys, scratch, n); break;
  case 2: radix_sort_16(keys, scratch, n); break;
  case 4: radix_sort_32(keys, scratch, n); break;
  default: radix_sort_64(keys, scratch, n); break;
  }
}
