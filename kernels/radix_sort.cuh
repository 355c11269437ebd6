/* Onesweep LSD radix sort (Adinets & Merrill, "Onesweep: a faster least significant digit radix
 * sort for GPUs", 2022), 8-bit digits: the host driver (Driver, sort), its steps in headers of
 * their own. Templates on the key type and the tile shape, so that bench/local_sort.cu can time
 * other shapes than the tuned ones (radix_sort.cu, tuning.cuh).
 *
 * 1. histogram_kernel (onesweep_histogram.cuh): one read of the keys counts the digits of every
 *    pass at once (and one more block takes the top digits first's sample, below).
 * 2. bins_kernel (onesweep_histogram.cuh): per pass, the exclusive scan of the counts (where each
 *    digit's keys start in the output) and how many digits hold keys (one: the pass is trivial
 *    and skipped).
 * 3. pass_kernel (onesweep_pass.cuh), once per pass (and per portion of at most about
 *    ONESWEEP_PORTION keys): each block sorts a tile by the pass's digit and scatters it where
 *    the decoupled look-back over its predecessors' digit counts says. The look-back table is
 *    cleared once, with the histogram's counts; launches alternate an epoch bit in its entries.
 * Passes ping-pong between keys and alt; an odd count of passes ends with one copy back. A
 * sort of keys alone of up to 4 bytes ranks the first pass it runs unstably
 * (block_radix_rank.cuh: no warp match), the others stably.
 * Keys-only sorts of 64- and 128-bit keys take the top digits first when the histogram says
 * they could tell the keys apart (onesweep_segments.cuh, top_digits_pass: room for 16 times as
 * many values as keys): the passes of those digits alone, then sort_short_segments sorts each
 * run of keys with equal top digits in place (random keys: few runs, of a few keys). A run
 * longer than TIE_SEGMENT_MAX that is out of order sends the sort through every pass from there
 * (LSD passes sort any order): half the passes or fewer where the top digits tell the keys
 * apart; where the histogram misled (it sees each byte alone), the top passes and one read on
 * top of every pass. So from TOP_SAMPLE_MIN_KEYS keys on, one more block of the histogram kernel
 * sorts a sample of the keys (onesweep_sample.cuh, sample_differences), and neighbours in it
 * that share the top digits but differ, more than chance gives, send the sort through every
 * pass at once (sample_allows_top): long runs the sample sees (tied tops from 2^16 keys; a few
 * values among random keys from about 3.3 M) cost what every pass costs; others still the
 * fallback.
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

#include "kernels/check_cuda.cuh"
#include "kernels/key_map.cuh"
#include "kernels/onesweep_common.cuh"
#include "kernels/onesweep_histogram.cuh"
#include "kernels/onesweep_pass.cuh"
#include "kernels/onesweep_sample.cuh"
#include "kernels/onesweep_segments.cuh"
#include "kernels/tuning.cuh"
#include "kernels/util.cuh"

namespace h5g {
namespace onesweep {

/* One sort's host side, sort's template parameters: the pass kernels it launches, the scratch,
 * the ping-pong buffers and the look-back table's epochs; run() takes the steps in order. */
template <typename K, int BLOCK, int ITEMS, int MIN_BLOCKS, typename V, WarpMatch MATCH,
          bool WIDE_INDEX, bool ALL_STABLE>
struct Driver {
  using Narrow = Pass<K, BLOCK, ITEMS, MATCH, uint32_t, V>;
  using Wide = Pass<K, BLOCK, ITEMS, MATCH, uint64_t, V>;
  static constexpr size_t TILE = Narrow::TILE;
  static constexpr int PASSES = sizeof(K);
  static_assert(PASSES <= MAX_PASSES, "one pass per key byte");
  static_assert(ONESWEEP_PORTION + TILE - 1 <= LOOKBACK_VALUE, "a launch's counts fit an entry");
  /* The first pass of an LSD run sorts by its digit whatever order keys of one digit take, so a
   * sort of keys alone ranks it unstably (BlockRadixRank); with values every pass is stable. So
   * are those of 8 and 16-byte keys, whose passes the ranking does not bound (no gain: tuning.cuh,
   * WarpMatch) and whose top digits first counts on runs that come in order staying in order. */
  static constexpr bool STABLE_FIRST = has_values<V> || ALL_STABLE || sizeof(K) >= 8;
  /* keys alone of 64 and 128 bits may take the top digits first (top_digits_pass) */
  static constexpr bool TOP_DIGITS_FIRST = sizeof(K) >= 8 && !has_values<V>;
  template <bool MAPPED, bool STABLE> static auto instance(bool narrow) {
    return pass_instance<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, V, MAPPED, STABLE>(narrow);
  }
  using Kernel = decltype(&pass_kernel<K, BLOCK, ITEMS, MIN_BLOCKS, MATCH, uint32_t, V>);

  K *const keys;
  V *const vals;
  const size_t n;
  const cudaStream_t stream;
  const KeyIO<K> &io;
  /* 32-bit output indices whenever they address every key. */
  const bool narrow = !WIDE_INDEX && n <= ((size_t)1 << 32);
  const Kernel plain = instance<false, true>(narrow), mapped = instance<true, true>(narrow);
  const Kernel plain_first = instance<false, STABLE_FIRST>(narrow);
  const Kernel mapped_first = instance<true, STABLE_FIRST>(narrow);
  const size_t smem = narrow ? sizeof(typename Narrow::Storage) : sizeof(typename Wide::Storage);
  Scratch s{};
  const size_t bytes; /* of scratch */
  const size_t portion = portion_keys(n, TILE);
  TopStats stats;
  uint32_t launches = 0;  /* pass launches so far: their parity is the epoch */
  size_t clean_tiles = 0; /* leading tiles whose entries are not of the next launch's epoch */
  K *src, *dst;
  V *vsrc, *vdst;

  Driver(void *temp, K *keys, K *alt, size_t n, cudaStream_t stream, V *vals, V *alt_vals,
         const KeyIO<K> &io)
      : keys(keys), vals(vals), n(n), stream(stream), io(io), bytes(s.layout(temp, n, TILE)),
        src(keys), dst(alt), vsrc(vals), vdst(alt_vals) {}

  /* The histogram of every pass (with the sample when `sampled`), the passes' bins, and the
   * digits holding keys (and the sample's differences) back on the host. */
  int count_digits(bool sampled) {
    int rc = H5G_OK;
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
    /* the plain pass kernels are set up before the counts are read; the mapped ones as they run */
    CHECK_CUDA(
        cudaFuncSetAttribute(plain, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    if (!STABLE_FIRST)
      CHECK_CUDA(cudaFuncSetAttribute(plain_first, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)smem));
    CHECK_CUDA(cudaStreamSynchronize(stream));
  done:
    return rc;
  }

  /* Pass `pass` from src into dst, one launch per portion, each portion's bins handed to the
   * next; `first`: the first pass that runs (ranked as plain_first / mapped_first). */
  int run_pass(int pass, bool first, const KeyMap<K> &load, const KeyMap<K> &store) {
    int rc = H5G_OK;
    const bool maps = !load.identity() || !store.identity();
    const Kernel kernel = first ? (maps ? mapped_first : plain_first) : (maps ? mapped : plain);
    const uint64_t *bins_in = s.bins + pass * RADIX;
    int p = 0;
    if (maps)
      CHECK_CUDA(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
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
  done:
    return rc;
  }

  /* The nontrivial passes of digits [from, to], from src into dst and back: the first loads
   * through pio's map, the last stores through it. */
  int run_passes(int from, int to, const KeyIO<K> &pio) {
    int rc = H5G_OK, begin, end;
    nontrivial_span(stats.digits, from, to, &begin, &end);
    for (int pass = begin; begin >= 0 && pass <= end; ++pass) {
      if (stats.digits[pass] == 1) continue;
      CHECK(run_pass(pass, pass == begin, pio.on_load(pass == begin), pio.on_store(pass == end)));
      swap_ping_pong(src, dst, vsrc, vdst);
    }
  done:
    return rc;
  }

  /* The top digits first, where the histogram (top_digits_pass) and the sample, if `sampled`,
   * allow it (*taken): the top passes, then the short segments, then every pass should a long
   * segment be out of order. first..last: the nontrivial span of every pass. */
  int top_digits_first(bool sampled, int first, int last, bool *taken) {
    int rc = H5G_OK;
    const int top = top_digits_pass(stats.digits, first, last, n);
    /* stored: the form the top passes leave the keys in; from_stored: every pass from there */
    const KeyMap<K> stored = io.on_store(true);
    const KeyIO<K> from_stored{io.map, io.raw_out, io.raw_out};
    bool unsorted = false;
    *taken = false;
    if (top <= first || (sampled && !sample_allows_top(stats.differ, top, n))) goto done;
    CHECK(run_passes(top, PASSES - 1, io));
    CHECK(launch_short_segments(src, n, top * RADIX_BITS, stored, s.unsorted, &unsorted, stream));
    if (unsorted) CHECK(run_passes(0, PASSES - 1, from_stored));
    *taken = true;
  done:
    return rc;
  }

  /* The sort, scratch carved: digits counted, then the top digits first or every pass, and the
   * result copied back into keys (and vals) where the last pass left it in alt. */
  int run() {
    int rc = H5G_OK, first = -1, last = -1; /* the first and last passes that run */
    /* the sample of the top digits first taken (sample_differences) */
    const bool sampled = TOP_DIGITS_FIRST && n >= TOP_SAMPLE_MIN_KEYS;
    bool top_first = false; /* sorted by the top digits first */
    if (n < 2) {
      CHECK(io.untouched(keys, n, stream));
      goto done;
    }
    CHECK(count_digits(sampled));
    nontrivial_span(stats.digits, 0, PASSES - 1, &first, &last);
    if (first < 0) { /* one key value: the keys are sorted as they are */
      CHECK(io.untouched(keys, n, stream));
      goto done;
    }
    if constexpr (TOP_DIGITS_FIRST) CHECK(top_digits_first(sampled, first, last, &top_first));
    if (!top_first) CHECK(run_passes(0, PASSES - 1, io));
    CHECK(copy_back_ping_pong(keys, src, vals, vsrc, n, stream));
  done:
    return rc;
  }
};

/* Sorts keys[0..n) (alt: n keys of scratch); with values, vals[i] moves with keys[i] (alt_vals:
 * n values of scratch) and equal keys keep their order. `io` says whether the keys come and go
 * as raw keys or as ordered bits (key_map.cuh; the order is always that of the ordered bits).
 * WIDE_INDEX forces 64-bit output indices, ALL_STABLE the stable ranking in every pass
 * (bench_local_sort measures what 32-bit indices and the unstable first pass save). With
 * temp == NULL, *temp_bytes receives the scratch size. */
template <typename K, int BLOCK, int ITEMS, int MIN_BLOCKS, typename V = NoValue,
          WarpMatch MATCH = ONESWEEP_MATCH, bool WIDE_INDEX = false, bool ALL_STABLE = false>
int sort(void *temp, size_t *temp_bytes, K *keys, K *alt, size_t n, cudaStream_t stream,
         V *vals = nullptr, V *alt_vals = nullptr, const KeyIO<K> &io = KeyIO<K>::ordered()) {
  int rc = H5G_OK;
  Driver<K, BLOCK, ITEMS, MIN_BLOCKS, V, MATCH, WIDE_INDEX, ALL_STABLE> driver(
      temp, keys, alt, n, stream, vals, alt_vals, io);
  if (!temp) {
    *temp_bytes = driver.bytes;
    return H5G_OK;
  }
  if (*temp_bytes < driver.bytes)
    H5G_FAIL(H5G_ERR_USAGE, "radix sort scratch of %zu bytes is smaller than the %zu needed",
             *temp_bytes, driver.bytes);
  CHECK(driver.run());
done:
  return rc;
}

} // namespace onesweep
} // namespace h5g
#endif
