/* The local sort: a thin dispatcher between the bitonic sort (small n, one launch) and the
 * onesweep radix sort, at the crossover measured by bench/local_sort.cu (tuning.cuh). Values
 * always take the radix sort: it is stable, the bitonic sort is not. Raw keys that the bitonic
 * sort takes are mapped to ordered bits and back by passes of their own (few keys: no matter). */
#include "kernels/kernels.h"
#include "kernels/tuning.cuh"
#include "kernels/util.cuh"

extern "C" int h5g_cuda_sort_typed(void *temp, size_t *temp_bytes, void *keys, void *alt,
                                   uint64_t *vals, uint64_t *alt_vals, size_t n,
                                   const h5g_keyspec *ks, unsigned raw, cudaStream_t stream) {
  int rc = H5G_OK;
  const bool small = n <= h5g::SORT_BITONIC_CROSSOVER && n <= h5g_cuda_bitonic_max(ks->width);
  CHECK(h5g::check_keyspec(ks, "the sort"));
  if (!temp || vals || !small)
    return h5g_cuda_radix_sort_typed(temp, temp_bytes, keys, alt, vals, alt_vals, n, ks, raw,
                                     stream);
  if (raw & H5G_CUDA_RAW_IN) CHECK(h5g_cuda_keys_transform(keys, n, ks, 0, stream));
  CHECK(h5g_cuda_bitonic_sort(keys, n, ks->width, stream));
  if (raw & H5G_CUDA_RAW_OUT) CHECK(h5g_cuda_keys_transform(keys, n, ks, 1, stream));
done:
  return rc;
}

extern "C" int h5g_cuda_sort(void *temp, size_t *temp_bytes, void *keys, void *alt, uint64_t *vals,
                             uint64_t *alt_vals, size_t n, unsigned width, cudaStream_t stream) {
  const h5g_keyspec bits = {H5G_KEY_UNSIGNED, width, 0};
  return h5g_cuda_sort_typed(temp, temp_bytes, keys, alt, vals, alt_vals, n, &bits, 0, stream);
}
