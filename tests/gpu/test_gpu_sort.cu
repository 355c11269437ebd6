/* Radix sort, bitonic sort and the sort dispatcher against std::sort (or order + count +
 * checksum for large n), for 8/16/32/64-bit keys, every size of test_sizes() and every
 * distribution. Usage: test_gpu_sort [large | small [u32]]: "large" sorts 2^28 keys (two
 * portions for 32-bit keys); "small" keeps n <= 8193 and "u32" 32-bit keys alone, for
 * compute-sanitizer. */
#include "kernels/kernels.h"
#include "tests/support/check_cuda.h"
#include "tests/support/keys.hpp"

enum Routine { RADIX, BITONIC, DISPATCH };

template <typename K> void check_one(Routine routine, size_t n, Dist dist, cudaStream_t stream) {
  const std::vector<K> input = make_keys<K>(n, dist, 7 + routine);
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
         width, n, dist_name[dist]);
  cudaFree(temp);
  cudaFree(alt);
  cudaFree(keys);
}

template <typename K> void check_width(cudaStream_t stream) {
  for (size_t n : test_sizes()) {
    for (int d = 0; d < NDIST; ++d) {
      check_one<K>(RADIX, n, (Dist)d, stream);
      if (n <= h5g_cuda_bitonic_max(sizeof(K))) check_one<K>(BITONIC, n, (Dist)d, stream);
      if (n <= 2 * h5g_cuda_bitonic_max(sizeof(K))) check_one<K>(DISPATCH, n, (Dist)d, stream);
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
  EXPECT(h5g_cuda_radix_sort(NULL, &temp_bytes, NULL, NULL, NULL, NULL, 10, 3, stream) ==
             H5G_ERR_USAGE,
         "3-byte keys accepted");
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
    return test_summary("test_gpu_sort large");
  }
  check_errors(stream);
  check_width<uint32_t>(stream);
  if (argc > 2 && strcmp(argv[2], "u32") == 0) return test_summary("test_gpu_sort (32-bit keys only)");
  check_width<uint8_t>(stream);
  check_width<uint16_t>(stream);
  check_width<uint64_t>(stream);
  return test_summary("test_gpu_sort");
}
