/* MUST_CUDA: benchmarks stop at the first failing CUDA call, naming it and its file:line. */
#ifndef H5G_BENCH_MUST_CUDA_CUH
#define H5G_BENCH_MUST_CUDA_CUH

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define MUST_CUDA(call)                                                                           \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_));        \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

#endif
