/* One onesweep pass (radix_sort.cuh, step 3), laid out as CUB's AgentRadixSortOnesweep: a block
 * takes the next tile (atomic counter, so tiles start in order), loads its keys, ranks them by
 * the pass's digit (BlockRadixRank) and publishes its digit counts to the look-back table as
 * soon as they are known, before the ranking (so successors rarely wait), parks its values, writes
 * the digit-sorted tile to shared memory, adds up its predecessors' counts (decoupled look-back:
 * a tile's inclusive prefix, once published, ends the walk) and scatters the tile to the output
 * in coalesced runs. The table is cleared once per sort: launches alternate an epoch bit in its
 * entries instead, and the block that takes the last tile zeroes the tile counter for the next
 * launch. */
#ifndef H5G_ONESWEEP_PASS_CUH
#define H5G_ONESWEEP_PASS_CUH

#include <stdint.h>

#include "kernels/block_radix_rank.cuh"
#include "kernels/key_map.cuh"
#include "kernels/onesweep_common.cuh"
#include "kernels/tuning.cuh"
#include "kernels/util.cuh"

namespace h5g {
namespace onesweep {

/* The digit-sorted tile's values, apart from the rank storage (they are parked before the rank
 * storage dies); empty, and so taking no space as a base, without values. */
template <typename V, int TILE> struct ValueTile { V tile_vals[TILE]; };
template <int TILE> struct ValueTile<NoValue, TILE> {};

/* Index: type of output indices, uint32_t when n <= 2^32 (cheaper per key than uint64_t). */
template <typename K, int BLOCK, int ITEMS, WarpMatch MATCH, typename Index, typename V = NoValue>
struct Pass {
  using Rank = BlockRadixRank<BLOCK, ITEMS, MATCH>;
  static constexpr int TILE = BLOCK * ITEMS;
  struct Storage : ValueTile<V, TILE> {
    Index out_base[RADIX]; /* output index of tile position 0, per digit */
    uint32_t tile_id;
    union {
      typename Rank::Storage rank;
      K tile_keys[TILE];
    };
  };
};

/* The steps of one block's tile in pass_kernel, in the order it calls them (its barriers between
 * them). Each takes what it works on as arguments, none through an object: code that reads
 * agent members inside its loops compiles differently once inlined (other registers, other
 * instructions), and the pass must compile as one kernel body does. */
template <typename K, int BLOCK, int ITEMS, WarpMatch MATCH, typename Index, typename V,
          bool MAPPED, bool STABLE>
struct PassAgent {
  using P = Pass<K, BLOCK, ITEMS, MATCH, Index, V>;
  using Storage = typename P::Storage;
  static constexpr int TILE = P::TILE;
  static_assert(STABLE || !has_values<V>, "values keep their keys' order: every pass stable");

  /* A key as loaded (to ordered bits) and as stored (back to the result's form). */
  static __device__ __forceinline__ K loaded(const KeyMap<K> &load, K k) {
    if constexpr (MAPPED) return load.forward(k);
    else return k;
  }
  static __device__ __forceinline__ K stored(const KeyMap<K> &store, K k) {
    if constexpr (MAPPED) return store.inverse(k);
    else return k;
  }

  /* Thread 0 takes the next tile and shares its number in s.tile_id; the block that takes the
   * last of the launch's ntiles zeroes the counter for the next launch. */
  static __device__ __forceinline__ void take_tile(Storage &s, uint32_t *tile_counter,
                                                   uint32_t ntiles, int tid) {
    if (tid == 0) {
      const uint32_t taken = atomicAdd(tile_counter, 1u);
      if (taken == ntiles - 1) *tile_counter = 0; /* zero for the next launch */
      s.tile_id = taken;
    }
  }

  /* Warp-striped load of the tile's keys from `src` (the thread's first key; first: its tile
   * position); keys past the end are all ones (ordered bits, not mapped), so they rank last in
   * digit 255 and land at tile positions >= valid, which are never written out (the unstable
   * ranking does not rank them: they all take the tile's last position). */
  static __device__ __forceinline__ void load_keys(const K *src, uint32_t first, uint32_t valid,
                                                   const KeyMap<K> &load, K (&keys)[ITEMS]) {
    if (valid == TILE) {
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) keys[i] = loaded(load, src[i * 32]);
    } else {
#pragma unroll
      for (int i = 0; i < ITEMS; ++i)
        keys[i] = first + i * 32 < valid ? loaded(load, src[i * 32]) : (K)~(K)0;
    }
  }

  /* Ranks the tile (ranks[i]: key i's tile position; *digit_start: digit t's first position)
   * and publishes the tile's count of digit t (thread t < RADIX), `mine`, to the look-back
   * table as soon as the counts are known ("early counts"), before the ranking. */
  static __device__ __forceinline__ void rank_keys(Storage &s, const K (&keys)[ITEMS], int shift,
                                                   uint32_t first, uint32_t valid,
                                                   volatile uint32_t *table, uint32_t tile,
                                                   uint32_t epoch, uint32_t (&ranks)[ITEMS],
                                                   uint32_t &mine, uint32_t *digit_start) {
    const int real = valid == TILE ? ITEMS
                     : valid > first ? (int)min((uint32_t)ITEMS, (valid - first + 31) / 32)
                                     : 0;
    P::Rank::template rank<STABLE>(
        s.rank, keys, shift, ranks, digit_start,
        [&](uint32_t count) {
          mine = count - (threadIdx.x == RADIX - 1 ? TILE - valid : 0);
          table[(uint64_t)tile * RADIX + threadIdx.x] =
              epoch | (tile == 0 ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | mine;
        },
        real);
  }

  /* With values: each key's value (in_vals from the tile's start), loaded while the look-back
   * waits, parked at the key's rank. */
  static __device__ __forceinline__ void park_values(Storage &s, const V *in_vals,
                                                     uint64_t tile_begin, uint32_t first,
                                                     uint32_t valid,
                                                     const uint32_t (&ranks)[ITEMS]) {
    if constexpr (has_values<V>) {
      const V *vsrc = in_vals + tile_begin + first;
#pragma unroll
      for (int i = 0; i < ITEMS; ++i)
        if (first + i * 32 < valid) s.tile_vals[ranks[i]] = vsrc[i * 32];
    }
  }

  /* After the barrier that ends the rank storage: the digit-sorted tile in its place. */
  static __device__ __forceinline__ void stage_keys(Storage &s, const K (&keys)[ITEMS],
                                                    const uint32_t (&ranks)[ITEMS]) {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) s.tile_keys[ranks[i]] = keys[i];
  }

  /* Thread tid < RADIX: how many keys of digit tid the tiles before `tile` hold, from the
   * look-back table; publishes the tile's inclusive prefix. Reads LOOKBACK_WINDOW predecessors
   * at once: a walk over published aggregates costs one memory latency per window, not per tile. */
  static __device__ __forceinline__ uint32_t look_back(volatile uint32_t *table, uint32_t tile,
                                                       int tid, uint32_t epoch, uint32_t mine) {
    uint32_t exclusive = 0;
    if (tile > 0) {
      for (int64_t pred = (int64_t)tile - 1;;) {
        uint32_t v[LOOKBACK_WINDOW];
#pragma unroll
        for (int w = 0; w < LOOKBACK_WINDOW; ++w)
          v[w] = pred - w >= 0 ? table[(uint64_t)(pred - w) * RADIX + tid] : 0;
        bool found = false;
        int used = 0;
#pragma unroll
        for (int w = 0; w < LOOKBACK_WINDOW; ++w) {
          /* zero (cleared) or of the other epoch (the launch before): not published */
          const uint32_t state = (v[w] ^ epoch) & ~LOOKBACK_VALUE;
          if (found || used < w || (state != LOOKBACK_AGGREGATE && state != LOOKBACK_INCLUSIVE))
            continue; /* stop at a gap */
          exclusive += v[w] & LOOKBACK_VALUE;
          found = state == LOOKBACK_INCLUSIVE;
          ++used;
        }
        if (found) break;
        if (used == 0) __nanosleep(16); /* predecessor not published: leave issue slots to others */
        pred -= used;
      }
      table[(uint64_t)tile * RADIX + tid] = epoch | LOOKBACK_INCLUSIVE | (exclusive + mine);
    }
    return exclusive;
  }

  /* After the barrier that publishes s.out_base: the digit-sorted tile (and its values) to the
   * output. Written as (out + base)[position], so the position's constant part stays an
   * immediate offset of the store with 32-bit indices too. */
  static __device__ __forceinline__ void scatter(Storage &s, K *out, V *out_vals, int shift,
                                                 uint32_t valid, int tid,
                                                 const KeyMap<K> &store) {
    if (valid == TILE) {
      K k[ITEMS];
#pragma unroll
      for (int i = 0; i < ITEMS; ++i) k[i] = s.tile_keys[tid + i * BLOCK];
#pragma unroll
      for (int i = 0; i < ITEMS; ++i)
        (out + s.out_base[digit_of(k[i], shift)])[tid + i * BLOCK] = stored(store, k[i]);
      if constexpr (has_values<V>) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i)
          (out_vals + s.out_base[digit_of(k[i], shift)])[tid + i * BLOCK] =
              s.tile_vals[tid + i * BLOCK];
      }
    } else {
      for (uint32_t j = tid; j < valid; j += BLOCK) {
        const K k = s.tile_keys[j];
        (out + s.out_base[digit_of(k, shift)])[j] = stored(store, k);
        if constexpr (has_values<V>)
          (out_vals + s.out_base[digit_of(k, shift)])[j] = s.tile_vals[j];
      }
    }
  }
};

/* MAPPED: load.forward maps the keys read to ordered bits and store.inverse maps the ordered
 * bits written (identity maps where a side needs none); without it no map code is compiled.
 * STABLE false: the unstable ranking (BlockRadixRank), for the first pass of a sort of keys
 * alone. */
template <typename K, int BLOCK, int ITEMS, int MIN_BLOCKS, WarpMatch MATCH, typename Index,
          typename V = NoValue, bool MAPPED = false, bool STABLE = true>
__global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
    pass_kernel(const K *__restrict__ in, K *__restrict__ out, uint64_t portion_begin,
                uint64_t portion_end, uint32_t *tile_counter, uint32_t *lookback, uint32_t epoch,
                const uint64_t *bins_in, uint64_t *bins_out, int shift,
                const V *__restrict__ in_vals, V *__restrict__ out_vals, KeyMap<K> load,
                KeyMap<K> store) {
  using Agent = PassAgent<K, BLOCK, ITEMS, MATCH, Index, V, MAPPED, STABLE>;
  constexpr int TILE = Agent::TILE;
  extern __shared__ __align__(16) char smem_raw[];
  typename Agent::Storage &s = *reinterpret_cast<typename Agent::Storage *>(smem_raw);
  volatile uint32_t *table = lookback;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const uint32_t ntiles = (uint32_t)((portion_end - portion_begin + TILE - 1) / TILE);
  Agent::take_tile(s, tile_counter, ntiles, tid);
  /* Loaded now, so that its latency does not follow the look-back's. */
  const uint64_t bin = tid < RADIX ? bins_in[tid] : 0;
  __syncthreads();
  const uint32_t tile = s.tile_id;
  const uint64_t tile_begin = portion_begin + (uint64_t)tile * TILE;
  const uint32_t valid = (uint32_t)min((uint64_t)TILE, portion_end - tile_begin);
  const uint32_t first = warp * ITEMS * 32 + lane; /* the thread's first key, warp-striped */

  K keys[ITEMS];
  Agent::load_keys(in + tile_begin + first, first, valid, load, keys);
  uint32_t mine = 0, ranks[ITEMS], digit_start;
  Agent::rank_keys(s, keys, shift, first, valid, table, tile, epoch, ranks, mine, &digit_start);
  Agent::park_values(s, in_vals, tile_begin, first, valid, ranks);
  __syncthreads(); /* rank storage is dead: the tile reuses it */
  Agent::stage_keys(s, keys, ranks);
  if (tid < RADIX) {
    const uint32_t exclusive = Agent::look_back(table, tile, tid, epoch, mine);
    /* Never negative: no more keys of this tile precede digit tid than keys of all tiles. */
    s.out_base[tid] = (Index)(bin + exclusive - digit_start);
    if (tile == ntiles - 1) bins_out[tid] = bin + exclusive + mine;
  }
  __syncthreads();
  Agent::scatter(s, out, out_vals, shift, valid, tid, store);
}

/* pass_kernel's instance with 32-bit output indices (narrow) or 64-bit ones. */
template <typename K, int BLOCK, int ITEMS, int MIN_BLOCKS, WarpMatch MATCH, typename V,
          bool MAPPED, bool STABLE>
auto pass_instance(bool narrow) {
  return narrow ? pass_kernel<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, uint32_t, V, MAPPED, STABLE>
                : pass_kernel<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, uint64_t, V, MAPPED, STABLE>;
}

} // namespace onesweep
} // namespace h5g
#endif
