/* CHECK_CUDA: wraps a CUDA runtime call inside a function that follows the h5g status convention
 * (an int `rc` and a `done:` label, base/error.h). On failure the error record carries the CUDA
 * error name, the failing call and its file:line. Kernel launches are checked with
 * CHECK_CUDA(cudaGetLastError()). */
#ifndef H5G_CHECK_CUDA_CUH
#define H5G_CHECK_CUDA_CUH

#include <cuda_runtime.h>

#include "base/error.h"

#define CHECK_CUDA(call)                                                                          \
  do {                                                                                            \
    cudaError_t check_cuda_err_ = (call);                                                         \
    if (check_cuda_err_ != cudaSuccess) {                                                         \
      rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "CUDA error %s in %s",              \
                         cudaGetErrorName(check_cuda_err_), #call);                               \
      goto done;                                                                                  \
    }                                                                                             \
  } while (0)

#endif
