/* h5g_cuda_radix_sort: the onesweep radix sort (radix_sort.cuh) at the tile shape of tuning.cuh. */
#include "kernels/kernels.h"
#include "kernels/radix_sort.cuh"

extern "C" int h5g_cuda_radix_sort(void *temp, size_t *temp_bytes, void *keys, void *alt, size_t n,
                                   unsigned width, cudaStream_t stream) {
  const int rc = h5g::dispatch_width(width, [&](auto tag) {
    using K = decltype(tag);
    using T = h5g::OnesweepTuning<sizeof(K)>;
    return h5g::onesweep::sort<K, T::BLOCK, T::ITEMS, T::MIN_BLOCKS>(temp, temp_bytes, (K *)keys, (K *)alt, n, stream);
  });
  if (rc < 0)
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__, "unsupported key width %u", width);
  return rc;
}
