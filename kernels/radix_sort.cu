/* h5g_cuda_radix_sort: the onesweep radix sort (radix_sort.cuh) at the tile shapes of tuning.cuh,
 * keys alone or with uint64 values moved every pass (measured faster than moving a 32-bit index
 * and gathering the values afterwards, at every width: tuning.cuh, OnesweepPairsTuning). */
#include "kernels/kernels.h"
#include "kernels/radix_sort.cuh"

namespace {

/* The sort of K keys with values of type V (NoValue: keys only) at the tile shape T. */
template <typename K, typename T, typename V>
int sort_shaped(void *temp, size_t *temp_bytes, void *keys, void *alt, V *vals, V *alt_vals,
                size_t n, cudaStream_t stream) {
  return h5g::onesweep::sort<K, T::BLOCK, T::ITEMS, T::MIN_BLOCKS, V>(temp, temp_bytes, (K *)keys,
                                                                      (K *)alt, n, stream, vals,
                                                                      alt_vals);
}

} // namespace

extern "C" int h5g_cuda_radix_sort(void *temp, size_t *temp_bytes, void *keys, void *alt,
                                   uint64_t *vals, uint64_t *alt_vals, size_t n, unsigned width,
                                   cudaStream_t stream) {
  const int rc = h5g::check_width(width, "the radix sort");
  if (rc != H5G_OK) return rc;
  return h5g::dispatch_width(width, [&](auto tag) {
    using K = decltype(tag);
    /* a host-side choice between two instances: the keys-only kernels hold no value code */
    if (vals)
      return sort_shaped<K, h5g::OnesweepPairsTuning<sizeof(K)>, uint64_t>(
          temp, temp_bytes, keys, alt, vals, alt_vals, n, stream);
    return sort_shaped<K, h5g::OnesweepTuning<sizeof(K)>, h5g::NoValue>(
        temp, temp_bytes, keys, alt, (h5g::NoValue *)nullptr, (h5g::NoValue *)nullptr, n, stream);
  });
}
