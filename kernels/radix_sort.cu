/* h5g_cuda_radix_sort: the onesweep radix sort (radix_sort.cuh) at the tile shapes of tuning.cuh,
 * keys alone or with uint64 values moved every pass (faster than moving a 32-bit index and
 * gathering the values afterwards: bench/RESULTS.md, section "GPU record sort").
 * h5g_cuda_radix_sort_typed: the same sort of keys of any class, raw keys mapped to ordered bits
 * and back inside its kernels (key_map.cuh). */
#include "kernels/kernels.h"
#include "kernels/radix_sort.cuh"

namespace {

/* The sort of K keys with values of type V (NoValue: keys only) at the tile shape T. */
template <typename K, typename T, typename V>
int sort_shaped(void *temp, size_t *temp_bytes, void *keys, void *alt, V *vals, V *alt_vals,
                size_t n, const h5g::KeyIO<K> &io, cudaStream_t stream) {
  return h5g::onesweep::sort<K, T::BLOCK, T::ITEMS, T::MIN_BLOCKS, V>(
      temp, temp_bytes, (K *)keys, (K *)alt, n, stream, vals, alt_vals, io);
}

} // namespace

extern "C" int h5g_cuda_radix_sort_typed(void *temp, size_t *temp_bytes, void *keys, void *alt,
                                         uint64_t *vals, uint64_t *alt_vals, size_t n,
                                         const h5g_keyspec *ks, unsigned raw,
                                         cudaStream_t stream) {
  const int rc = h5g::check_keyspec(ks, "the radix sort");
  if (rc != H5G_OK) return rc;
  return h5g::dispatch_width(ks->width, [&](auto tag) {
    using K = decltype(tag);
    const h5g::KeyIO<K> io{h5g::key_map<K>(*ks),
                           (raw & H5G_CUDA_RAW_IN) != 0, (raw & H5G_CUDA_RAW_OUT) != 0};
    /* a host-side choice between two instances: the keys-only kernels hold no value code */
    if (vals)
      return sort_shaped<K, h5g::OnesweepPairsTuning<sizeof(K)>, uint64_t>(
          temp, temp_bytes, keys, alt, vals, alt_vals, n, io, stream);
    return sort_shaped<K, h5g::OnesweepTuning<sizeof(K)>, h5g::NoValue>(
        temp, temp_bytes, keys, alt, (h5g::NoValue *)nullptr, (h5g::NoValue *)nullptr, n, io,
        stream);
  });
}

extern "C" int h5g_cuda_radix_sort(void *temp, size_t *temp_bytes, void *keys, void *alt,
                                   uint64_t *vals, uint64_t *alt_vals, size_t n, unsigned width,
                                   cudaStream_t stream) {
  const h5g_keyspec bits = {H5G_KEY_UNSIGNED, width, 0};
  return h5g_cuda_radix_sort_typed(temp, temp_bytes, keys, alt, vals, alt_vals, n, &bits, 0,
                                   stream);
}
