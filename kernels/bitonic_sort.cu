/* Bitonic sort of a small array in one thread block's shared memory: the local sort for n up to
 * the measured crossover with the radix sort (tuning.cuh) and the sort of splitter samples.
 * The array is padded to a power of two with all-ones keys, which sort last. */
#include "kernels/block_bitonic.cuh"
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "kernels/tuning.cuh"
#include "kernels/util.cuh"

namespace h5g {
namespace {

template <typename K>
__global__ void __launch_bounds__(BITONIC_THREADS) bitonic_sort_kernel(K *keys, uint32_t n, uint32_t padded) {
  __shared__ K s[bitonic_capacity(sizeof(K))];
  for (uint32_t i = threadIdx.x; i < padded; i += BITONIC_THREADS) s[i] = i < n ? keys[i] : (K)~(K)0;
  __syncthreads();
  block_bitonic_sort<K, BITONIC_THREADS>(s, padded);
  for (uint32_t i = threadIdx.x; i < n; i += BITONIC_THREADS) keys[i] = s[i];
}

} // namespace
} // namespace h5g

extern "C" size_t h5g_cuda_bitonic_max(unsigned width) {
  return h5g::supported_width(width) ? (size_t)h5g::bitonic_capacity(width) : 0;
}

extern "C" int h5g_cuda_bitonic_sort(void *keys, size_t n, unsigned width, cudaStream_t stream) {
  int rc = H5G_OK;
  uint32_t padded = 1;
  CHECK(h5g::check_width(width, "the bitonic sort"));
  if (n > h5g_cuda_bitonic_max(width))
    H5G_FAIL(H5G_ERR_USAGE, "bitonic sort takes at most %zu keys, not %zu",
             h5g_cuda_bitonic_max(width), n);
  if (n < 2) goto done;
  while (padded < n) padded <<= 1;
  h5g::dispatch_width(width, [&](auto tag) {
    using K = decltype(tag);
    h5g::bitonic_sort_kernel<K><<<1, h5g::BITONIC_THREADS, 0, stream>>>((K *)keys, (uint32_t)n, padded);
    return 0;
  });
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}
