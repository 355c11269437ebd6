/* Block primitive of the onesweep radix sort: rank of a tile's keys by one 8-bit digit, stable
 * (the match below) or not.
 *
 * Keys are held warp-striped (item i of lane l of warp w is tile key w*ITEMS*32 + i*32 + l).
 * Counts come first ("early counts", as in CUB's BlockRadixRankMatchEarlyCounts): each warp counts
 * its digits in its own shared-memory histogram, threads t < RADIX sum digit t over the warps and
 * hand the tile's count to the caller (the onesweep kernel publishes it for its successors before
 * any ranking work), and the block scan turns each warp's counters into the tile position of its
 * first key of each digit. Then each warp ranks its keys item by item: lanes holding the same
 * digit find each other (WarpMatch), one leader per digit adds the group's size to the warp's
 * counter with a shared atomic and shares the old value, so a key's rank is its final tile
 * position without a second lookup.
 * The unstable ranking (STABLE false) has no match: each key's own atomic add on its warp's
 * counter gives its rank, so keys of one digit in one warp item take an order the hardware picks.
 * A sort of keys alone ranks its first LSD pass so: that pass sorts by its digit whatever order
 * keys of one digit take (the later, stable passes order them by theirs, and keys equal in every
 * digit are equal bits). */
#ifndef H5G_BLOCK_RADIX_RANK_CUH
#define H5G_BLOCK_RADIX_RANK_CUH

#include <stdint.h>

#include "kernels/block_scan.cuh"
#include "kernels/tuning.cuh"

namespace h5g {

/* The digit of `key` at bit `shift` (a multiple of RADIX_BITS below the key's width). A 128-bit
 * key's digit comes from the 64-bit half that holds it: cheaper than a 128-bit shift by a
 * run-time amount. */
template <typename K> __device__ __forceinline__ uint32_t digit_of(K key, int shift) {
  if constexpr (sizeof(K) > 8) {
    const uint64_t half = shift < 64 ? (uint64_t)key : (uint64_t)(key >> 64);
    return (uint32_t)(half >> (shift & 63)) & (RADIX - 1);
  } else {
    return (uint32_t)(key >> shift) & (RADIX - 1);
  }
}

/* WarpMatch (tuning.cuh): how the lanes of a warp that hold the same digit find each other.
 * BALLOT: one ballot per digit bit (CUB's MatchAny); ATOMIC_OR: each lane ORs its bit into a
 * per-warp per-digit shared mask and reads the mask back. */
__device__ __forceinline__ uint32_t match_digit_ballot(uint32_t d) {
  uint32_t peers = 0xffffffffu;
#pragma unroll
  for (int b = 0; b < RADIX_BITS; ++b) {
    const bool bit = (d >> b) & 1;
    const uint32_t ballot = __ballot_sync(0xffffffffu, bit);
    peers &= bit ? ballot : ~ballot;
  }
  return peers;
}

template <int BLOCK, int ITEMS, WarpMatch MATCH = ONESWEEP_MATCH> struct BlockRadixRank {
  static constexpr int WARPS = BLOCK / 32;
  static_assert(BLOCK >= RADIX && BLOCK % 32 == 0, "one thread per digit in the digit scans");

  struct Storage {
    uint32_t warp_hist[WARPS][RADIX]; /* counts, then the warp's next tile position per digit */
    uint32_t match_mask[MATCH == WarpMatch::ATOMIC_OR ? WARPS : 1][RADIX];
    uint32_t scan[WARPS + 1];
  };

  /* Ranks keys[]: key i goes to tile position ranks[i]. Threads t < RADIX call on_counts(count
   * of digit t in the tile) as soon as the counts are known, before the block scan and the
   * ranking, and receive in *digit_start the tile position of digit t's first key. Unstable: the
   * thread's items from `real` on are the tile's padding (all ones: counted in digit RADIX - 1,
   * after every key), and take the tile's last position, which is never written out. Contains
   * barriers: every thread must call it. */
  template <bool STABLE, typename K, typename OnCounts>
  static __device__ __forceinline__ void rank(Storage &s, const K (&keys)[ITEMS], int shift,
                                              uint32_t (&ranks)[ITEMS], uint32_t *digit_start,
                                              OnCounts on_counts, int real = ITEMS) {
    constexpr bool MASKS = STABLE && MATCH == WarpMatch::ATOMIC_OR; /* the match uses them */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    uint32_t *hist = s.warp_hist[warp];
    uint32_t *masks = s.match_mask[MATCH == WarpMatch::ATOMIC_OR ? warp : 0];
    /* Each warp clears and fills its own counters: no block barrier before counting. */
#pragma unroll
    for (int d = lane; d < RADIX; d += 32) {
      hist[d] = 0;
      if (MASKS) masks[d] = 0;
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) atomicAdd(&hist[digit_of(keys[i], shift)], 1u);
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

    if constexpr (!STABLE) {
#pragma unroll
      for (int i = 0; i < ITEMS; ++i)
        ranks[i] = i < real ? atomicAdd(&hist[digit_of(keys[i], shift)], 1u) : BLOCK * ITEMS - 1;
      return;
    }
    const uint32_t lanes_upto_me = 0xffffffffu >> (31 - lane);
    /* Items are ranked in order and one warp's shared atomics execute in issue order, so ranks
     * are stable without barriers between items. */
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const uint32_t d = digit_of(keys[i], shift);
      uint32_t peers;
      if (MATCH == WarpMatch::BALLOT) {
        peers = match_digit_ballot(d);
      } else {
        atomicOr(&masks[d], 1u << lane);
        __syncwarp();
        peers = masks[d];
      }
      /* The leader is the group's highest lane: its count up to itself is the group's size. */
      const int leader = 31 - __clz(peers);
      const uint32_t upto_me = __popc(peers & lanes_upto_me);
      uint32_t before = 0;
      if (lane == leader) before = atomicAdd(&hist[d], upto_me);
      if (MATCH == WarpMatch::ATOMIC_OR) {
        __syncwarp(); /* every lane has read the mask before its leader clears it */
        if (lane == leader) masks[d] = 0;
        __syncwarp();
      }
      ranks[i] = __shfl_sync(0xffffffffu, before, leader) + upto_me - 1;
    }
  }
};

} // namespace h5g
#endif
