/* Ordered-bits key transform on the GPU: the same bijection as base/keys.c.
 * Floats (4 or 8 bytes): negative values flip every bit, non-negative ones flip the sign bit, then
 * the count of negative-NaN patterns (2^23 - 1 for float32, 2^52 - 1 for float64) is subtracted
 * modulo 2^width, which moves the negative NaNs above +NaN so every NaN sorts last. Signed
 * integers (1 to 16 bytes) flip the sign bit. Descending order is the bitwise NOT of the
 * ascending bits. */
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "kernels/util.cuh"

namespace h5g {
namespace {

constexpr int TRANSFORM_BLOCK = 256;

template <typename K> __device__ __forceinline__ K sign_bit() { return (K)((K)1 << (8 * sizeof(K) - 1)); }

/* Widths of a float key: at the others the float code compiles away (they are refused first). */
template <typename K> constexpr bool float_width = sizeof(K) == 4 || sizeof(K) == 8;

/* Negative-NaN patterns of the float of this width: all mantissa bits but one set. */
template <typename K> __device__ __forceinline__ K negative_nan_count() {
  static_assert(float_width<K>, "float32 or float64 bits");
  return sizeof(K) == 4 ? (K)((1u << 23) - 1) : (K)(((uint64_t)1 << 52) - 1);
}

template <typename K> __device__ __forceinline__ K to_ordered(K k, h5g_key_class cls, bool descending) {
  if (cls == H5G_KEY_SIGNED) {
    k ^= sign_bit<K>();
  } else if (cls == H5G_KEY_FLOAT) {
    if constexpr (float_width<K>) {
      k = (k & sign_bit<K>()) ? (K)~k : (K)(k ^ sign_bit<K>());
      k = (K)(k - negative_nan_count<K>());
    }
  }
  return descending ? (K)~k : k;
}

template <typename K> __device__ __forceinline__ K from_ordered(K k, h5g_key_class cls, bool descending) {
  if (descending) k = (K)~k;
  if (cls == H5G_KEY_SIGNED) {
    k ^= sign_bit<K>();
  } else if (cls == H5G_KEY_FLOAT) {
    if constexpr (float_width<K>) {
      k = (K)(k + negative_nan_count<K>());
      k = (k & sign_bit<K>()) ? (K)(k ^ sign_bit<K>()) : (K)~k;
    }
  }
  return k;
}

template <typename K>
__global__ void __launch_bounds__(TRANSFORM_BLOCK)
    transform_kernel(K *keys, uint64_t n, h5g_key_class cls, bool descending, bool inverse) {
  const uint64_t stride = (uint64_t)gridDim.x * TRANSFORM_BLOCK;
  for (uint64_t i = (uint64_t)blockIdx.x * TRANSFORM_BLOCK + threadIdx.x; i < n; i += stride)
    keys[i] = inverse ? from_ordered(keys[i], cls, descending) : to_ordered(keys[i], cls, descending);
}

} // namespace
} // namespace h5g

extern "C" int h5g_cuda_keys_transform(void *keys, size_t n, const h5g_keyspec *ks, int inverse,
                                       cudaStream_t stream) {
  int rc = H5G_OK;
  int device = 0, sms = 0;
  CHECK(h5g::check_width(ks->width, "the GPU key transform"));
  if (ks->cls == H5G_KEY_FLOAT && ks->width != 4 && ks->width != 8)
    H5G_FAIL(H5G_ERR_USAGE, "unsupported float width %u for the GPU key transform", ks->width);
  if (n == 0 || (ks->cls == H5G_KEY_UNSIGNED && !ks->descending)) goto done;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  h5g::dispatch_width(ks->width, [&](auto tag) {
    using K = decltype(tag);
    const uint64_t blocks_needed = (n + h5g::TRANSFORM_BLOCK - 1) / h5g::TRANSFORM_BLOCK;
    const unsigned grid = (unsigned)(blocks_needed < (uint64_t)sms * 8 ? blocks_needed : (uint64_t)sms * 8);
    h5g::transform_kernel<K><<<grid, h5g::TRANSFORM_BLOCK, 0, stream>>>(
        (K *)keys, n, ks->cls, ks->descending != 0, inverse != 0);
    return 0;
  });
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}
