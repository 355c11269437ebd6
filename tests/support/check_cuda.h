/* CUDA additions to check.h, for the GPU tests and the GPU benchmarks:
 *   require_gpu()   prints "SKIP: no CUDA device" and exits 77 (CTest: skipped) without a GPU;
 *   MUST_CUDA(call) a CUDA runtime call that must succeed for the program to go on. */
#ifndef H5G_TESTS_SUPPORT_CHECK_CUDA_H
#define H5G_TESTS_SUPPORT_CHECK_CUDA_H

#include <cuda_runtime.h>

#include "tests/support/check.h"

#define MUST_CUDA(call)                                                                           \
  do {                                                                                            \
    cudaError_t must_error_ = (call);                                                             \
    if (must_error_ != cudaSuccess) {                                                             \
      fprintf(stderr, "FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,                         \
              cudaGetErrorName(must_error_));                                                     \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static inline void require_gpu(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("SKIP: no CUDA device\n");
    exit(77);
  }
}

/* The older GPU header's name for test_summary, still used by test_gpu_backend.cu and
 * test_gpu_pairs.cu. */
static inline int finish(const char *name) { return test_summary(name); }

#endif
