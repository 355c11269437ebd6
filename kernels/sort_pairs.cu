/* h5g_cuda_sort_pairs: the stable key+value sort, values moved with their keys every pass
 * (sort_pairs.cuh: measured faster than a 32-bit index and a gather, at every width). */
#include "kernels/kernels.h"
#include "kernels/sort_pairs.cuh"

extern "C" int h5g_cuda_sort_pairs(void *temp, size_t *temp_bytes, void *keys, void *alt,
                                   uint64_t *vals, uint64_t *alt_vals, size_t n, unsigned width,
                                   cudaStream_t stream) {
  const int rc = h5g::dispatch_width(width, [&](auto tag) {
    using K = decltype(tag);
    return h5g::pairs::sort_direct<K>(temp, temp_bytes, (K *)keys, (K *)alt, vals, alt_vals, n,
                                      stream);
  });
  if (rc < 0)
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__, "unsupported key width %u", width);
  return rc;
}
