/* Small helpers shared by the kernels/ host launchers: key-width dispatch and scratch layout. */
#ifndef H5G_KERNEL_UTIL_CUH
#define H5G_KERNEL_UTIL_CUH

#include <stddef.h>
#include <stdint.h>

#include <type_traits>
#include <utility>

#include "base/keys.h"
#include "kernels/check_cuda.cuh"

namespace h5g {

/* The value type of keys-only sorts and merges: every value statement compiles away. */
struct NoValue {};
template <typename V> constexpr bool has_values = !std::is_same<V, NoValue>::value;

/* 16-byte keys: several sort keys composed into one (base/compose.h), base/keys.h's type. */
using u128 = h5g_u128;

/* Key widths every kernel takes: 1, 2, 4, 8 and 16 bytes. */
constexpr bool supported_width(unsigned width) {
  return width == 1 || width == 2 || width == 4 || width == 8 || width == 16;
}

/* H5G_OK, or a usage error naming `routine` for a width supported_width refuses. */
inline int check_width(unsigned width, const char *routine) {
  int rc = H5G_OK;
  if (!supported_width(width))
    H5G_FAIL(H5G_ERR_USAGE, "unsupported key width %u for %s", width, routine);
done:
  return rc;
}

/* check_width, and floats of 4 or 8 bytes only: a usage error naming `routine` otherwise. */
inline int check_keyspec(const h5g_keyspec *ks, const char *routine) {
  int rc = H5G_OK;
  CHECK(check_width(ks->width, routine));
  if (ks->cls == H5G_KEY_FLOAT && ks->width != 4 && ks->width != 8)
    H5G_FAIL(H5G_ERR_USAGE, "unsupported float width %u for %s", ks->width, routine);
done:
  return rc;
}

/* Calls f(K()) with K the unsigned type of `width` bytes and returns its status; callers check
 * the width first (check_width): for any other width nothing is called and -1 returned. */
template <typename F> int dispatch_width(unsigned width, F &&f) {
  switch (width) {
  case 1: return f((uint8_t)0);
  case 2: return f((uint16_t)0);
  case 4: return f((uint32_t)0);
  case 8: return f((uint64_t)0);
  case 16: return f((u128)0);
  default: return -1;
  }
}

/* Ping-pong passes (radix sort passes, merge rounds) read src and write dst, then swap them. */
template <typename K, typename V> void swap_ping_pong(K *&src, K *&dst, V *&vsrc, V *&vdst) {
  std::swap(src, dst);
  std::swap(vsrc, vdst);
}

/* After the last pass the result is in src: copied into keys (and vals) where it is not there. */
template <typename K, typename V>
int copy_back_ping_pong(K *keys, const K *src, V *vals, const V *vsrc, size_t n, cudaStream_t stream) {
  int rc = H5G_OK;
  if (src != keys)
    CHECK_CUDA(cudaMemcpyAsync(keys, src, n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
  if constexpr (has_values<V>)
    if (vsrc != vals)
      CHECK_CUDA(cudaMemcpyAsync(vals, vsrc, n * sizeof(V), cudaMemcpyDeviceToDevice, stream));
done:
  return rc;
}

/* Carves aligned pieces out of one scratch buffer; with base == NULL it only sums their sizes. */
struct ScratchLayout {
  char *base;
  size_t used;
  template <typename T> T *take(size_t count) {
    size_t offset = (used + 255) & ~(size_t)255;
    used = offset + count * sizeof(T);
    return base ? (T *)(base + offset) : (T *)nullptr;
  }
};

} // namespace h5g
#endif
