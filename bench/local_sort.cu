/* bench_local_sort: the local GPU sort of kernels/ against cub::DeviceRadixSort::SortKeys, in one
 * process, on the same data (device-generated), timed with CUDA events: 2 warm-up runs, then the
 * median of REPS. Our sorts take the raw keys (signed, float, descending) and give raw keys back:
 * the key transforms fused into the sort's kernels, and timed beside it the older way with a
 * transform pass before and after the sort ("unfused").
 * Every configuration's output is compared with CUB's (exact bits) before it is timed.
 * Also times the bitonic / radix crossover and merge path against a re-sort.
 * "pairs": the stable key+value sort (uint64 values) two ways, the product's (values moved every
 * pass, h5g_cuda_radix_sort) and a 32-bit index moved instead, then one gather (sort_via_index
 * below, kept for that measurement), against cub::DeviceRadixSort::SortPairs, and the payload
 * gather by index on the GPU (copies included) against the host's memcpy loop.
 * Keys of 32, 64 and 128 bits (uint128: composed keys, issue #17; CUB in CUDA 13 sorts
 * __uint128_t keys, cub/util_type.cuh's NumericTraits<__uint128_t>, so it stays the reference).
 *
 * Usage: bench_local_sort [max_log2_n (default 28; 29 where memory allows)] [sections]
 *   sections: comma-separated of crossover, merge, histogram, variants, first, main, dists, pairs (default
 *   crossover,merge,main); "dists" times 64- and 128-bit keys of other distributions (fill_kernel)
 *   at 2^16, 2^20, 2^24 and 2^max_log2_n, random ones beside them; "histogram" times the upfront
 *   histogram kernel in block sizes and counter copies (tuning.cuh); "variants" times onesweep
 *   variants (tile shape, warp match, index width: the measurements behind tuning.cuh) and CUB
 *   side by side at 2^26..2^max_log2_n (at most 2^28; 32-bit rows with the build's unstable
 *   first pass, so not comparable with tables before 2026-11-27 12:00 UTC); "first" the unstable
 *   first pass of a sort of 32-bit keys alone against a stable one;
 *   "profile" (uint32) or "profile64" (uint64) alone sorts 2^max_log2_n random keys with ours,
 *   then with CUB's, twice each, the second round warm (for a profiler). */
#include <algorithm>
#include <chrono>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "kernels/kernels.h"
#include "kernels/radix_sort.cuh"
#include "base/error.h"
#include "tests/support/check_cuda.h"

static const int REPS = 7;

/* 128-bit keys: several keys composed into one (issue #17). */
typedef unsigned __int128 u128;

__device__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Random keys: full-width random bits for integers (two draws for 128 bits), uniform values in
 * [-1e6, 1e6) for floats. The "dists" section's other distributions, of unsigned keys (the ways
 * of the radix sort's top digits first, radix_sort.cuh): TIED, a top half from 4096 random
 * values above a random bottom half (every top byte takes most values, yet long runs share a
 * top half, out of order); FILLED, every fourth key one fill value among random keys (one long
 * run, in order); CLUSTERED, every 64th key 0 or 1 in turn among random keys (one long run, out
 * of order, as the tests' extremes). */
enum FillDist { RANDOM_KEYS, TIED, FILLED, CLUSTERED };
template <typename T>
__global__ void fill_kernel(T *keys, uint64_t n, uint64_t seed, FillDist dist = RANDOM_KEYS) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t z = mix64((i + 1) * 0x9e3779b97f4a7c15ull + seed);
    if constexpr ((T)0.5 != 0) keys[i] = (T)((double)(z >> 11) * 0x1p-53 * 2e6 - 1e6);
    else if constexpr (sizeof(T) == 16) keys[i] = (T)z << 64 | mix64(z ^ seed);
    else keys[i] = (T)z;
    if constexpr ((T)0.5 == 0 && (T)-1 > (T)0) { /* unsigned keys alone */
      constexpr int half = 4 * sizeof(T);
      if (dist == TIED) {
        T top = (T)mix64(z % 4096 + seed);
        if constexpr (sizeof(T) == 16) top <<= 64;
        keys[i] = (T)(top >> half << half) | (T)(keys[i] >> half);
      }
      if (dist == FILLED && i % 4 == 0) keys[i] = (T)(~(T)0 / 3);
      if (dist == CLUSTERED && i % 64 == 0) keys[i] = (T)(i / 64 % 2);
    }
  }
}

__global__ void count_diff_kernel(const uint8_t *a, const uint8_t *b, uint64_t bytes,
                                  unsigned long long *diff) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < bytes; i += (uint64_t)gridDim.x * blockDim.x)
    if (a[i] != b[i]) atomicAdd(diff, 1ull);
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/* Times f() (stream-ordered work on `stream`) after `setup()` each time; returns the median ms. */
template <typename Setup, typename F>
static float time_median(cudaStream_t stream, int reps, Setup setup, F f) {
  cudaEvent_t start, stop;
  MUST_CUDA(cudaEventCreate(&start));
  MUST_CUDA(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int r = -2; r < reps; ++r) {
    setup();
    MUST_CUDA(cudaEventRecord(start, stream));
    f();
    MUST_CUDA(cudaEventRecord(stop, stream));
    MUST_CUDA(cudaEventSynchronize(stop));
    float t;
    MUST_CUDA(cudaEventElapsedTime(&t, start, stop));
    if (r >= 0) ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(ms);
}

template <typename T> struct KeyInfo;
template <> struct KeyInfo<uint32_t> { static constexpr h5g_key_class cls = H5G_KEY_UNSIGNED; static constexpr const char *name = "uint32"; };
template <> struct KeyInfo<int32_t> {
  static constexpr h5g_key_class cls = H5G_KEY_SIGNED;
  static constexpr const char *name = "int32";
};
template <> struct KeyInfo<float> { static constexpr h5g_key_class cls = H5G_KEY_FLOAT; static constexpr const char *name = "float32"; };
template <> struct KeyInfo<uint64_t> { static constexpr h5g_key_class cls = H5G_KEY_UNSIGNED; static constexpr const char *name = "uint64"; };
template <> struct KeyInfo<int64_t> { static constexpr h5g_key_class cls = H5G_KEY_SIGNED; static constexpr const char *name = "int64"; };
template <> struct KeyInfo<double> { static constexpr h5g_key_class cls = H5G_KEY_FLOAT; static constexpr const char *name = "float64"; };
template <> struct KeyInfo<u128> { static constexpr h5g_key_class cls = H5G_KEY_UNSIGNED; static constexpr const char *name = "uint128"; };

static unsigned long long count_diff(const void *a, const void *b, size_t bytes,
                                     unsigned long long *diff, cudaStream_t stream) {
  unsigned long long host_diff = 0;
  MUST_CUDA(cudaMemsetAsync(diff, 0, sizeof(*diff), stream));
  count_diff_kernel<<<1024, 256, 0, stream>>>((const uint8_t *)a, (const uint8_t *)b, bytes, diff);
  MUST_CUDA(cudaMemcpyAsync(&host_diff, diff, sizeof(host_diff), cudaMemcpyDeviceToHost, stream));
  MUST_CUDA(cudaStreamSynchronize(stream));
  return host_diff;
}

/* One row of the main table: our sort and CUB's on the same 2^log2n raw keys, ascending or
 * descending (CUB's SortKeysDescending). Ours is the product's: h5g_cuda_radix_sort_typed with
 * raw keys in and out, the key transforms fused into its kernels; "unfused" is the sort as it was
 * before (#30): a transform pass to ordered bits, the sort of the bits, a pass back (signed, float
 * and descending keys only; "-" where no transform is needed). */
template <typename T>
static void bench_type(int log2n, bool descending, cudaStream_t stream, bool *mismatch,
                       FillDist dist = RANDOM_KEYS) {
  const size_t n = (size_t)1 << log2n, bytes = n * sizeof(T);
  const unsigned width = sizeof(T);
  const h5g_keyspec ks = {KeyInfo<T>::cls, width, descending};
  const bool transformed = ks.cls != H5G_KEY_UNSIGNED || descending;
  const unsigned raw = H5G_CUDA_RAW_IN | H5G_CUDA_RAW_OUT;
  char name[24];
  static const char *const dist_suffix[] = {"", " tied", " filled", " clustered"};
  snprintf(name, sizeof name, "%s%s%s", KeyInfo<T>::name, descending ? " desc" : "",
           dist_suffix[dist]);
  size_t free_bytes, total;
  MUST_CUDA(cudaMemGetInfo(&free_bytes, &total));
  size_t our_temp_bytes = 0, cub_temp_bytes = 0;
  MUST_OK(h5g_cuda_radix_sort_typed(NULL, &our_temp_bytes, NULL, NULL, NULL, NULL, n, &ks, raw,
                                    stream));
  MUST_CUDA(cub::DeviceRadixSort::SortKeys(NULL, cub_temp_bytes, (const T *)NULL, (T *)NULL, n, 0,
                                           8 * width, stream));
  if (3 * bytes + std::max(our_temp_bytes, cub_temp_bytes) + (256 << 20) > free_bytes) {
    printf("%-17s 2^%-3d  (skipped: needs more device memory)\n", name, log2n);
    return;
  }
  T *src, *keys, *alt;
  void *temp;
  unsigned long long *diff;
  MUST_CUDA(cudaMalloc(&src, bytes));
  MUST_CUDA(cudaMalloc(&keys, bytes));
  MUST_CUDA(cudaMalloc(&alt, bytes));
  MUST_CUDA(cudaMalloc(&temp, std::max(our_temp_bytes, cub_temp_bytes)));
  MUST_CUDA(cudaMalloc(&diff, sizeof(*diff)));
  fill_kernel<T><<<1024, 256, 0, stream>>>(src, n, 12345 + log2n, dist);
  MUST_CUDA(cudaGetLastError());

  auto reset = [&] {
    MUST_CUDA(cudaMemcpyAsync(keys, src, bytes, cudaMemcpyDeviceToDevice, stream));
  };
  auto ours = [&] {
    MUST_OK(h5g_cuda_radix_sort_typed(temp, &our_temp_bytes, keys, alt, NULL, NULL, n, &ks, raw,
                                      stream));
  };
  auto unfused = [&] {
    MUST_OK(h5g_cuda_keys_transform(keys, n, &ks, 0, stream));
    MUST_OK(h5g_cuda_radix_sort(temp, &our_temp_bytes, keys, alt, NULL, NULL, n, width, stream));
    MUST_OK(h5g_cuda_keys_transform(keys, n, &ks, 1, stream));
  };
  auto cub_sort = [&] {
    if (descending)
      MUST_CUDA(cub::DeviceRadixSort::SortKeysDescending(temp, cub_temp_bytes, (const T *)src,
                                                         alt, n, 0, 8 * width, stream));
    else
      MUST_CUDA(cub::DeviceRadixSort::SortKeys(temp, cub_temp_bytes, (const T *)src, alt, n, 0,
                                               8 * width, stream));
  };
  /* Correctness first: ours and the unfused sort (in keys) against CUB (in alt), bit for bit. */
  unsigned long long host_diff = 0;
  for (int way = 0; way < (transformed ? 2 : 1); ++way) {
    reset();
    if (way == 0) ours();
    else unfused();
    cub_sort();
    host_diff += count_diff(keys, alt, bytes, diff, stream);
  }
  if (host_diff) *mismatch = true;

  const float ours_ms = time_median(stream, REPS, reset, ours);
  const float unfused_ms = transformed ? time_median(stream, REPS, reset, unfused) : 0;
  const float cub_ms = time_median(stream, REPS, [] {}, cub_sort);
  char unfused_text[16] = "-";
  if (transformed) snprintf(unfused_text, sizeof unfused_text, "%.3f", unfused_ms);
  printf("%-17s 2^%-3d %10.3f %10s %10.3f %9.2f %9.2f %7.2f%s\n", name, log2n, ours_ms,
         unfused_text, cub_ms, n / ours_ms / 1e6, n / cub_ms / 1e6, cub_ms / ours_ms,
         host_diff ? "  MISMATCH" : "");
  fflush(stdout);
  cudaFree(diff);
  cudaFree(temp);
  cudaFree(alt);
  cudaFree(keys);
  cudaFree(src);
}

/* Bitonic sort against the radix sort for small n: the crossover of h5g_cuda_sort. */
template <typename T> static void bench_crossover(cudaStream_t stream) {
  const size_t max_n = h5g_cuda_bitonic_max(sizeof(T));
  T *src, *keys, *alt;
  void *temp;
  size_t temp_bytes = 0;
  MUST_OK(h5g_cuda_radix_sort(NULL, &temp_bytes, NULL, NULL, NULL, NULL, max_n, sizeof(T), stream));
  MUST_CUDA(cudaMalloc(&src, max_n * sizeof(T)));
  MUST_CUDA(cudaMalloc(&keys, max_n * sizeof(T)));
  MUST_CUDA(cudaMalloc(&alt, max_n * sizeof(T)));
  MUST_CUDA(cudaMalloc(&temp, temp_bytes));
  fill_kernel<T><<<64, 256, 0, stream>>>(src, max_n, 7);
  for (size_t n = 64; n <= max_n; n *= 2) {
    auto reset = [&] { MUST_CUDA(cudaMemcpyAsync(keys, src, n * sizeof(T), cudaMemcpyDeviceToDevice, stream)); };
    const float bitonic = time_median(stream, 21, reset, [&] { MUST_OK(h5g_cuda_bitonic_sort(keys, n, sizeof(T), stream)); });
    const float radix = time_median(stream, 21, reset, [&] {
      MUST_OK(h5g_cuda_radix_sort(temp, &temp_bytes, keys, alt, NULL, NULL, n, sizeof(T), stream));
    });
    printf("%-8s %6zu %10.4f %10.4f\n", KeyInfo<T>::name, n, bitonic, radix);
  }
  cudaFree(temp);
  cudaFree(alt);
  cudaFree(keys);
  cudaFree(src);
}

/* Merge of P sorted runs (merge path rounds) against a re-sort of the same keys. */
template <typename T> static void bench_merge(int log2n, cudaStream_t stream) {
  const size_t n = (size_t)1 << log2n, bytes = n * sizeof(T);
  T *src, *keys, *alt;
  void *temp;
  size_t sort_temp = 0, merge_temp = 0;
  MUST_OK(h5g_cuda_radix_sort(NULL, &sort_temp, NULL, NULL, NULL, NULL, n, sizeof(T), stream));
  MUST_CUDA(cudaMalloc(&src, bytes));
  MUST_CUDA(cudaMalloc(&keys, bytes));
  MUST_CUDA(cudaMalloc(&alt, bytes));
  fill_kernel<T><<<1024, 256, 0, stream>>>(src, n, 99);
  for (size_t p : {2, 4, 8, 16, 64, 256}) {
    std::vector<uint64_t> offsets(p + 1);
    for (size_t r = 0; r <= p; ++r) offsets[r] = n / p * r;
    offsets[p] = n;
    MUST_OK(h5g_cuda_merge_runs(NULL, &merge_temp, NULL, NULL, NULL, NULL, n, sizeof(T), offsets.data(), p, stream));
    MUST_CUDA(cudaMalloc(&temp, std::max(sort_temp, merge_temp)));
    /* Sort each run once (untimed) into src, so every repetition merges the same sorted runs. */
    for (size_t r = 0; r < p; ++r)
      MUST_OK(h5g_cuda_radix_sort(temp, &sort_temp, src + offsets[r], alt, NULL, NULL, offsets[r + 1] - offsets[r], sizeof(T), stream));
    auto reset = [&] { MUST_CUDA(cudaMemcpyAsync(keys, src, bytes, cudaMemcpyDeviceToDevice, stream)); };
    const float merge = time_median(stream, REPS, reset, [&] {
      MUST_OK(h5g_cuda_merge_runs(temp, &merge_temp, keys, alt, NULL, NULL, n, sizeof(T), offsets.data(), p, stream));
    });
    const float resort = time_median(stream, REPS, reset, [&] {
      MUST_OK(h5g_cuda_radix_sort(temp, &sort_temp, keys, alt, NULL, NULL, n, sizeof(T), stream));
    });
    printf("%-8s 2^%-3d %5zu %10.3f %10.3f\n", KeyInfo<T>::name, log2n, p, merge, resort);
    cudaFree(temp);
  }
  cudaFree(alt);
  cudaFree(keys);
  cudaFree(src);
}


template <typename T> __global__ void mask_kernel(T *keys, uint64_t n, T mask) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    keys[i] &= mask;
}


/* The other way of a stable key+value sort, measured against the product's (which moves the
 * uint64 values with the keys every pass, 8 + 8 bytes of value traffic per pass): the onesweep
 * sort moves a 32-bit position instead (4 + 4 bytes per pass), then one gather puts each uint64
 * value where its position went and a copy brings them back; needs n < 2^32 and 2 x 4 bytes per
 * pair of scratch. Slower at every width on H200 (2^28 pairs, uint64 keys: 35.6 ms vs 29.2): the
 * random 8-byte gather, the index initialisation and the copy back cost more than the 4 bytes a
 * pass saves (bench/RESULTS.md, "GPU record sort"). Stable: the onesweep passes are. */
__global__ void iota32_kernel(uint32_t *idx, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    idx[i] = (uint32_t)i;
}

__global__ void gather_kernel(const uint64_t *__restrict__ vals, const uint32_t *__restrict__ idx,
                              uint64_t *__restrict__ out, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
    out[i] = vals[idx[i]];
}

template <typename K>
static int sort_via_index(void *temp, size_t *temp_bytes, K *keys, K *alt, uint64_t *vals, uint64_t *alt_vals,
                          size_t n, cudaStream_t stream) {
  using T = h5g::OnesweepPairsTuning<sizeof(K)>; /* the product's pair tile shape */
  int rc = H5G_OK;
  size_t sort_bytes = 0;
  CHECK((h5g::onesweep::sort<K, T::BLOCK, T::ITEMS, T::MIN_BLOCKS, uint32_t>(NULL, &sort_bytes, keys, alt, n,
                                                                             stream)));
  {
    h5g::ScratchLayout s{(char *)temp, 0};
    void *sort_temp = s.take<char>(sort_bytes);
    uint32_t *idx = s.take<uint32_t>(n), *alt_idx = s.take<uint32_t>(n);
    const unsigned blocks = (unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
    if (!temp) {
      *temp_bytes = s.used;
      return H5G_OK;
    }
    if (*temp_bytes < s.used)
      H5G_FAIL(H5G_ERR_USAGE, "pair sort scratch of %zu bytes is smaller than the %zu needed", *temp_bytes, s.used);
    if (n >> 32) H5G_FAIL(H5G_ERR_USAGE, "a 32-bit index sorts fewer than 2^32 pairs, not %zu", n);
    if (n < 2) goto done;
    iota32_kernel<<<blocks, 256, 0, stream>>>(idx, n);
    CHECK_CUDA(cudaGetLastError());
    CHECK((h5g::onesweep::sort<K, T::BLOCK, T::ITEMS, T::MIN_BLOCKS, uint32_t>(sort_temp, &sort_bytes, keys, alt, n,
                                                                               stream, idx, alt_idx)));
    gather_kernel<<<blocks, 256, 0, stream>>>(vals, idx, alt_vals, n);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpyAsync(vals, alt_vals, n * sizeof(uint64_t), cudaMemcpyDeviceToDevice, stream));
  }
done:
  return rc;
}

/* One row of the pairs table: 2^log2n random keys with their uint64 source index, sorted by our
 * two ways and by CUB's SortPairs (stable too, so the values must match bit for bit). */
template <typename T> static void bench_pairs_row(int log2n, cudaStream_t stream, bool *mismatch) {
  const size_t n = (size_t)1 << log2n, bytes = n * sizeof(T), vbytes = n * sizeof(uint64_t);
  size_t direct_temp = 0, index_temp = 0, cub_temp = 0;
  MUST_OK(h5g_cuda_radix_sort(NULL, &direct_temp, NULL, NULL, H5G_CUDA_QUERY_VALUES, NULL, n, sizeof(T), stream));
  MUST_OK(sort_via_index<T>(NULL, &index_temp, NULL, NULL, NULL, NULL, n, stream));
  MUST_CUDA(cub::DeviceRadixSort::SortPairs(NULL, cub_temp, (const T *)NULL, (T *)NULL, (const uint64_t *)NULL,
                                            (uint64_t *)NULL, n, 0, 8 * (int)sizeof(T), stream));
  const size_t temp_bytes = std::max(std::max(direct_temp, index_temp), cub_temp);
  size_t free_bytes, total;
  MUST_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (3 * (bytes + vbytes) + temp_bytes + (256 << 20) > free_bytes) {
    printf("%-8s 2^%-3d  (skipped: needs more device memory)\n", KeyInfo<T>::name, log2n);
    return;
  }
  T *src, *keys, *alt;
  uint64_t *src_vals, *vals, *alt_vals;
  void *temp;
  unsigned long long *diff;
  MUST_CUDA(cudaMalloc(&src, bytes));
  MUST_CUDA(cudaMalloc(&keys, bytes));
  MUST_CUDA(cudaMalloc(&alt, bytes));
  MUST_CUDA(cudaMalloc(&src_vals, vbytes));
  MUST_CUDA(cudaMalloc(&vals, vbytes));
  MUST_CUDA(cudaMalloc(&alt_vals, vbytes));
  MUST_CUDA(cudaMalloc(&temp, temp_bytes));
  MUST_CUDA(cudaMalloc(&diff, sizeof(*diff)));
  fill_kernel<T><<<1024, 256, 0, stream>>>(src, n, 777 + log2n);
  MUST_OK(h5g_cuda_iota(src_vals, n, 0, stream));
  MUST_CUDA(cudaGetLastError());
  auto reset = [&] {
    MUST_CUDA(cudaMemcpyAsync(keys, src, bytes, cudaMemcpyDeviceToDevice, stream));
    MUST_CUDA(cudaMemcpyAsync(vals, src_vals, vbytes, cudaMemcpyDeviceToDevice, stream));
  };
  size_t tb = temp_bytes;
  auto direct = [&] { MUST_OK(h5g_cuda_radix_sort(temp, &tb, keys, alt, vals, alt_vals, n, sizeof(T), stream)); };
  auto via_index = [&] { MUST_OK(sort_via_index<T>(temp, &tb, keys, alt, vals, alt_vals, n, stream)); };
  auto cub_sort = [&] {
    MUST_CUDA(cub::DeviceRadixSort::SortPairs(temp, cub_temp, (const T *)src, alt, (const uint64_t *)src_vals, alt_vals,
                                              n, 0, 8 * (int)sizeof(T), stream));
  };
  /* Correctness first: each of ours (in keys, vals) against CUB (in alt, alt_vals). */
  unsigned long long differ = 0;
  for (int way = 0; way < 2; ++way) {
    reset();
    if (way == 0) direct();
    else via_index();
    cub_sort();
    differ += count_diff(keys, alt, bytes, diff, stream) + count_diff(vals, alt_vals, vbytes, diff, stream);
  }
  if (differ) *mismatch = true;
  const float direct_ms = time_median(stream, REPS, reset, direct);
  const float index_ms = time_median(stream, REPS, reset, via_index);
  const float cub_ms = time_median(stream, REPS, [] {}, cub_sort);
  printf("%-8s 2^%-3d %10.3f %10.3f %10.3f %9.2f %9.2f %9.2f %7.2f%s\n", KeyInfo<T>::name, log2n, direct_ms,
         index_ms, cub_ms, n / direct_ms / 1e6, n / index_ms / 1e6, n / cub_ms / 1e6, cub_ms / direct_ms,
         differ ? "  MISMATCH" : "");
  fflush(stdout);
  cudaFree(diff);
  cudaFree(temp);
  cudaFree(alt_vals);
  cudaFree(vals);
  cudaFree(src_vals);
  cudaFree(alt);
  cudaFree(keys);
  cudaFree(src);
}

__global__ void gather_rows_kernel(const uint8_t *__restrict__ rows, const uint64_t *__restrict__ index,
                                   uint8_t *__restrict__ out, uint64_t n, unsigned row_bytes) {
  /* One thread per 8-byte word of the output (row sizes here are multiples of 8). */
  const unsigned words = row_bytes / 8;
  for (uint64_t w = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; w < n * words; w += (uint64_t)gridDim.x * blockDim.x) {
    const uint64_t row = w / words, word = w % words;
    ((uint64_t *)out)[w] = ((const uint64_t *)(rows + index[row] * row_bytes))[word];
  }
}

/* Gathering rows by a random permutation: on the GPU (rows and index up, kernel, rows down, from
 * and to pinned host memory) against the host's memcpy loop (mpi/gather_rows.c's, one thread). */
static void bench_gather(int log2n, unsigned row_bytes, cudaStream_t stream) {
  const size_t n = (size_t)1 << log2n, bytes = n * row_bytes;
  uint8_t *h_rows, *h_out, *h_ref, *d_rows, *d_out;
  uint64_t *h_index, *d_index;
  MUST_CUDA(cudaMallocHost(&h_rows, bytes));
  MUST_CUDA(cudaMallocHost(&h_out, bytes));
  MUST_CUDA(cudaMallocHost(&h_index, n * 8));
  h_ref = (uint8_t *)malloc(bytes);
  MUST_CUDA(cudaMalloc(&d_rows, bytes));
  MUST_CUDA(cudaMalloc(&d_out, bytes));
  MUST_CUDA(cudaMalloc(&d_index, n * 8));
  uint64_t s = 42;
  for (size_t i = 0; i < bytes / 8; ++i) ((uint64_t *)h_rows)[i] = (s += 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
  for (size_t i = 0; i < n; ++i) h_index[i] = i;
  for (size_t i = n - 1; i > 0; --i) { /* Fisher-Yates: a random permutation */
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(h_index[i], h_index[(s >> 16) % (i + 1)]);
  }
  auto host = [&] {
    for (size_t k = 0; k < n; ++k) memcpy(h_ref + k * row_bytes, h_rows + h_index[k] * row_bytes, row_bytes);
  };
  auto gpu = [&] {
    MUST_CUDA(cudaMemcpyAsync(d_rows, h_rows, bytes, cudaMemcpyHostToDevice, stream));
    MUST_CUDA(cudaMemcpyAsync(d_index, h_index, n * 8, cudaMemcpyHostToDevice, stream));
    gather_rows_kernel<<<4096, 256, 0, stream>>>(d_rows, d_index, d_out, n, row_bytes);
    MUST_CUDA(cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, stream));
  };
  std::vector<float> host_ms;
  for (int r = -1; r < 5; ++r) { /* the host loop takes seconds: 1 warm-up, median of 5 */
    const auto t0 = std::chrono::steady_clock::now();
    host();
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= 0) host_ms.push_back(std::chrono::duration<float, std::milli>(t1 - t0).count());
  }
  const float gpu_ms = time_median(stream, REPS, [] {}, gpu);
  const float kernel_ms = time_median(stream, REPS, [] {}, [&] {
    gather_rows_kernel<<<4096, 256, 0, stream>>>(d_rows, d_index, d_out, n, row_bytes);
  });
  MUST_CUDA(cudaStreamSynchronize(stream));
  const bool same = memcmp(h_out, h_ref, bytes) == 0;
  printf("%5u 2^%-3d %10.2f %10.2f %10.3f %7.2f%s\n", row_bytes, log2n, median(host_ms), gpu_ms, kernel_ms,
         median(host_ms) / gpu_ms, same ? "" : "  MISMATCH");
  fflush(stdout);
  cudaFree(d_index);
  cudaFree(d_out);
  cudaFree(d_rows);
  free(h_ref);
  cudaFreeHost(h_index);
  cudaFreeHost(h_out);
  cudaFreeHost(h_rows);
}

static bool bench_pairs(int max_log2, cudaStream_t stream) {
  bool mismatch = false;
  printf("\nkey + uint64 value (stable): ours (direct: values move every pass; index: a 32-bit index\n"
         "moves, then one gather) vs cub::DeviceRadixSort::SortPairs (ms; ratio = cub / direct, the product's)\n");
  printf("%-8s %-5s %10s %10s %10s %9s %9s %9s %7s\n", "type", "n", "direct ms", "index ms", "cub ms",
         "direct G/s", "index G/s", "cub G/s", "ratio");
  for (int log2n = 20; log2n <= max_log2; ++log2n) bench_pairs_row<uint32_t>(log2n, stream, &mismatch);
  for (int log2n = 20; log2n <= max_log2; ++log2n) bench_pairs_row<uint64_t>(log2n, stream, &mismatch);
  for (int log2n = 20; log2n <= max_log2; ++log2n) bench_pairs_row<u128>(log2n, stream, &mismatch);
  printf("%s\n", mismatch ? "MISMATCH: some output differs from CUB's" : "every output equals CUB's bit for bit");
  printf("\npayload gather by a random permutation, 2^24 rows: host memcpy loop (1 thread) vs GPU\n"
         "(rows + index H2D, gather kernel, rows D2H; pinned host memory) (ms)\n");
  printf("%5s %-5s %10s %10s %10s %7s\n", "row B", "n", "host ms", "GPU ms", "kernel ms", "host/GPU");
  for (unsigned row_bytes : {8u, 24u, 64u}) bench_gather(24, row_bytes, stream);
  return mismatch;
}

/* Pass-kernel variants (tile shape, warp match, index width) against CUB on the same keys: each
 * variant's output must equal CUB's bit for bit before it is timed, on the timed keys and (once
 * per variant) on edge cases: sizes around tiles and masked keys (trivial passes, few distinct
 * digits, all keys equal). */
template <typename T> struct VariantBench {
  size_t n, temp_bytes;
  T *src, *keys, *alt, *ref;
  void *temp;
  unsigned long long *diff;
  cudaStream_t stream;
  int log2n;
  float cub_ms;
  bool *mismatch, check_edges;

  void reset() { MUST_CUDA(cudaMemcpyAsync(keys, src, n * sizeof(T), cudaMemcpyDeviceToDevice, stream)); }
  void reset_ref() {
    size_t bytes = temp_bytes;
    MUST_CUDA(cub::DeviceRadixSort::SortKeys(temp, bytes, (const T *)src, ref, n, 0, 8 * (int)sizeof(T), stream));
  }
  /* Bytes of keys[0, m) that differ from ref[0, m). */
  unsigned long long count_diff(size_t m) {
    MUST_CUDA(cudaMemsetAsync(diff, 0, sizeof(*diff), stream));
    count_diff_kernel<<<1024, 256, 0, stream>>>((const uint8_t *)keys, (const uint8_t *)ref, m * sizeof(T), diff);
    unsigned long long host_diff = 0;
    MUST_CUDA(cudaMemcpyAsync(&host_diff, diff, sizeof(host_diff), cudaMemcpyDeviceToHost, stream));
    MUST_CUDA(cudaStreamSynchronize(stream));
    return host_diff;
  }

  template <int BLOCK, int ITEMS, int MIN_BLOCKS, h5g::WarpMatch MATCH, bool WIDE_INDEX = false,
            bool ALL_STABLE = false>
  void run() {
    auto sort = [&] {
      size_t bytes = temp_bytes;
      MUST_OK((h5g::onesweep::sort<T, BLOCK, ITEMS, MIN_BLOCKS, h5g::NoValue, MATCH, WIDE_INDEX, ALL_STABLE>(temp, &bytes, keys, alt, n, stream)));
    };
    reset();
    sort();
    unsigned long long host_diff = count_diff(n);
    if (check_edges) {
      const T masks[] = {(T)~(T)0, (T)0xff00ff00ff00ff00ull, (T)0x0301, (T)0};
      for (size_t m : {(size_t)1, (size_t)2, (size_t)3, (size_t)1000, (size_t)4097, (size_t)9217,
                       (size_t)100003, ((size_t)1 << 20) + 17}) {
        for (T mask : masks) {
          MUST_CUDA(cudaMemcpyAsync(keys, src, m * sizeof(T), cudaMemcpyDeviceToDevice, stream));
          mask_kernel<T><<<256, 256, 0, stream>>>(keys, m, mask);
          size_t cub_bytes = temp_bytes, bytes = temp_bytes;
          MUST_CUDA(cub::DeviceRadixSort::SortKeys(temp, cub_bytes, (const T *)keys, ref, m, 0, 8 * (int)sizeof(T), stream));
          MUST_OK((h5g::onesweep::sort<T, BLOCK, ITEMS, MIN_BLOCKS, h5g::NoValue, MATCH, WIDE_INDEX, ALL_STABLE>(temp, &bytes, keys, alt, m, stream)));
          const unsigned long long d = count_diff(m);
          if (d) printf("edge case n = %zu, mask %llx: %llu bytes differ\n", m, (unsigned long long)mask, d);
          host_diff += d;
        }
      }
      reset_ref();
    }
    if (host_diff) *mismatch = true;
    const float ms = time_median(stream, REPS, [&] { reset(); }, sort);
    static const char *match_name[] = {"ballot", "atomic_or"};
    char match[16]; /* "/s": every pass ranked stably, the first too */
    snprintf(match, sizeof match, "%s%s", match_name[(int)MATCH], ALL_STABLE ? "/s" : "");
    printf("%-8s 2^%-3d %5d %5d %4d %-9s %-6s %9.3f %9.3f %7.3f%s\n", KeyInfo<T>::name, log2n, BLOCK,
           ITEMS, MIN_BLOCKS, match,
           WIDE_INDEX ? "64" : "32", ms, cub_ms, cub_ms / ms, host_diff ? "  MISMATCH" : "");
    fflush(stdout);
  }
};

template <typename T, typename Variants>
static void bench_variants(int log2n, bool check_edges, cudaStream_t stream, bool *mismatch, Variants variants) {
  VariantBench<T> b;
  b.n = (size_t)1 << log2n;
  b.check_edges = check_edges;
  b.stream = stream;
  b.log2n = log2n;
  b.mismatch = mismatch;
  const size_t bytes = b.n * sizeof(T);
  size_t cub_temp = 0;
  MUST_CUDA(cub::DeviceRadixSort::SortKeys(NULL, cub_temp, (const T *)NULL, (T *)NULL, b.n, 0, 8 * (int)sizeof(T), stream));
  b.temp_bytes = std::max(cub_temp, b.n / 1024 * 1024 + ((size_t)64 << 20)); /* >= look-back table of 1024-key tiles */
  MUST_CUDA(cudaMalloc(&b.src, bytes));
  MUST_CUDA(cudaMalloc(&b.keys, bytes));
  MUST_CUDA(cudaMalloc(&b.alt, bytes));
  MUST_CUDA(cudaMalloc(&b.ref, bytes));
  MUST_CUDA(cudaMalloc(&b.temp, b.temp_bytes));
  MUST_CUDA(cudaMalloc(&b.diff, sizeof(*b.diff)));
  fill_kernel<T><<<1024, 256, 0, stream>>>(b.src, b.n, 777 + log2n);
  auto cub_sort = [&] {
    MUST_CUDA(cub::DeviceRadixSort::SortKeys(b.temp, cub_temp, (const T *)b.src, b.ref, b.n, 0, 8 * (int)sizeof(T), stream));
  };
  b.cub_ms = time_median(stream, REPS, [] {}, cub_sort); /* leaves CUB's output in ref */
  printf("%-8s 2^%-3d %5s %5s %4s %-9s %-6s %9s %9.3f\n", KeyInfo<T>::name, log2n, "cub", "", "", "", "", "", b.cub_ms);
  variants(b);
  cudaFree(b.diff);
  cudaFree(b.temp);
  cudaFree(b.ref);
  cudaFree(b.alt);
  cudaFree(b.keys);
  cudaFree(b.src);
}

/* The upfront histogram kernel alone, in block sizes and counter copies (tuning.cuh), on 2^log2n
 * random keys; every variant's counts must equal the first's. */
template <typename T> struct HistogramBench {
  size_t n;
  T *keys;
  h5g::onesweep::Scratch s;
  std::vector<unsigned long long> first;
  cudaStream_t stream;
  bool *mismatch;

  template <int BLOCK, int COPIES> void run(const char *what) {
    const h5g::KeyMap<T> identity = h5g::KeyIO<T>::ordered().on_load(true);
    int device = 0;
    MUST_CUDA(cudaGetDevice(&device));
    auto launch = [&] {
      MUST_CUDA(cudaMemsetAsync(s.counts, 0, sizeof(T) * h5g::RADIX * sizeof(*s.counts), stream));
      MUST_OK((h5g::onesweep::launch_histogram_shape<T, BLOCK, COPIES>(keys, n, identity, s, device, stream)));
    };
    launch();
    std::vector<unsigned long long> counts(sizeof(T) * h5g::RADIX);
    MUST_CUDA(cudaMemcpyAsync(counts.data(), s.counts, counts.size() * sizeof(counts[0]), cudaMemcpyDeviceToHost, stream));
    MUST_CUDA(cudaStreamSynchronize(stream));
    if (first.empty()) first = counts;
    const bool differs = counts != first;
    if (differs) *mismatch = true;
    const float ms = time_median(stream, REPS, [] {}, launch);
    printf("%-8s 2^%-3d %5d %6d %-12s %9.3f %9.1f%s\n", KeyInfo<T>::name, (int)log2((double)n), BLOCK, COPIES, what, ms,
           n * sizeof(T) / (ms * 1e6), differs ? "  MISMATCH" : "");
    fflush(stdout);
  }
};

template <typename T, typename Variants>
static void bench_histogram(int log2n, cudaStream_t stream, bool *mismatch, Variants variants) {
  HistogramBench<T> b;
  b.n = (size_t)1 << log2n;
  b.stream = stream;
  b.mismatch = mismatch;
  void *temp;
  const size_t temp_bytes = b.s.layout(NULL, b.n, 4096);
  MUST_CUDA(cudaMalloc(&b.keys, b.n * sizeof(T)));
  MUST_CUDA(cudaMalloc(&temp, temp_bytes));
  b.s.layout(temp, b.n, 4096);
  fill_kernel<T><<<1024, 256, 0, stream>>>(b.keys, b.n, 99);
  variants(b);
  cudaFree(temp);
  cudaFree(b.keys);
}

static bool bench_all_histograms(int max_log2, cudaStream_t stream) {
  bool mismatch = false;
  const int log2n = std::min(max_log2, 28);
  printf("\nupfront histogram kernel (ms; GB/s of keys read)\n%-8s %-5s %5s %6s %-12s %9s %9s\n", "type", "n",
         "block", "copies", "", "ms", "GB/s");
  bench_histogram<uint32_t>(log2n, stream, &mismatch, [](auto &b) {
    b.template run<256, 8>("before");
    b.template run<1024, 32>("");
    b.template run<512, 32>("");
    b.template run<1024, 16>("");
    b.template run<512, 16>("");
  });
  bench_histogram<uint64_t>(log2n, stream, &mismatch, [](auto &b) {
    b.template run<256, 4>("before");
    b.template run<1024, 16>("");
    b.template run<512, 16>("");
    b.template run<1024, 8>("");
  });
  bench_histogram<u128>(log2n, stream, &mismatch, [](auto &b) {
    b.template run<256, 2>("before");
    b.template run<1024, 8>("");
    b.template run<512, 8>("");
    b.template run<1024, 4>("");
  });
  printf("%s\n", mismatch ? "MISMATCH: some counts differ" : "every variant's counts are equal");
  return mismatch;
}

/* The title and column heads of a table of VariantBench rows. */
static void variants_header(const char *title) {
  printf("\n%s (ms; ratio = cub / ours)\n", title);
  printf("%-8s %-5s %5s %5s %4s %-9s %-6s %9s %9s %7s\n", "type", "n", "block", "items", "minb", "match",
         "index", "ours ms", "cub ms", "ratio");
}

static bool bench_all_variants(int max_log2, cudaStream_t stream) {
  using M = h5g::WarpMatch;
  bool mismatch = false;
  variants_header("pass-kernel variants vs cub::DeviceRadixSort::SortKeys");
  for (int log2n = 26; log2n <= std::min(max_log2, 28); ++log2n) {
    /* the shapes timed for tuning.cuh on the H200 and (issue 30) on the H100 */
    bench_variants<uint32_t>(log2n, log2n == 26, stream, &mismatch, [](auto &b) {
      b.template run<512, 16, 2, M::BALLOT>();
      b.template run<384, 28, 2, M::ATOMIC_OR, true>();
      b.template run<384, 28, 2, M::ATOMIC_OR>();
      b.template run<384, 24, 2, M::ATOMIC_OR>();
      b.template run<384, 20, 2, M::ATOMIC_OR>();
      b.template run<256, 28, 3, M::ATOMIC_OR>();
      b.template run<256, 24, 3, M::ATOMIC_OR>();
      b.template run<256, 20, 4, M::ATOMIC_OR>();
      b.template run<512, 16, 2, M::ATOMIC_OR>();
      b.template run<512, 20, 2, M::ATOMIC_OR>();
      b.template run<512, 24, 2, M::ATOMIC_OR>();
      b.template run<768, 12, 2, M::ATOMIC_OR>();
      b.template run<1024, 12, 1, M::ATOMIC_OR>();
    });
    bench_variants<uint64_t>(log2n, log2n == 26, stream, &mismatch, [](auto &b) {
      b.template run<256, 16, 3, M::BALLOT>();
      b.template run<256, 32, 2, M::ATOMIC_OR, true>();
      b.template run<256, 32, 2, M::ATOMIC_OR>();
      b.template run<256, 28, 2, M::ATOMIC_OR>();
      b.template run<256, 24, 2, M::ATOMIC_OR>();
      b.template run<256, 16, 3, M::ATOMIC_OR>();
      b.template run<256, 20, 3, M::ATOMIC_OR>();
      b.template run<384, 20, 2, M::ATOMIC_OR>();
      b.template run<384, 16, 2, M::ATOMIC_OR>();
      b.template run<512, 16, 2, M::ATOMIC_OR>();
      b.template run<512, 12, 2, M::ATOMIC_OR>();
    });
    /* 128-bit keys: the shapes that neither spill nor keep 2 blocks off an SM (tuning.cuh) */
    bench_variants<u128>(log2n, log2n == 26, stream, &mismatch, [](auto &b) {
      b.template run<256, 20, 2, M::ATOMIC_OR, true>();
      b.template run<256, 20, 2, M::ATOMIC_OR>();
      b.template run<256, 16, 2, M::ATOMIC_OR>();
      b.template run<384, 12, 2, M::ATOMIC_OR>();
      b.template run<512, 8, 2, M::ATOMIC_OR>();
      b.template run<256, 12, 3, M::ATOMIC_OR>();
    });
  }
  printf("%s\n", mismatch ? "MISMATCH: some output differs from CUB's" : "every output equals CUB's bit for bit");
  return mismatch;
}

/* The tuned 32-bit shape with the first pass ranked unstably (the build's sort of keys alone)
 * and stably (atomic_or/s), alternated, at 2^26 (edge cases checked) and 2^28, up to 2^max_log2_n. */
static bool bench_first_pass(int max_log2, cudaStream_t stream) {
  using M = h5g::WarpMatch;
  bool mismatch = false;
  variants_header("unstable first pass vs stable");
  for (int log2n = 26; log2n <= std::min(max_log2, 28); log2n += 2) {
    bench_variants<uint32_t>(log2n, log2n == 26, stream, &mismatch, [](auto &b) {
      for (int round = 0; round < 2; ++round) {
        b.template run<384, 28, 2, M::ATOMIC_OR>();
        b.template run<384, 28, 2, M::ATOMIC_OR, false, true>();
      }
    });
  }
  printf("%s\n", mismatch ? "MISMATCH: some output differs from CUB's" : "every output equals CUB's bit for bit");
  return mismatch;
}

/* Sorts 2^log2n random keys with ours, then the same keys, refilled, with CUB's, twice each (the
 * second of each warm: modules loaded, shared-memory attributes set): a run to profile side by
 * side. */
template <typename T> static int profile(int log2n, cudaStream_t stream) {
  const size_t n = (size_t)1 << log2n;
  T *keys, *alt;
  void *temp, *cub_temp;
  size_t temp_bytes = 0, cub_bytes = 0;
  MUST_OK(h5g_cuda_radix_sort(NULL, &temp_bytes, NULL, NULL, NULL, NULL, n, sizeof(T), stream));
  MUST_CUDA(cub::DeviceRadixSort::SortKeys(NULL, cub_bytes, (const T *)NULL, (T *)NULL, n, 0, 8 * (int)sizeof(T), stream));
  MUST_CUDA(cudaMalloc(&keys, n * sizeof(T)));
  MUST_CUDA(cudaMalloc(&alt, n * sizeof(T)));
  MUST_CUDA(cudaMalloc(&temp, temp_bytes));
  MUST_CUDA(cudaMalloc(&cub_temp, cub_bytes));
  for (int round = 0; round < 2; ++round) {
    fill_kernel<T><<<1024, 256, 0, stream>>>(keys, n, 1);
    MUST_OK(h5g_cuda_radix_sort(temp, &temp_bytes, keys, alt, NULL, NULL, n, sizeof(T), stream));
    fill_kernel<T><<<1024, 256, 0, stream>>>(keys, n, 1);
    MUST_CUDA(cub::DeviceRadixSort::SortKeys(cub_temp, cub_bytes, (const T *)keys, alt, n, 0, 8 * (int)sizeof(T), stream));
    MUST_CUDA(cudaStreamSynchronize(stream));
  }
  cudaFree(cub_temp);
  cudaFree(temp);
  cudaFree(alt);
  cudaFree(keys);
  return 0;
}

int main(int argc, char **argv) {
  const int max_log2 = argc > 1 ? atoi(argv[1]) : 28;
  const char *sections = argc > 2 ? argv[2] : "crossover,merge,main";
  int device = 0, runtime = 0;
  cudaDeviceProp props;
  MUST_CUDA(cudaGetDevice(&device));
  MUST_CUDA(cudaGetDeviceProperties(&props, device));
  MUST_CUDA(cudaRuntimeGetVersion(&runtime));
  cudaStream_t stream;
  MUST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  printf("device: %s (%d SMs), CUDA runtime %d, median of %d after 2 warm-ups\n", props.name,
         props.multiProcessorCount, runtime, REPS);

  if (strcmp(sections, "profile") == 0) return profile<uint32_t>(max_log2, stream);
  if (strcmp(sections, "profile64") == 0) return profile<uint64_t>(max_log2, stream);
  if (strstr(sections, "histogram") && bench_all_histograms(max_log2, stream)) return 1;
  if (strstr(sections, "variants") && bench_all_variants(max_log2, stream)) return 1;
  if (strstr(sections, "first") && bench_first_pass(max_log2, stream)) return 1;
  if (strstr(sections, "crossover")) {
  printf("\nbitonic vs radix (ms)\n%-8s %6s %10s %10s\n", "type", "n", "bitonic", "radix");
  bench_crossover<uint32_t>(stream);
  bench_crossover<uint64_t>(stream);
  bench_crossover<u128>(stream);
  }
  if (strstr(sections, "pairs") && bench_pairs(max_log2, stream)) return 1;
  if (strstr(sections, "merge")) {
  printf("\nmerge of P sorted runs vs re-sort (ms)\n%-8s %-5s %5s %10s %10s\n", "type", "n", "P", "merge", "re-sort");
  bench_merge<uint32_t>(26, stream);
  bench_merge<uint64_t>(26, stream);
  bench_merge<u128>(26, stream);
  }
  bool mismatch = false;
  const auto header = [] {
    printf("\nlocal sort of raw keys: ours (key transforms fused; unfused: a transform pass each way)"
           "\nvs cub::DeviceRadixSort::SortKeys (SortKeysDescending for desc)\n");
    printf("%-17s %-5s %10s %10s %10s %9s %9s %7s\n", "type", "n", "ours ms", "unfused ms",
           "cub ms", "ours G/s", "cub G/s", "ratio");
  };
  if (strstr(sections, "dists")) {
    header();
    for (int log2n : {16, 20, 24, max_log2})
      for (FillDist dist : {RANDOM_KEYS, TIED, FILLED, CLUSTERED}) {
        bench_type<uint64_t>(log2n, false, stream, &mismatch, dist);
        bench_type<u128>(log2n, false, stream, &mismatch, dist);
      }
  }
  if (!strstr(sections, "main")) return mismatch ? 1 : 0;

  header();
  const auto rows = [&](auto type, bool descending) {
    for (int log2n = 20; log2n <= max_log2; ++log2n)
      bench_type<decltype(type)>(log2n, descending, stream, &mismatch);
  };
  rows(uint32_t(), false);
  rows(int32_t(), false);
  rows(float(), false);
  rows(float(), true);
  rows(uint64_t(), false);
  rows(int64_t(), false);
  rows(double(), false);
  rows(double(), true);
  rows(u128(), false);
  printf("ratio = cub ms / ours ms (> 1: ours faster). %s\n",
         mismatch ? "MISMATCH: some output differs from CUB's" : "every output equals CUB's bit for bit");
  return mismatch ? 1 : 0;
}
