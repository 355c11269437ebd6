/* The local sort: a thin dispatcher between the bitonic sort (small n, one launch) and the
 * onesweep radix sort, at the crossover measured by bench/local_sort.cu (tuning.cuh). Values
 * always take the radix sort: it is stable, the bitonic sort is not. */
#include "kernels/kernels.h"
#include "kernels/tuning.cuh"

extern "C" int h5g_cuda_sort(void *temp, size_t *temp_bytes, void *keys, void *alt, uint64_t *vals,
                             uint64_t *alt_vals, size_t n, unsigned width, cudaStream_t stream) {
  const bool small = n <= h5g::SORT_BITONIC_CROSSOVER && n <= h5g_cuda_bitonic_max(width);
  if (!temp || vals || !small)
    return h5g_cuda_radix_sort(temp, temp_bytes, keys, alt, vals, alt_vals, n, width, stream);
  return h5g_cuda_bitonic_sort(keys, n, width, stream);
}
