/* Copies between host and device memory, split where the host side's registrations end: pinned
 * host buffers are registered in pieces (base/host_memory.h), and a copy spanning two would not
 * be a copy of one pinned range. A copy of other host memory is split the same way, harmlessly. */
#ifndef H5G_HOST_COPY_CUH
#define H5G_HOST_COPY_CUH

#include <cuda_runtime.h>

#include "base/host_memory.h"

namespace h5g {

/* kind: cudaMemcpyHostToDevice or cudaMemcpyDeviceToHost. */
inline cudaError_t host_copy_async(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t stream) {
  const char *host = (const char *)(kind == cudaMemcpyHostToDevice ? src : dst);
  for (size_t at = 0; at < bytes;) {
    const size_t part = h5g_pin_span(host + at, bytes - at);
    const cudaError_t err =
        cudaMemcpyAsync((char *)dst + at, (const char *)src + at, part, kind, stream);
    if (err != cudaSuccess) return err;
    at += part;
  }
  return cudaSuccess;
}

} // namespace h5g
#endif
