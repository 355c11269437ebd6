/* Radix sort, bitonic sort and the sort dispatcher against std::sort (or order + count +
 * checksum for large n), for 8/16/32/64/128-bit keys, every size of test_sizes(), the sizes
 * around each width's radix tile and bitonic limit, and every distribution (keys.hpp's and
 * gpu_keys'). 64- and 128-bit keys take every way of radix_sort.cuh's top digits first: random
 * keys sort their short runs of equal top digits (from n = 1000 or so) and end there; filled
 * keys hold one long run in order; tied tops, extremes (0 and 1, max - 1 and max share their top
 * digits) and a late tie hold long runs out of order: every pass after the top ones below
 * TOP_SAMPLE_MIN_KEYS (65535 keys and fewer); from 65537 keys the sample vetoes tied tops
 * (every pass at once), extremes from 2^20 + 1 (at 65537 their 2 pairs are within the 3 chance
 * allows), and the late tie, too rare for the sample, still takes every pass after the top ones
 * (only the check of a run's later pairs finds it); keys whose digits are mostly constant (low
 * bits, all equal) take every pass at once. Usage: test_gpu_sort [large | sampled | small [u32 |
 * u64 | u128]]: "large" sorts 2^28 keys (two portions for 32-bit and 128-bit keys); "sampled"
 * 64- and 128-bit keys of every distribution at TOP_SAMPLE_MIN_KEYS + 1, just above the
 * sample's smallest n, and "small" keeps n <= 8193 and "u32", "u64" or "u128" one width alone:
 * both for compute-sanitizer. */
#include "kernels/kernels.h"
#include "kernels/tuning.cuh"
#include "tests/support/check_cuda.h"
#include "tests/support/keys.hpp"

enum Routine { RADIX, BITONIC, DISPATCH };

template <typename K> void check_one(Routine routine, size_t n, int dist, cudaStream_t stream) {
  const std::vector<K> input = gpu_keys<K>(n, dist, 7 + routine);
  std::vector<K> got(n);
  K *keys = NULL, *alt = NULL;
  void *temp = NULL;
  size_t temp_bytes = 0;
  const unsigned width = sizeof(K);
  MUST_CUDA(cudaMalloc(&keys, n * width + 1));
  MUST_CUDA(cudaMalloc(&alt, n * width + 1));
  MUST_CUDA(cudaMemset(alt, 0xa5, n * width + 1)); /* poison: an unwritten key would show */
  MUST_CUDA(cudaMemcpyAsync(keys, input.data(), n * width, cudaMemcpyHostToDevice, stream));
  if (routine == BITONIC) {
    MUST_OK(h5g_cuda_bitonic_sort(keys, n, width, stream));
  } else {
    const auto sort = routine == RADIX ? h5g_cuda_radix_sort : h5g_cuda_sort;
    MUST_OK(sort(NULL, &temp_bytes, keys, alt, NULL, NULL, n, width, stream));
    MUST_CUDA(cudaMalloc(&temp, temp_bytes));
    MUST_OK(sort(temp, &temp_bytes, keys, alt, NULL, NULL, n, width, stream));
  }
  MUST_CUDA(cudaMemcpyAsync(got.data(), keys, n * width, cudaMemcpyDeviceToHost, stream));
  MUST_CUDA(cudaStreamSynchronize(stream));
  static const char *routine_name[] = {"radix", "bitonic", "dispatch"};
  EXPECT(check_sorted(input, got), "%s sort, %u-byte keys, n = %zu, %s", routine_name[routine],
         width, n, gpu_dist_name(dist));
  cudaFree(temp);
  cudaFree(alt);
  cudaFree(keys);
}

template <typename K> void check_width(cudaStream_t stream) {
  /* the sizes around this width's radix tile and bitonic limit, beside the common ones */
  using Tuning = h5g::OnesweepTuning<sizeof(K)>;
  const size_t tile = (size_t)Tuning::BLOCK * Tuning::ITEMS;
  const size_t bitonic = h5g_cuda_bitonic_max(sizeof(K));
  std::vector<size_t> sizes = test_sizes();
  for (size_t n : {tile - 1, tile, tile + 1, 2 * tile + 1, bitonic - 1, bitonic, bitonic + 1})
    if (!g_small || n <= 8193) sizes.push_back(n);
  for (size_t n : sizes) {
    for (int d = 0; d < NDIST_GPU; ++d) {
      check_one<K>(RADIX, n, d, stream);
      if (n <= bitonic) check_one<K>(BITONIC, n, d, stream);
      if (n <= 2 * bitonic) check_one<K>(DISPATCH, n, d, stream);
    }
  }
  printf("%zu-byte keys done\n", sizeof(K));
}

/* Scratch smaller than asked for, and a bitonic sort over its limit, are usage errors. */
void check_errors(cudaStream_t stream) {
  size_t temp_bytes = 0;
  MUST_OK(h5g_cuda_radix_sort(NULL, &temp_bytes, NULL, NULL, NULL, NULL, 1 << 20, 4, stream));
  size_t too_small = temp_bytes - 1;
  char *temp = NULL;
  MUST_CUDA(cudaMalloc(&temp, temp_bytes));
  EXPECT(h5g_cuda_radix_sort(temp, &too_small, temp, temp, NULL, NULL, 1 << 20, 4, stream) ==
             H5G_ERR_USAGE,
         "short scratch accepted");
  EXPECT(h5g_cuda_bitonic_sort(temp, h5g_cuda_bitonic_max(4) + 1, 4, stream) == H5G_ERR_USAGE,
         "oversized bitonic sort accepted");
  /* 16-byte keys: half as many fit the bitonic sort's shared memory */
  EXPECT(h5g_cuda_bitonic_max(16) == h5g_cuda_bitonic_max(8) / 2 && h5g_cuda_bitonic_max(3) == 0,
         "bitonic limits %zu (16 bytes), %zu (8 bytes), %zu (3 bytes)", h5g_cuda_bitonic_max(16),
         h5g_cuda_bitonic_max(8), h5g_cuda_bitonic_max(3));
  EXPECT(h5g_cuda_bitonic_sort(temp, h5g_cuda_bitonic_max(16) + 1, 16, stream) == H5G_ERR_USAGE,
         "oversized bitonic sort of 16-byte keys accepted");
  for (unsigned width : {3u, 32u})
    EXPECT(h5g_cuda_radix_sort(NULL, &temp_bytes, NULL, NULL, NULL, NULL, 10, width, stream) ==
               H5G_ERR_USAGE,
           "%u-byte keys accepted", width);
  h5g_error_clear();
  cudaFree(temp);
}

int main(int argc, char **argv) {
  require_gpu();
  parse_args(argc, argv);
  cudaStream_t stream;
  MUST_CUDA(cudaStreamCreate(&stream));
  if (argc > 1 && strcmp(argv[1], "large") == 0) {
    const size_t n32 = ((size_t)1 << 28) + 12345, n64 = (size_t)1 << 28;
    check_one<uint32_t>(RADIX, n32, RANDOM, stream);
    check_one<uint32_t>(RADIX, n32, FEW_UNIQUE, stream);
    check_one<uint64_t>(RADIX, n64, RANDOM, stream);
    check_one<uint64_t>(RADIX, n64, TIED_TOPS, stream);
    check_one<uint64_t>(RADIX, n64, LATE_TIE, stream);
    check_one<u128>(RADIX, n32, RANDOM, stream);
    check_one<u128>(RADIX, n32, EXTREMES, stream);
    return test_summary("test_gpu_sort large");
  }
  if (argc > 1 && strcmp(argv[1], "sampled") == 0) {
    for (int d = 0; d < NDIST_GPU; ++d) {
      check_one<uint64_t>(RADIX, h5g::TOP_SAMPLE_MIN_KEYS + 1, d, stream);
      check_one<u128>(RADIX, h5g::TOP_SAMPLE_MIN_KEYS + 1, d, stream);
    }
    return test_summary("test_gpu_sort sampled");
  }
  check_errors(stream);
  if (argc > 2 && strcmp(argv[2], "u128") == 0) {
    check_width<u128>(stream);
    return test_summary("test_gpu_sort (128-bit keys only)");
  }
  if (argc > 2 && strcmp(argv[2], "u64") == 0) {
    check_width<uint64_t>(stream);
    return test_summary("test_gpu_sort (64-bit keys only)");
  }
  check_width<uint32_t>(stream);
  if (argc > 2 && strcmp(argv[2], "u32") == 0) return test_summary("test_gpu_sort (32-bit keys only)");
  check_width<uint8_t>(stream);
  check_width<uint16_t>(stream);
  check_width<uint64_t>(stream);
  check_width<u128>(stream);
  return test_summary("test_gpu_sort");
}
