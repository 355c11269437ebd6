/* Pieces every step of the onesweep radix sort (radix_sort.cuh) shares: the look-back entry's
 * layout, what the host reads back after the histogram, the pass launches' portions and the
 * scratch layout. */
#ifndef H5G_ONESWEEP_COMMON_CUH
#define H5G_ONESWEEP_COMMON_CUH

#include <stddef.h>
#include <stdint.h>

#include "kernels/tuning.cuh"
#include "kernels/util.cuh"

namespace h5g {
namespace onesweep {

/* One pass per key byte: 16 for the widest (128-bit) keys. */
constexpr int MAX_PASSES = 16;
/* Look-back entry: an epoch bit and 2 status bits over a 29-bit digit count. Launches of a sort
 * alternate epochs, so an entry of the launch before reads as not yet published and the table is
 * cleared once per sort, not before every launch (radix_sort.cuh: Driver::run_pass). */
constexpr uint32_t LOOKBACK_AGGREGATE = 1u << 29;
constexpr uint32_t LOOKBACK_INCLUSIVE = 2u << 29;
constexpr uint32_t LOOKBACK_EPOCH = 4u << 29;
constexpr uint32_t LOOKBACK_VALUE = (1u << 29) - 1;
constexpr int LOOKBACK_WINDOW = 4;

/* What the host reads back after the histogram: differ[b], how many neighbours of the sorted
 * sample differ first in byte b (sample_differences, every entry), and digits[pass], how many
 * digits hold keys (bins_kernel, the key's passes). differ comes first, so that one copy takes
 * both and nothing unwritten. */
struct TopStats {
  uint32_t differ[MAX_PASSES];
  uint32_t digits[MAX_PASSES];
};

/* The nontrivial passes (more than one digit holds keys) among passes [from, to]: the first and
 * last in *first and *last, both -1 when there is none. */
inline void nontrivial_span(const uint32_t *digits, int from, int to, int *first, int *last) {
  *first = *last = -1;
  for (int pass = from; pass <= to; ++pass)
    if (digits[pass] > 1) {
      if (*first < 0) *first = pass;
      *last = pass;
    }
}

/* Keys one pass launch covers: ONESWEEP_PORTION rounded up to whole tiles, so that 2^28 keys
 * take one launch rather than one and a remainder of a few keys (look-back sums stay < 2^29). */
inline size_t portion_keys(size_t n, size_t tile) {
  const size_t most = (ONESWEEP_PORTION + tile - 1) / tile * tile;
  return n < most ? n : most;
}

/* Scratch layout; the same code sizes it (base == NULL) and carves it. */
struct Scratch {
  uint64_t *bins, *portion_bins;
  TopStats *stats;
  unsigned long long *counts;
  uint32_t *unsorted, *tile_counter, *lookback;
  size_t lookback_tiles; /* tiles of the look-back table: those of the largest launch */
  size_t cleared_bytes;  /* from counts to the table's end: one memset before the histogram */

  size_t layout(void *base, size_t n, size_t tile) {
    ScratchLayout s{(char *)base, 0};
    bins = s.take<uint64_t>(MAX_PASSES * RADIX);
    portion_bins = s.take<uint64_t>(2 * RADIX);
    stats = s.take<TopStats>(1);
    unsorted = s.take<uint32_t>(1);
    /* The histogram's counts, the tile counter and the look-back table, in that order: the
     * histogram's memset clears all three. */
    counts = s.take<unsigned long long>(MAX_PASSES * RADIX);
    const size_t counts_at = s.used - MAX_PASSES * RADIX * sizeof(unsigned long long);
    lookback_tiles = (portion_keys(n, tile) + tile - 1) / tile;
    tile_counter = s.take<uint32_t>(1 + lookback_tiles * RADIX);
    lookback = tile_counter ? tile_counter + 1 : nullptr;
    cleared_bytes = s.used - counts_at;
    return s.used;
  }
};

} // namespace onesweep
} // namespace h5g
#endif
