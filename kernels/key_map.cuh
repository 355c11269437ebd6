/* The ordered-bits bijection of base/keys.c on the device, as one branch-free map whose constants
 * say the key class and direction, so that a sort or merge kernel can apply it to the keys it
 * loads and stores (the transform fused into the kernel: no pass of its own over the keys).
 *
 *   forward(k) = ((k ^ flip ^ (negative(k) & neg_flip)) - bias) ^ out_flip
 *   inverse(u) = (v ^ flip ^ (~negative(v) & neg_flip)),  v = (u ^ out_flip) + bias
 *
 * negative(k): all ones when k's top bit is set. Unsigned: all constants 0 (out_flip all ones when
 * descending). Signed: flip = the sign bit. Floats (4 or 8 bytes): flip = the sign bit, neg_flip =
 * every other bit (a negative value flips every bit, a non-negative one its sign bit) and bias =
 * the count of negative-NaN patterns (2^23 - 1 for float32, 2^52 - 1 for float64), subtracted
 * modulo 2^width: the negative NaNs move above +NaN, so every NaN sorts last; bias negated when
 * NaNs go first ascending or last descending (h5g_keyspec_nan_low: every NaN below -inf, in the
 * same order among themselves). Descending: out_flip = all ones, the bitwise NOT of the
 * ascending bits. The inverse undoes the three steps in reverse order (after the bias, the top
 * bit is set exactly for keys that were non-negative).
 * The map of unsigned ascending keys is the identity (all constants 0): kernels then take their
 * instances without map code. Host code too, so that tests can check it against base/keys.c on
 * every float32 bit pattern without a GPU (test_key_map). */
#ifndef H5G_KEY_MAP_CUH
#define H5G_KEY_MAP_CUH

#include <stdint.h>

#include "base/keys.h"
#include "kernels/check_cuda.cuh"

namespace h5g {

/* All ones when key's top bit is set, else 0 (an arithmetic shift of the top bit). */
template <typename K> __host__ __device__ __forceinline__ K all_if_negative(K k) {
  constexpr int TOP = 8 * (int)sizeof(K) - 1;
  if constexpr (sizeof(K) == 16) return (K)((__int128)k >> TOP);
  else if constexpr (sizeof(K) == 8) return (K)((int64_t)k >> TOP);
  else return (K)((int32_t)((uint32_t)k << (31 - TOP)) >> 31); /* the top bit at bit 31 */
}

template <typename K> struct KeyMap {
  K flip, neg_flip, bias, out_flip;

  __host__ __device__ bool identity() const {
    return flip == 0 && neg_flip == 0 && bias == 0 && out_flip == 0;
  }
  /* Raw key -> ordered bits. */
  __host__ __device__ __forceinline__ K forward(K k) const {
    const K mixed = (K)(k ^ flip ^ (all_if_negative(k) & neg_flip));
    return (K)((K)(mixed - bias) ^ out_flip);
  }
  /* Ordered bits -> raw key. */
  __host__ __device__ __forceinline__ K inverse(K u) const {
    const K v = (K)((K)(u ^ out_flip) + bias);
    return (K)(v ^ flip ^ ((K)~all_if_negative(v) & neg_flip));
  }
};

/* The map of keys of spec ks at K's width (callers refuse floats of other than 4 or 8 bytes). */
template <typename K> KeyMap<K> key_map(const h5g_keyspec &ks) {
  const K sign = (K)((K)1 << (8 * sizeof(K) - 1));
  KeyMap<K> m{0, 0, 0, 0};
  if (ks.cls != H5G_KEY_UNSIGNED) m.flip = sign;
  if (ks.cls == H5G_KEY_FLOAT && (sizeof(K) == 4 || sizeof(K) == 8)) {
    m.neg_flip = (K)~sign;
    m.bias = (K)(sizeof(K) == 4 ? ((uint64_t)1 << 23) - 1 : ((uint64_t)1 << 52) - 1);
    if (h5g_keyspec_nan_low(&ks)) m.bias = (K)((K)0 - m.bias);
  }
  if (ks.descending) m.out_flip = (K)~(K)0;
  return m;
}

constexpr int MAP_BLOCK = 256;

/* keys[i] = map.forward(keys[i]) (inverse: map.inverse) for i < n. */
template <typename K>
__global__ void __launch_bounds__(MAP_BLOCK)
    map_keys_kernel(K *keys, uint64_t n, KeyMap<K> map, bool inverse) {
  const uint64_t stride = (uint64_t)gridDim.x * MAP_BLOCK;
  for (uint64_t i = (uint64_t)blockIdx.x * MAP_BLOCK + threadIdx.x; i < n; i += stride)
    keys[i] = inverse ? map.inverse(keys[i]) : map.forward(keys[i]);
}

/* Maps n device keys in place, forward or inverse, on `stream`; nothing for the identity. */
template <typename K>
int map_keys(K *keys, size_t n, const KeyMap<K> &map, bool inverse, cudaStream_t stream) {
  int rc = H5G_OK;
  int device = 0, sms = 0;
  if (n == 0 || map.identity()) goto done;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  {
    const uint64_t blocks_needed = (n + MAP_BLOCK - 1) / MAP_BLOCK, most = (uint64_t)sms * 8;
    map_keys_kernel<K><<<(unsigned)(blocks_needed < most ? blocks_needed : most), MAP_BLOCK, 0,
                         stream>>>(keys, n, map, inverse);
  }
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}

/* How a sort or merge finds its keys and leaves them (kernels.h, H5G_CUDA_RAW_IN/OUT): raw keys
 * that `map` turns into ordered bits, or ordered bits already. A kernel that reads the input
 * applies map.forward when raw_in; the kernel that writes the result applies map.inverse when
 * raw_out; everything between holds ordered bits. */
template <typename K> struct KeyIO {
  KeyMap<K> map;
  bool raw_in, raw_out;

  static KeyIO ordered() { return KeyIO{KeyMap<K>{0, 0, 0, 0}, false, false}; }
  /* The map a kernel applies on load (first: it reads the input) or on store (last: it writes
   * the result); the identity elsewhere. */
  KeyMap<K> on_load(bool first) const {
    return first && raw_in ? map : KeyMap<K>{0, 0, 0, 0};
  }
  KeyMap<K> on_store(bool last) const {
    return last && raw_out ? map : KeyMap<K>{0, 0, 0, 0};
  }
  /* Keys no kernel of the sort or merge touched (nothing to sort or merge: n < 2, one run, every
   * digit constant) still change form when they came in one and leave in the other. */
  int untouched(K *keys, size_t n, cudaStream_t stream) const {
    return raw_in == raw_out ? H5G_OK : map_keys(keys, n, map, raw_out, stream);
  }
};

} // namespace h5g
#endif
