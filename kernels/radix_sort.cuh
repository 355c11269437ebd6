/* Onesweep LSD radix sort (Adinets & Merrill, "Onesweep: a faster least significant digit radix
 * sort for GPUs", 2022), 8-bit digits. Templates on the key type and the tile shape, so that
 * bench/local_sort.cu can time other shapes than the tuned ones (radix_sort.cu, tuning.cuh).
 *
 * 1. histogram_kernel: one read of the keys counts the digits of every pass at once (and one
 *    more block takes the top digits first's sample, below).
 * 2. bins_kernel: per pass, the exclusive scan of the counts (where each digit's keys start in
 *    the output) and how many digits hold keys (one: the pass is trivial and skipped).
 * 3. pass_kernel, once per pass (and per portion of at most about ONESWEEP_PORTION keys): a block
 *    takes the next tile (atomic counter, so tiles start in order), ranks it by the digit in
 *    shared memory (BlockRadixRank), publishes its digit counts to the look-back table as soon as
 *    they are known, before the ranking (so successors rarely wait), adds
 *    up its predecessors' counts (decoupled look-back: a tile's inclusive prefix, once published,
 *    ends the walk; the digit-sorted tile is written to shared memory meanwhile), and scatters
 *    the digit-sorted tile to the output in coalesced runs. The table is cleared once, with the
 *    histogram's counts: launches alternate an epoch bit in its entries instead, and the block
 *    that takes the last tile zeroes the tile counter for the next launch.
 * Passes ping-pong between keys and alt; an odd count of passes ends with one copy back. A
 * sort of keys alone of up to 4 bytes ranks the first pass it runs unstably
 * (block_radix_rank.cuh: no warp match), the others stably.
 * Keys-only sorts of 64- and 128-bit keys take the top digits first when the histogram says
 * they could tell the keys apart (top_digits_pass: room for 16 times as many values as keys):
 * the passes of those digits alone, then sort_short_segments sorts each run of keys with equal
 * top digits in place (random keys: few runs, of a few keys). A run longer than
 * TIE_SEGMENT_MAX that is out of order sends the sort through every pass from there (LSD
 * passes sort any order): half the passes or fewer where the top digits tell the keys apart;
 * where the histogram misled (it sees each byte alone), the top passes and one read on top of
 * every pass. So from TOP_SAMPLE_MIN_KEYS keys on, one more block of the histogram kernel sorts a
 * sample of the keys (sample_differences), and neighbours in it that share the top digits but
 * differ, more than chance gives, send the sort through every pass at once
 * (sample_allows_top): long runs the sample sees (tied tops from 2^16 keys; a few values among
 * random keys from about 3.3 M) cost what every pass costs; others still the fallback.
 * Key+value sorts (V other than NoValue) load each key's value right after ranking, park it in
 * the tile's own value area at the key's rank, and write it where the key goes: the pass stays
 * stable, so the sort is. With V == NoValue every value statement compiles away.
 * Signed, float and descending keys (key_map.cuh) are transformed inside the kernels, never in a
 * pass of their own: raw input keys are mapped to ordered bits as the histogram kernel and the
 * first pass that runs load them (digits, trivial passes and the ranking all see ordered bits),
 * passes between hold ordered bits, and the last pass that runs maps them back as it scatters
 * them, when the result is to be raw keys. Only those pass kernels take the MAPPED instance; the
 * top digits first leaves the keys in the result's form after the top passes, and
 * sort_short_segments (and a first pass from there) maps them as it reads and writes. With no
 * pass to run (n < 2, every digit constant) a separate map makes the form the caller asked for. */
#ifndef H5G_RADIX_SORT_CUH
#define H5G_RADIX_SORT_CUH

#include "kernels/block_bitonic.cuh"
#include "kernels/block_radix_rank.cuh"
#include "kernels/check_cuda.cuh"
#include "kernels/key_map.cuh"
#include "kernels/tuning.cuh"
#include "kernels/util.cuh"

namespace h5g {
namespace onesweep {

/* One pass per key byte: 16 for the widest (128-bit) keys. */
constexpr int MAX_PASSES = 16;
/* Look-back entry: an epoch bit and 2 status bits over a 29-bit digit count. Launches of a sort
 * alternate epochs, so an entry of the launch before reads as not yet published and the table is
 * cleared once per sort, not before every launch (sort: run_passes). */
constexpr uint32_t LOOKBACK_AGGREGATE = 1u << 29;
constexpr uint32_t LOOKBACK_INCLUSIVE = 2u << 29;
constexpr uint32_t LOOKBACK_EPOCH = 4u << 29;
constexpr uint32_t LOOKBACK_VALUE = (1u << 29) - 1;
constexpr int LOOKBACK_WINDOW = 4;

/* Shared counters are spread over COPIES copies, copy = lane % COPIES, interleaved (counter of
 * digit d in copy c at d * COPIES + c): with 32 copies every lane of a warp counts in its own
 * bank, with 16 two lanes share one. As many copies as `bytes` of shared memory hold, at most
 * 32. */
/* Shared memory of the counters of all passes in `copies` copies. */
template <typename K> __host__ __device__ constexpr size_t hist_bytes(int copies) {
  return sizeof(K) * RADIX * (size_t)copies * sizeof(uint32_t);
}

template <typename K> __host__ __device__ constexpr int hist_copies(size_t bytes) {
  return bytes / hist_bytes<K>(1) < 32 ? (int)(bytes / hist_bytes<K>(1)) : 32;
}

/* What the host reads back after the histogram: differ[b], how many neighbours of the sorted
 * sample differ first in byte b (sample_differences, every entry), and digits[pass], how many
 * digits hold keys (bins_kernel, the key's passes). differ comes first, so that one copy takes
 * both and nothing unwritten. */
struct TopStats {
  uint32_t differ[MAX_PASSES];
  uint32_t digits[MAX_PASSES];
};

/* The byte of the highest bit set in x != 0. */
template <typename K> __device__ __forceinline__ int highest_byte(K x) {
  if constexpr (sizeof(K) > 8) {
    const uint64_t high = (uint64_t)(x >> 64);
    if (high) return 8 + (63 - __clzll((long long)high)) / 8;
  }
  return (63 - __clzll((long long)(uint64_t)x)) / 8;
}

/* The top digits first's sample, taken by one block of BLOCK threads in `smem` (room for
 * TOP_SAMPLE keys and MAX_PASSES counters): TOP_SAMPLE keys of keys[0..n) (n >= TOP_SAMPLE, a
 * power of two: tuning.cuh), one from a hashed place in each of TOP_SAMPLE equal stretches,
 * mapped to ordered bits by `load` and sorted; differ[b] counts its neighbours whose highest
 * differing byte is b (they share every digit above b). */
template <typename K, int BLOCK>
__device__ void sample_differences(const K *keys, uint64_t n, const KeyMap<K> &load,
                                   uint32_t *differ, char *smem) {
  K *sample = reinterpret_cast<K *>(smem);
  uint32_t *by_byte = reinterpret_cast<uint32_t *>(sample + TOP_SAMPLE);
  static_assert(BLOCK >= MAX_PASSES, "a thread per byte clears and writes by_byte");
  if (threadIdx.x < MAX_PASSES) by_byte[threadIdx.x] = 0;
  for (int t = threadIdx.x; t < TOP_SAMPLE; t += BLOCK) {
    const uint64_t begin = t * n / TOP_SAMPLE, stretch = (t + 1) * n / TOP_SAMPLE - begin;
    sample[t] = load.forward(keys[begin + ((t + 1) * 0x9e3779b97f4a7c15ull >> 40) % stretch]);
  }
  __syncthreads();
  block_bitonic_sort<K, BLOCK>(sample, TOP_SAMPLE);
  for (int t = threadIdx.x + 1; t < TOP_SAMPLE; t += BLOCK)
    if (sample[t - 1] != sample[t])
      atomicAdd(&by_byte[highest_byte<K>(sample[t - 1] ^ sample[t])], 1u);
  __syncthreads();
  if (threadIdx.x < MAX_PASSES) differ[threadIdx.x] = by_byte[threadIdx.x];
}

/* MAPPED: the keys are raw, load.forward gives their ordered bits. Dynamic shared memory:
 * sizeof(K) * RADIX * COPIES counters. With `differ`, the grid's last block takes the top digits
 * first's sample instead (sample_differences), beside the others rather than after them. */
template <typename K, bool MAPPED, int BLOCK, int COPIES>
__global__ void __launch_bounds__(BLOCK)
    histogram_kernel(const K *__restrict__ keys, uint64_t n, unsigned long long *counts,
                     KeyMap<K> load, uint32_t *differ) {
  constexpr int PASSES = sizeof(K), COUNTERS = PASSES * RADIX * COPIES;
  extern __shared__ __align__(16) char smem_raw[];
  const uint32_t blocks = gridDim.x - (differ ? 1 : 0); /* those that count */
  if constexpr (sizeof(K) >= 8) { /* the keys that may take the top digits first */
    static_assert(hist_bytes<K>(COPIES) >= TOP_SAMPLE * sizeof(K) + MAX_PASSES * sizeof(uint32_t),
                  "the sample fits the counters' shared memory");
    if (blockIdx.x == blocks) {
      sample_differences<K, BLOCK>(keys, n, load, differ, smem_raw);
      return;
    }
  }
  uint32_t *hist = reinterpret_cast<uint32_t *>(smem_raw); /* [PASSES][RADIX][COPIES] */
  for (int i = threadIdx.x; i < COUNTERS; i += BLOCK) hist[i] = 0;
  __syncthreads();
  const uint32_t copy = threadIdx.x % COPIES;
  /* HIST_ITEMS loads in flight per thread before their atomics: the loop is latency-bound
   * with one. */
  const uint64_t chunk = (uint64_t)BLOCK * HIST_ITEMS;
  for (uint64_t base = blockIdx.x * chunk + threadIdx.x; base < n; base += blocks * chunk) {
    K k[HIST_ITEMS];
#pragma unroll
    for (int j = 0; j < HIST_ITEMS; ++j) {
      const uint64_t i = base + (uint64_t)j * BLOCK;
      k[j] = i < n ? keys[i] : (K)0;
      if constexpr (MAPPED) k[j] = load.forward(k[j]);
    }
#pragma unroll
    for (int j = 0; j < HIST_ITEMS; ++j) {
      if (base + (uint64_t)j * BLOCK >= n) break;
#pragma unroll
      for (int p = 0; p < PASSES; ++p)
        atomicAdd(&hist[(p * RADIX + digit_of(k[j], p * RADIX_BITS)) * COPIES + copy], 1u);
    }
  }
  __syncthreads();
  /* Each thread sums one counter's copies starting at a copy of its own, so that a warp's
   * lanes read 32 different banks (32 / COPIES lanes share a start, in different banks). */
  static_assert(32 % COPIES == 0, "copies divide the banks");
  for (int i = threadIdx.x; i < PASSES * RADIX; i += BLOCK) {
    uint32_t c = 0;
#pragma unroll 8
    for (int j = 0; j < COPIES; ++j) c += hist[i * COPIES + (j + i / (32 / COPIES)) % COPIES];
    if (c) atomicAdd(&counts[i], (unsigned long long)c);
  }
}

/* One block of RADIX threads per pass; digits[pass]: how many digits hold keys (1: the pass is
 * trivial, every key in one digit, and is skipped). */
template <int UNUSED = 0>
__global__ void bins_kernel(const unsigned long long *counts, uint64_t *bins, uint32_t *digits) {
  __shared__ uint64_t warp_sums[RADIX / 32 + 1];
  const int pass = blockIdx.x, d = threadIdx.x;
  const uint64_t c = counts[pass * RADIX + d];
  uint64_t total;
  bins[pass * RADIX + d] = block_exclusive_sum<RADIX>((uint64_t)c, warp_sums, &total);
  const int nonempty = __syncthreads_count(c != 0);
  if (d == 0) digits[pass] = (uint32_t)nonempty;
}

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

/* Keys in a run of equal top digits that one thread sorts in sort_short_segments. */
constexpr int TIE_SEGMENT_MAX = 16;

/* Sorts the segment (run of keys with equal top bits) that starts at keys[i] with key and next,
 * its first two keys as ordered bits, in place when it holds at most TIE_SEGMENT_MAX keys.
 * Returns false when it is longer and out of order within its first TIE_SEGMENT_MAX + 1 keys. */
template <typename K>
__device__ __noinline__ bool sort_segment(K *keys, uint64_t i, uint64_t n, int shift,
                                          const KeyMap<K> &map, K key, K next) {
  K seg[TIE_SEGMENT_MAX];
  const K top = key >> shift;
  int len = 0;
  bool sorted = true;
  seg[len++] = key;
  for (uint64_t j = i + 1; j < n; ++j) {
    const K k = j == i + 1 ? next : map.forward(keys[j]);
    if (k >> shift != top) break;
    if (k < seg[len - 1]) sorted = false;
    if (len == TIE_SEGMENT_MAX) return sorted;
    seg[len++] = k;
  }
  if (sorted) return true;
  for (int a = 1; a < len; ++a) { /* insertion sort: a few keys */
    const K k = seg[a];
    int b = a;
    for (; b > 0 && seg[b - 1] > k; --b) seg[b] = seg[b - 1];
    seg[b] = k;
  }
  for (int a = 0; a < len; ++a) keys[i + a] = map.inverse(seg[a]);
  return true;
}

/* keys[] are in order of their top bits (those from `shift` up), in the form that map.forward turns
 * into ordered bits. Sorts each segment (run of keys with equal top bits) of at most
 * TIE_SEGMENT_MAX keys in place, by its first key's thread (sort_segment); sets *unsorted when a
 * longer segment is out of order. Only short segments are written, each by one thread, so the keys
 * of long ones read whole; and top bits, equal across a segment, read the same however far its sort
 * has come (a 16-byte key read torn between two keys of a segment too: 16-byte maps are XORs, so
 * its halves keep their segment's top bits). A long segment's first TIE_SEGMENT_MAX + 1 keys are
 * checked by its first key's thread, every later pair by the thread of its second key. Each thread
 * takes SEGMENT_ITEMS keys at a time with the keys either side (loads in flight: the kernel is
 * bound by their latency with one). */
template <typename K>
__global__ void __launch_bounds__(SEGMENT_BLOCK)
    sort_short_segments(K *keys, uint64_t n, int shift, KeyMap<K> map, uint32_t *unsorted) {
  bool out_of_order = false;
  const uint64_t stride = (uint64_t)gridDim.x * SEGMENT_BLOCK * SEGMENT_ITEMS;
  for (uint64_t base = ((uint64_t)blockIdx.x * SEGMENT_BLOCK + threadIdx.x) * SEGMENT_ITEMS;
       base < n; base += stride) {
    K k[SEGMENT_ITEMS + 2]; /* keys base - 1 .. base + SEGMENT_ITEMS */
#pragma unroll
    for (int p = 0; p < SEGMENT_ITEMS + 2; ++p)
      k[p] = base + p >= 1 && base + p - 1 < n ? map.forward(keys[base + p - 1]) : (K)0;
#pragma unroll
    for (int p = 1; p <= SEGMENT_ITEMS; ++p) {
      const uint64_t i = base + p - 1;
      if (i >= n) break;
      const K top = k[p] >> shift;
      if (i > 0 && k[p - 1] >> shift == top) { /* not a segment's first key */
        if (i >= (uint64_t)TIE_SEGMENT_MAX && k[p - 1] > k[p] &&
            map.forward(keys[i - TIE_SEGMENT_MAX]) >> shift == top)
          out_of_order = true;
        continue;
      }
      if (i + 1 == n || k[p + 1] >> shift != top) continue; /* a segment of one key: most */
      if (!sort_segment(keys, i, n, shift, map, k[p], k[p + 1])) out_of_order = true;
    }
  }
  if (out_of_order) atomicOr(unsorted, 1u);
}

/* Keys-only 64- and 128-bit sorts: the lowest pass of the top digits that could tell n keys
 * apart with room to spare (at most prod(digits holding keys) values; at least 16 per key, so
 * that uniform keys share their top digits in runs of about one in 16), or `first` when that
 * takes every pass. digits[pass] from bins_kernel; passes first..last are the nontrivial span. */
inline int top_digits_pass(const uint32_t *digits, int first, int last, size_t n) {
  const double enough = log2((double)n) + 4;
  double log2_values = 0;
  for (int pass = last; pass > first; --pass) {
    log2_values += log2((double)digits[pass]);
    if (log2_values >= enough) return pass;
  }
  return first;
}

/* Whether the sample lets the top digits first start at pass `top` (n >= TOP_SAMPLE_MIN_KEYS):
 * no more of its neighbours share the top digits yet differ (differ[b] for b below `top`) than
 * chance gives keys spread over the top digits' values. Such keys, 16 or more values per key
 * (top_digits_pass), give at most m^2 / (32 n) such pairs on average among m = TOP_SAMPLE sorted
 * keys (Poisson); allowed is what that mean exceeds with probability under 1% (3 pairs at
 * n = 2^16, 2 at 2^17, 1 from 2^18, none from about 3.3 M keys). Long runs of keys that share
 * the top digits give more: tied tops about one neighbour in 10, vetoed from 2^16 on; k values
 * repeated among random keys k - 1 (two values: vetoed where none is allowed). Those runs,
 * unless in order, send the sort through every pass after the top ones. The veto counts pairs,
 * not runs or their order: keys whose shared top digits hold many short runs, or long runs in
 * order, may be vetoed too, and then cost what every pass costs. Equal neighbours do not count:
 * one long run of one value is in order. */
inline bool sample_allows_top(const uint32_t *differ, int top, size_t n) {
  const double mean = (double)TOP_SAMPLE * TOP_SAMPLE / (32.0 * (double)n);
  double term = exp(-mean), below = term; /* P(X = allowed), P(X <= allowed) */
  uint64_t sharing = 0, allowed = 0;
  for (int b = 0; b < top; ++b) sharing += differ[b];
  while (1 - below > 0.01) {
    ++allowed;
    term *= mean / (double)allowed;
    below += term;
  }
  return sharing <= allowed;
}

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
  using P = Pass<K, BLOCK, ITEMS, MATCH, Index, V>;
  constexpr int TILE = P::TILE;
  extern __shared__ __align__(16) char smem_raw[];
  typename P::Storage &s = *reinterpret_cast<typename P::Storage *>(smem_raw);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const uint32_t ntiles = (uint32_t)((portion_end - portion_begin + TILE - 1) / TILE);
  if (tid == 0) {
    const uint32_t taken = atomicAdd(tile_counter, 1u);
    if (taken == ntiles - 1) *tile_counter = 0; /* the last tile taken: zero for the next launch */
    s.tile_id = taken;
  }
  /* Loaded now, so that its latency does not follow the look-back's. */
  const uint64_t bin = tid < RADIX ? bins_in[tid] : 0;
  __syncthreads();
  const uint32_t tile = s.tile_id;
  const uint64_t tile_begin = portion_begin + (uint64_t)tile * TILE;
  const uint32_t valid = (uint32_t)min((uint64_t)TILE, portion_end - tile_begin);

  const auto loaded = [&](K k) {
    if constexpr (MAPPED) return load.forward(k);
    else return k;
  };
  const auto stored = [&](K k) {
    if constexpr (MAPPED) return store.inverse(k);
    else return k;
  };
  /* Warp-striped load; keys past the end are all ones (ordered bits, not mapped), so they rank
   * last in digit 255 and land at tile positions >= valid, which are never written out (the
   * unstable ranking does not rank them: they all take the tile's last position). */
  K keys[ITEMS];
  const uint32_t first = warp * ITEMS * 32 + lane;
  const K *src = in + tile_begin + first;
  if (valid == TILE) {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) keys[i] = loaded(src[i * 32]);
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
      keys[i] = first + i * 32 < valid ? loaded(src[i * 32]) : (K)~(K)0;
  }

  /* Publish the tile's digit counts as soon as they are known ("early counts"). */
  volatile uint32_t *table = lookback;
  uint32_t mine = 0;
  uint32_t ranks[ITEMS];
  uint32_t digit_start;
  static_assert(STABLE || !has_values<V>, "values keep their keys' order: every pass stable");
  const int real = valid == TILE ? ITEMS
                   : valid > first ? (int)min((uint32_t)ITEMS, (valid - first + 31) / 32)
                                   : 0;
  P::Rank::template rank<STABLE>(
      s.rank, keys, shift, ranks, &digit_start,
      [&](uint32_t count) {
        mine = count - (threadIdx.x == RADIX - 1 ? TILE - valid : 0);
        table[(uint64_t)tile * RADIX + threadIdx.x] =
            epoch | (tile == 0 ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | mine;
      },
      real);
  if constexpr (has_values<V>) { /* values load while the look-back waits */
    const V *vsrc = in_vals + tile_begin + first;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
      if (first + i * 32 < valid) s.tile_vals[ranks[i]] = vsrc[i * 32];
  }

  __syncthreads(); /* rank storage is dead: the tile reuses it */
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) s.tile_keys[ranks[i]] = keys[i];

  if (tid < RADIX) {
    uint32_t exclusive = 0;
    if (tile > 0) {
      /* Reads LOOKBACK_WINDOW predecessors at once: a walk over published aggregates costs one
       * memory latency per window rather than per tile. */
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
    /* Never negative: no more keys of this tile precede digit tid than keys of all tiles. */
    s.out_base[tid] = (Index)(bin + exclusive - digit_start);
    if (tile == ntiles - 1) bins_out[tid] = bin + exclusive + mine;
  }
  __syncthreads();
  /* Written as (out + base)[position], so the position's constant part stays an immediate
   * offset of the store with 32-bit indices too. */
  if (valid == TILE) {
    K k[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) k[i] = s.tile_keys[tid + i * BLOCK];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
      (out + s.out_base[digit_of(k[i], shift)])[tid + i * BLOCK] = stored(k[i]);
    if constexpr (has_values<V>) {
#pragma unroll
      for (int i = 0; i < ITEMS; ++i)
        (out_vals + s.out_base[digit_of(k[i], shift)])[tid + i * BLOCK] =
            s.tile_vals[tid + i * BLOCK];
    }
  } else {
    for (uint32_t j = tid; j < valid; j += BLOCK) {
      const K k = s.tile_keys[j];
      (out + s.out_base[digit_of(k, shift)])[j] = stored(k);
      if constexpr (has_values<V>) (out_vals + s.out_base[digit_of(k, shift)])[j] = s.tile_vals[j];
    }
  }
}

/* pass_kernel's instance with 32-bit output indices (narrow) or 64-bit ones. */
template <typename K, int BLOCK, int ITEMS, int MIN_BLOCKS, WarpMatch MATCH, typename V,
          bool MAPPED, bool STABLE>
auto pass_instance(bool narrow) {
  return narrow ? pass_kernel<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, uint32_t, V, MAPPED, STABLE>
                : pass_kernel<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, uint64_t, V, MAPPED, STABLE>;
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

/* Launches histogram_kernel on `device` (the current one) into s.counts, which must be zero, in
 * blocks of BLOCK threads with COPIES counter copies (other shapes than launch_histogram's are
 * for bench_local_sort); with `differ` one block more (or one of the most that fit the device)
 * takes the sample. */
template <typename K, int BLOCK, int COPIES>
int launch_histogram_shape(const K *keys, size_t n, const KeyMap<K> &load, Scratch &s,
                           int device, cudaStream_t stream, uint32_t *differ = nullptr) {
  int rc = H5G_OK;
  int sms = 0, per_sm = 0;
  const size_t smem = hist_bytes<K>(COPIES);
  const auto kernel = load.identity() ? histogram_kernel<K, false, BLOCK, COPIES>
                                      : histogram_kernel<K, true, BLOCK, COPIES>;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK, smem));
  {
    const uint64_t blocks_needed = (n + BLOCK * HIST_ITEMS - 1) / (BLOCK * HIST_ITEMS);
    const unsigned sampling = differ ? 1 : 0;
    const uint64_t fit = (uint64_t)sms * (per_sm > 0 ? per_sm : 1);
    const uint64_t most = fit > sampling ? fit - sampling : 1;
    const uint64_t counting = blocks_needed < most ? blocks_needed : most;
    kernel<<<(unsigned)counting + sampling, BLOCK, smem, stream>>>(keys, n, s.counts, load,
                                                                   differ);
  }
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}

/* Launches the upfront histogram of all passes into s.counts, of ordered bits: load maps the
 * keys read to them. In HIST_SHARED_BYTES of shared memory, or HIST_SHARED_FALLBACK_BYTES on a
 * device whose blocks may not have that much (before Hopper: 96-99 KB). With `differ`, the top
 * digits first's sample too (sample_differences). */
template <typename K>
int launch_histogram(const K *keys, size_t n, const KeyMap<K> &load, Scratch &s,
                     cudaStream_t stream, uint32_t *differ) {
  constexpr int COPIES = hist_copies<K>(HIST_SHARED_BYTES);
  int rc = H5G_OK, device = 0, most = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if ((size_t)most >= hist_bytes<K>(COPIES))
    CHECK((launch_histogram_shape<K, HIST_BLOCK, COPIES>(keys, n, load, s, device, stream,
                                                         differ)));
  else
    CHECK((launch_histogram_shape<K, HIST_BLOCK, hist_copies<K>(HIST_SHARED_FALLBACK_BYTES)>(
        keys, n, load, s, device, stream, differ)));
done:
  return rc;
}

/* Sorts keys[0..n) (alt: n keys of scratch); with values, vals[i] moves with keys[i] (alt_vals:
 * n values of scratch) and equal keys keep their order. `io` says whether the keys come and go
 * as raw keys or as ordered bits (key_map.cuh; the order is always that of the ordered bits).
 * WIDE_INDEX forces 64-bit output indices, ALL_STABLE the stable ranking in every pass
 * (bench_local_sort measures what 32-bit indices and the unstable first pass save). */
template <typename K, int BLOCK, int ITEMS, int MIN_BLOCKS, typename V = NoValue,
          WarpMatch MATCH = ONESWEEP_MATCH, bool WIDE_INDEX = false, bool ALL_STABLE = false>
int sort(void *temp, size_t *temp_bytes, K *keys, K *alt, size_t n, cudaStream_t stream,
         V *vals = nullptr, V *alt_vals = nullptr, const KeyIO<K> &io = KeyIO<K>::ordered()) {
  using Narrow = Pass<K, BLOCK, ITEMS, MATCH, uint32_t, V>;
  using Wide = Pass<K, BLOCK, ITEMS, MATCH, uint64_t, V>;
  constexpr size_t TILE = Narrow::TILE;
  constexpr int PASSES = sizeof(K);
  static_assert(PASSES <= MAX_PASSES, "one pass per key byte");
  static_assert(ONESWEEP_PORTION + TILE - 1 <= LOOKBACK_VALUE, "a launch's counts fit an entry");
  /* 32-bit output indices whenever they address every key. */
  const bool narrow = !WIDE_INDEX && n <= ((size_t)1 << 32);
  /* The first pass of an LSD run sorts by its digit whatever order keys of one digit take, so a
   * sort of keys alone ranks it unstably (BlockRadixRank); with values every pass is stable. So
   * are those of 8 and 16-byte keys, whose passes the ranking does not bound (no gain measured:
   * tuning.cuh) and whose top digits first counts on runs that come in order staying in order. */
  constexpr bool STABLE_FIRST = has_values<V> || ALL_STABLE || sizeof(K) >= 8;
  const auto plain = pass_instance<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, V, false, true>(narrow);
  const auto mapped = pass_instance<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, V, true, true>(narrow);
  const auto plain_first =
      pass_instance<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, V, false, STABLE_FIRST>(narrow);
  const auto mapped_first =
      pass_instance<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, V, true, STABLE_FIRST>(narrow);
  const size_t smem = narrow ? sizeof(typename Narrow::Storage) : sizeof(typename Wide::Storage);
  /* keys alone of 64 and 128 bits may take the top digits first (top_digits_pass) */
  constexpr bool TOP_DIGITS_FIRST = sizeof(K) >= 8 && !has_values<V>;
  int rc = H5G_OK;
  Scratch s;
  const size_t bytes = s.layout(temp, n, TILE);
  const size_t portion = portion_keys(n, TILE);
  TopStats stats;
  const uint32_t *digits = stats.digits;
  uint32_t unsorted = 0;
  bool sampled = false;   /* the sample of the top digits first taken (sample_differences) */
  bool top_first = false; /* sorted by the top digits first */
  int first = -1, last = -1; /* the first and last passes that run */
  uint32_t launches = 0;     /* pass launches so far: their parity is the epoch */
  size_t clean_tiles = 0;    /* leading tiles whose entries are not of the next launch's epoch */
  K *src = keys, *dst = alt;
  V *vsrc = vals, *vdst = alt_vals;
  /* The nontrivial passes of digits [from, to], from src into dst and back: the first loads
   * through pio's map (and ranks as plain_first / mapped_first do), the last stores through it. */
  const auto run_passes = [&](int from, int to, const KeyIO<K> &pio) {
    int rc = H5G_OK, begin, end;
    nontrivial_span(digits, from, to, &begin, &end);
    for (int pass = begin; begin >= 0 && pass <= end; ++pass) {
      if (digits[pass] == 1) continue;
      const KeyMap<K> load = pio.on_load(pass == begin), store = pio.on_store(pass == end);
      const bool maps = !load.identity() || !store.identity();
      const auto kernel = pass == begin ? (maps ? mapped_first : plain_first)
                                        : (maps ? mapped : plain);
      const uint64_t *bins_in = s.bins + pass * RADIX;
      int p = 0;
      if (maps) /* the plain ones are set up before the histogram's counts are read */
        CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)smem));
      for (size_t begin_key = 0; begin_key < n; begin_key += portion, ++p) {
        const size_t end_key = n - begin_key < portion ? n : begin_key + portion;
        const size_t tiles = (end_key - begin_key + TILE - 1) / TILE;
        uint64_t *bins_out = s.portion_bins + (p & 1) * RADIX;
        /* Tiles the launch before did not have may hold entries of this launch's epoch (from
         * the launch before that: a portion's last launch has fewer tiles). */
        if (tiles > clean_tiles)
          CHECK_CUDA(cudaMemsetAsync(s.lookback + clean_tiles * RADIX, 0,
                                     (tiles - clean_tiles) * RADIX * sizeof(uint32_t), stream));
        kernel<<<(unsigned)tiles, BLOCK, smem, stream>>>(
            src, dst, begin_key, end_key, s.tile_counter, s.lookback,
            launches & 1 ? LOOKBACK_EPOCH : 0, bins_in, bins_out, pass * RADIX_BITS, vsrc, vdst,
            load, store);
        CHECK_CUDA(cudaGetLastError());
        ++launches;
        clean_tiles = tiles;
        bins_in = bins_out;
      }
      swap_ping_pong(src, dst, vsrc, vdst);
    }
  done:
    return rc;
  };
  if (!temp) {
    *temp_bytes = bytes;
    return H5G_OK;
  }
  if (*temp_bytes < bytes)
    H5G_FAIL(H5G_ERR_USAGE, "radix sort scratch of %zu bytes is smaller than the %zu needed",
             *temp_bytes, bytes);
  if (n < 2) {
    CHECK(io.untouched(keys, n, stream));
    goto done;
  }

  sampled = TOP_DIGITS_FIRST && n >= TOP_SAMPLE_MIN_KEYS;
  CHECK_CUDA(cudaMemsetAsync(s.counts, 0, s.cleared_bytes, stream));
  clean_tiles = s.lookback_tiles;
  CHECK(launch_histogram(keys, n, io.on_load(true), s, stream,
                         sampled ? s.stats->differ : nullptr));
  bins_kernel<<<PASSES, RADIX, 0, stream>>>(s.counts, s.bins, s.stats->digits);
  CHECK_CUDA(cudaGetLastError());
  if (sampled) /* differ and the passes' digits, one copy */
    CHECK_CUDA(cudaMemcpyAsync(&stats, s.stats,
                               offsetof(TopStats, digits) + PASSES * sizeof(uint32_t),
                               cudaMemcpyDeviceToHost, stream));
  else
    CHECK_CUDA(cudaMemcpyAsync(stats.digits, s.stats->digits, PASSES * sizeof(uint32_t),
                               cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaFuncSetAttribute(plain, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  if (!STABLE_FIRST)
    CHECK_CUDA(
        cudaFuncSetAttribute(plain_first, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  nontrivial_span(digits, 0, PASSES - 1, &first, &last);
  if (first < 0) { /* one key value: the keys are sorted as they are */
    CHECK(io.untouched(keys, n, stream));
    goto done;
  }

  if constexpr (TOP_DIGITS_FIRST) {
    const int top = top_digits_pass(digits, first, last, n);
    if (top > first && (!sampled || sample_allows_top(stats.differ, top, n))) {
      /* stored: the form the top passes leave the keys in; from_stored: every pass from there,
       * should a long run be out of order */
      const KeyMap<K> stored = io.on_store(true);
      const KeyIO<K> from_stored{io.map, io.raw_out, io.raw_out};
      const size_t chunk = (size_t)SEGMENT_BLOCK * SEGMENT_ITEMS,
                   blocks = (n + chunk - 1) / chunk < 2048 ? (n + chunk - 1) / chunk : 2048;
      CHECK(run_passes(top, PASSES - 1, io));
      CHECK_CUDA(cudaMemsetAsync(s.unsorted, 0, sizeof unsorted, stream));
      sort_short_segments<K><<<(unsigned)blocks, SEGMENT_BLOCK, 0, stream>>>(
          src, n, top * RADIX_BITS, stored, s.unsorted);
      CHECK_CUDA(cudaGetLastError());
      CHECK_CUDA(
          cudaMemcpyAsync(&unsorted, s.unsorted, sizeof unsorted, cudaMemcpyDeviceToHost, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
      if (unsorted) CHECK(run_passes(0, PASSES - 1, from_stored));
      top_first = true;
    }
  }
  if (!top_first) CHECK(run_passes(0, PASSES - 1, io));
  CHECK(copy_back_ping_pong(keys, src, vals, vsrc, n, stream));
done:
  return rc;
}

} // namespace onesweep
} // namespace h5g
#endif
