/* Block primitive of the onesweep radix sort: stable rank of a tile's keys by one 8-bit digit.
 *
 * Keys are held warp-striped (item i of lane l of warp w is tile key w*ITEMS*32 + i*32 + l). Each
 * warp counts digits in its own shared-memory histogram, one item at a time; lanes holding the same
 * digit find each other (match_digit), so one leader per digit and item adds the group's size
 * with a shared atomic and shares the old value. After the block scan, key i's position in the
 * digit-sorted tile is warp_hist[warp][digit] + rank[i]. */
#ifndef H5G_BLOCK_RADIX_RANK_CUH
#define H5G_BLOCK_RADIX_RANK_CUH

#include <stdint.h>

#include "kernels/block_scan.cuh"
#include "kernels/tuning.cuh"

namespace h5g {

template <typename K> __device__ __forceinline__ uint32_t digit_of(K key, int shift) {
  return (uint32_t)(key >> shift) & (RADIX - 1);
}

/* Lanes of the warp whose digit equals d: one ballot per digit bit (cheaper on sm_90 than
 * __match_any_sync, CUB's MatchAny does the same). */
__device__ __forceinline__ uint32_t match_digit(uint32_t d) {
  uint32_t peers = 0xffffffffu;
#pragma unroll
  for (int b = 0; b < RADIX_BITS; ++b) {
    const bool bit = (d >> b) & 1;
    const uint32_t ballot = __ballot_sync(0xffffffffu, bit);
    peers &= bit ? ballot : ~ballot;
  }
  return peers;
}

template <int BLOCK, int ITEMS> struct BlockRadixRank {
  static constexpr int WARPS = BLOCK / 32;
  static_assert(BLOCK >= RADIX && BLOCK % 32 == 0, "one thread per digit in the digit scans");

  struct Storage {
    uint32_t warp_hist[WARPS][RADIX]; /* counts, then the warp's first position per digit */
    uint32_t scan[WARPS + 1];
  };

  /* Ranks keys[] within their warp and digit, then turns warp_hist into tile positions: key i
   * goes to tile position ranks[i]. Threads t < RADIX call on_counts(count of digit t in the
   * tile) as soon as the counts are known, before the block scan (the onesweep kernel publishes
   * them for its successors there), and receive in *digit_start the tile position of digit t's
   * first key. Contains barriers: every thread must call it. */
  template <typename K, typename OnCounts>
  static __device__ __forceinline__ void rank(Storage &s, const K (&keys)[ITEMS], int shift,
                                              uint32_t (&ranks)[ITEMS], uint32_t *digit_start,
                                              OnCounts on_counts) {
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    for (int i = tid; i < WARPS * RADIX; i += BLOCK) (&s.warp_hist[0][0])[i] = 0;
    __syncthreads();
    uint32_t *hist = s.warp_hist[warp];
    const uint32_t lanes_below = (1u << lane) - 1;
    /* Items are counted in order and one warp's shared atomics execute in issue order, so ranks
     * are stable without barriers between items. */
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const uint32_t d = digit_of(keys[i], shift);
      const uint32_t peers = match_digit(d);
      const int leader = 31 - __clz(peers);
      uint32_t before = 0;
      if (lane == leader) before = atomicAdd(&hist[d], __popc(peers));
      ranks[i] = __shfl_sync(0xffffffffu, before, leader) + __popc(peers & lanes_below);
    }
    __syncthreads();
    uint32_t count = 0;
    if (tid < RADIX) {
#pragma unroll
      for (int w = 0; w < WARPS; ++w) {
        const uint32_t c = s.warp_hist[w][tid];
        s.warp_hist[w][tid] = count;
        count += c;
      }
      on_counts(count);
    }
    uint32_t total;
    const uint32_t start = block_exclusive_sum<BLOCK>(count, s.scan, &total);
    if (tid < RADIX) {
#pragma unroll
      for (int w = 0; w < WARPS; ++w) s.warp_hist[w][tid] += start;
    }
    *digit_start = start;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) ranks[i] += s.warp_hist[warp][digit_of(keys[i], shift)];
  }
};

} // namespace h5g
#endif
