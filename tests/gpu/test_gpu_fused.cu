/* The key transforms fused into the sort and merge kernels (kernels/key_map.cuh; kernels.h's
 * _typed routines) for every key class and width (integers of 1 to 16 bytes, floats of 4 and
 * 8), ascending and descending (floats: NaNs at numpy's place, first and last: --na-position),
 * raw keys or ordered bits in and out, against the CPU reference:
 * base/keys.c's transform, then std::stable_sort of the ordered bits (bit for bit, values too),
 * and on its own the numpy order of the raw keys that come out (typed_keys.hpp: no code of
 * base/keys.c).
 * - h5g_cuda_radix_sort_typed and h5g_cuda_sort_typed (the bitonic sort for small n): keys alone
 *   and with values (stable), every distribution (typed_keys.hpp's too: bytes constant in the raw
 *   keys but not in their ordered bits and the other way, a first pass skipped, the last ones
 *   skipped, all keys equal so that no pass runs), special values (NaN payloads, -0.0,
 *   infinities, extremes) in each, sizes around the tiles and the bitonic limit;
 * - h5g_cuda_merge_runs_typed: sorted runs of ordered bits (1, 2, 5 and 64 runs, some empty)
 *   merged into raw keys, keys alone and with values (earlier runs first); raw runs refused.
 * Usage: test_gpu_fused [large | small]: "large" sorts 2^28 + 12345 raw float32 keys (two
 * onesweep portions) and 2^28 raw int64 keys; "small" keeps n <= 8193. */
#include "kernels/kernels.h"
#include "kernels/tuning.cuh"
#include "tests/support/check_cuda.h"
#include "tests/support/device_pairs.hpp"
#include "tests/support/keys.hpp"
#include "tests/support/typed_keys.hpp"

static const char *io_name(unsigned raw) {
  static const char *names[4] = {"bits->bits", "raw->bits", "bits->raw", "raw->raw"};
  return names[raw & 3];
}

/* What a typed sort or merge must give: the records sorted by ordered bits (stable), as ordered
 * bits (bits) and as raw keys (raw); the input's values are ~position. */
template <typename K> struct Expected {
  Records<K> bits, raw;
};

template <typename K>
Expected<K> expected(const std::vector<K> &ordered, const std::vector<uint64_t> &values,
                     const h5g_keyspec *ks) {
  Expected<K> e{stable_sorted(ordered, values, 0, ordered.size()), {}};
  e.raw = e.bits;
  h5g_keys_from_ordered(e.raw.keys.data(), e.raw.keys.size(), ks);
  return e;
}

/* got (Device::download checked the guards) against the expected records of the `raw` form;
 * values only when they moved. */
template <typename K>
void expect_records(const Pairs<K> &got, const Expected<K> &e, unsigned raw, bool values,
                    const h5g_keyspec *ks, const char *what, size_t n, int dist) {
  const Records<K> &want = raw & H5G_CUDA_RAW_OUT ? e.raw : e.bits;
  const size_t wrong_order = raw & H5G_CUDA_RAW_OUT ? out_of_order(got.keys.data(), n, ks) : 0;
  const bool keys_equal = got.keys == want.keys, values_equal = got.vals == want.values;
  EXPECT(keys_equal && (!values || values_equal) && wrong_order == 0,
         "%s %s, class %d %u-byte desc %d na %d, n %zu %s%s: %s%s%s", what, io_name(raw),
         ks->cls, ks->width, ks->descending, ks->na, n, typed_dist_name(dist),
         values ? ", values" : "",
         keys_equal ? "" : "keys differ; ", !values || values_equal ? "" : "values differ; ",
         wrong_order ? "out of numpy order" : "");
}

enum Routine { RADIX, DISPATCH };

/* One input through every form in and out (and both routines where they differ). */
template <typename K>
void check_sort(const h5g_keyspec *ks, size_t n, int dist, bool values, cudaStream_t stream) {
  const std::vector<K> raw_keys = typed_keys<K>(n, dist, ks, 11 + dist + 5 * ks->cls);
  std::vector<K> ordered(raw_keys);
  h5g_keys_to_ordered(ordered.data(), n, ks);
  std::vector<uint64_t> source(n);
  for (size_t i = 0; i < n; ++i) source[i] = ~(uint64_t)i;
  const Expected<K> e = expected(ordered, source, ks);
  Device<K> d(n);
  uint64_t *vals = values ? d.vals : NULL, *alt_vals = values ? d.alt_vals : NULL;
  size_t scratch = 0;
  /* each routine sizes its scratch, as callers do (the same: the dispatcher's is the radix's) */
  for (const auto sort : {h5g_cuda_radix_sort_typed, h5g_cuda_sort_typed}) {
    size_t bytes = 0;
    MUST_OK(sort(NULL, &bytes, NULL, NULL, vals, NULL, n, ks, 0, stream));
    scratch = std::max(scratch, bytes);
  }
  d.reserve(scratch);
  for (Routine routine : {RADIX, DISPATCH}) {
    /* the dispatcher is the radix sort with values and above twice the bitonic limit */
    if (routine == DISPATCH && (values || n > 2 * h5g_cuda_bitonic_max(sizeof(K)))) continue;
    const auto sort = routine == RADIX ? h5g_cuda_radix_sort_typed : h5g_cuda_sort_typed;
    for (unsigned raw = 0; raw < 4; ++raw) {
      d.upload(Pairs<K>{raw & H5G_CUDA_RAW_IN ? raw_keys : ordered, source}, stream);
      size_t bytes = scratch;
      MUST_OK(sort(d.temp, &bytes, d.keys, d.alt, vals, alt_vals, n, ks, raw, stream));
      expect_records(d.download(stream), e, raw, values, ks,
                     routine == RADIX ? "radix sort" : "dispatched sort", n, dist);
    }
  }
}

/* nruns sorted runs of ordered bits (lengths pseudo-random, some empty), merged into raw keys
 * and into ordered bits. */
template <typename K>
void check_merge(const h5g_keyspec *ks, size_t n, int dist, size_t nruns, bool values,
                 cudaStream_t stream) {
  std::vector<K> ordered = typed_keys<K>(n, dist, ks, 23 + nruns);
  h5g_keys_to_ordered(ordered.data(), n, ks);
  std::vector<uint64_t> offsets(nruns + 1, 0), source(n);
  uint64_t s = n * 31 + nruns;
  for (size_t r = 1; r < nruns; ++r)
    offsets[r] = test_rand(&s) % 4 == 0 ? 0 : test_rand(&s) % (n + 1);
  offsets[nruns] = n;
  std::sort(offsets.begin(), offsets.end());
  for (size_t i = 0; i < n; ++i) source[i] = ~(uint64_t)i;
  Records<K> runs{ordered, source};
  for (size_t r = 0; r < nruns; ++r) {
    const Records<K> one = stable_sorted(ordered, source, offsets[r], offsets[r + 1]);
    std::copy(one.keys.begin(), one.keys.end(), runs.keys.begin() + offsets[r]);
    std::copy(one.values.begin(), one.values.end(), runs.values.begin() + offsets[r]);
  }
  const Expected<K> e = expected(runs.keys, runs.values, ks);
  Device<K> d(n);
  uint64_t *vals = values ? d.vals : NULL, *alt_vals = values ? d.alt_vals : NULL;
  size_t scratch = 0;
  MUST_OK(h5g_cuda_merge_runs_typed(NULL, &scratch, NULL, NULL, vals, NULL, n, ks, 0, NULL, nruns,
                                    stream));
  d.reserve(scratch);
  for (unsigned raw : {0u, H5G_CUDA_RAW_OUT}) {
    d.upload(Pairs<K>{runs.keys, runs.values}, stream);
    size_t bytes = scratch;
    MUST_OK(h5g_cuda_merge_runs_typed(d.temp, &bytes, d.keys, d.alt, vals, alt_vals, n, ks, raw,
                                      offsets.data(), nruns, stream));
    char what[48];
    snprintf(what, sizeof what, "merge of %zu runs", nruns);
    expect_records(d.download(stream), e, raw, values, ks, what, n, dist);
  }
}

template <typename K> void check_spec(const h5g_keyspec *ks) {
  cudaStream_t stream;
  MUST_CUDA(cudaStreamCreate(&stream));
  const size_t tile = (size_t)h5g::OnesweepTuning<sizeof(K)>::BLOCK *
                      h5g::OnesweepTuning<sizeof(K)>::ITEMS;
  const size_t pair_tile = (size_t)h5g::OnesweepPairsTuning<sizeof(K)>::BLOCK *
                           h5g::OnesweepPairsTuning<sizeof(K)>::ITEMS;
  const size_t bitonic = h5g_cuda_bitonic_max(sizeof(K));
  std::vector<size_t> sizes = {0, 1, 2, 3, 33, 1000, bitonic - 1, bitonic, bitonic + 1, tile - 1,
                               tile, tile + 1, 2 * tile + 1, pair_tile + 1, 65537, 1000003};
  for (size_t n : sizes) {
    if (g_small && n > 8193) continue;
    for (int dist = 0; dist < NDIST_TYPED; ++dist) {
      /* above 65537 keys: the distributions of skipped passes, and values with random keys */
      const bool big = n > 65537;
      if (big && dist != RANDOM && dist != OCTAVE && dist != SPAN && dist != LOW_BITS) continue;
      check_sort<K>(ks, n, dist, false, stream);
      if (!big || dist == RANDOM) check_sort<K>(ks, n, dist, true, stream);
      if (n <= 65537 || dist == RANDOM)
        for (size_t nruns : {1, 2, 5, 64}) check_merge<K>(ks, n, dist, nruns, dist % 2, stream);
    }
  }
  cudaStreamDestroy(stream);
  printf("class %d, %u-byte keys, descending %d done\n", ks->cls, ks->width, ks->descending);
}

/* 2^28 + 12345 float32 keys (two portions of the onesweep sort) and 2^28 int64 keys, raw in and
 * out: numpy order and the multiset of bit patterns (std::stable_sort of 2^28 keys would take
 * minutes). */
template <typename K> void check_large(h5g_key_class cls, size_t n) {
  const h5g_keyspec ks = {cls, (unsigned)sizeof(K), 0};
  const std::vector<K> input = typed_keys<K>(n, RANDOM, &ks, 3);
  std::vector<K> got(n);
  K *keys = NULL, *alt = NULL;
  void *temp = NULL;
  size_t bytes = 0;
  MUST_OK(h5g_cuda_sort_typed(NULL, &bytes, NULL, NULL, NULL, NULL, n, &ks, 0, 0));
  MUST_CUDA(cudaMalloc(&keys, n * sizeof(K)));
  MUST_CUDA(cudaMalloc(&alt, n * sizeof(K)));
  MUST_CUDA(cudaMalloc(&temp, bytes));
  MUST_CUDA(cudaMemcpy(keys, input.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  MUST_OK(h5g_cuda_sort_typed(temp, &bytes, keys, alt, NULL, NULL, n, &ks,
                              H5G_CUDA_RAW_IN | H5G_CUDA_RAW_OUT, 0));
  MUST_CUDA(cudaMemcpy(got.data(), keys, n * sizeof(K), cudaMemcpyDeviceToHost));
  const size_t wrong = out_of_order(got.data(), n, &ks);
  EXPECT(wrong == 0 && multiset_checksum(got.data(), n) == multiset_checksum(input.data(), n),
         "large sort, class %d %zu-byte n %zu: %zu pairs out of order%s", cls, sizeof(K), n, wrong,
         multiset_checksum(got.data(), n) == multiset_checksum(input.data(), n)
             ? "" : ", bit patterns lost");
  cudaFree(temp);
  cudaFree(alt);
  cudaFree(keys);
}

int main(int argc, char **argv) {
  require_gpu();
  parse_args(argc, argv);
  if (argc > 1 && strcmp(argv[1], "large") == 0) {
    check_large<uint32_t>(H5G_KEY_FLOAT, ((size_t)1 << 28) + 12345);
    check_large<uint64_t>(H5G_KEY_SIGNED, (size_t)1 << 28);
    return test_summary("test_gpu_fused large");
  }
  for (h5g_key_class cls : {H5G_KEY_FLOAT, H5G_KEY_SIGNED, H5G_KEY_UNSIGNED})
    for (unsigned width : {4u, 8u, 1u, 2u, 16u}) {
      if (cls == H5G_KEY_FLOAT && width != 4 && width != 8) continue;
      for (int descending = 0; descending < 2; ++descending)
        for (h5g_na_position na : {H5G_NA_DEFAULT, H5G_NA_FIRST, H5G_NA_LAST}) {
          if (cls != H5G_KEY_FLOAT && na != H5G_NA_DEFAULT) continue; /* integers: no NaN */
          const h5g_keyspec ks = {cls, width, descending, na};
          switch (width) {
          case 1: check_spec<uint8_t>(&ks); break;
          case 2: check_spec<uint16_t>(&ks); break;
          case 4: check_spec<uint32_t>(&ks); break;
          case 8: check_spec<uint64_t>(&ks); break;
          default: check_spec<u128>(&ks); break;
          }
        }
    }
  /* refused: raw runs to merge, floats of other than 4 or 8 bytes */
  const h5g_keyspec f4 = {H5G_KEY_FLOAT, 4, 0}, f2 = {H5G_KEY_FLOAT, 2, 0};
  const uint64_t offsets[2] = {0, 0};
  size_t bytes = 0;
  EXPECT(h5g_cuda_merge_runs_typed(&bytes, &bytes, NULL, NULL, NULL, NULL, 0, &f4,
                                   H5G_CUDA_RAW_IN, offsets, 1, 0) == H5G_ERR_USAGE,
         "merge of raw runs accepted");
  EXPECT(h5g_cuda_radix_sort_typed(NULL, &bytes, NULL, NULL, NULL, NULL, 10, &f2, 0, 0) ==
             H5G_ERR_USAGE, "16-bit float sort accepted");
  EXPECT(h5g_cuda_sort_typed(NULL, &bytes, NULL, NULL, NULL, NULL, 10, &f2, 0, 0) ==
             H5G_ERR_USAGE, "16-bit float dispatched sort accepted");
  h5g_error_clear();
  return test_summary("test_gpu_fused");
}
