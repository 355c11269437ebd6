/* Ordered-bits key transform on the GPU, a pass of its own over the keys: the same bijection as
 * base/keys.c (kernels/key_map.cuh), for keys that no sort or merge kernel transforms as it loads
 * or stores them (the backend's host-keys transform; a sort or merge that touches no key). */
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "kernels/key_map.cuh"
#include "kernels/util.cuh"

extern "C" int h5g_cuda_keys_transform(void *keys, size_t n, const h5g_keyspec *ks, int inverse,
                                       cudaStream_t stream) {
  int rc = H5G_OK;
  CHECK(h5g::check_keyspec(ks, "the GPU key transform"));
  CHECK(h5g::dispatch_width(ks->width, [&](auto tag) {
    using K = decltype(tag);
    return h5g::map_keys((K *)keys, n, h5g::key_map<K>(*ks), inverse != 0, stream);
  }));
done:
  return rc;
}
