/* The GPU context's making, split (issue 30 item 1; the measurement behind tuning.cuh's
 * DEVICE_CONNECTIONS): one process per run prints cuInit's seconds, the primary context's
 * (cuDevicePrimaryCtxRetain, what cudaSetDevice makes), the runtime's taking it (cudaFree(0)) and
 * a first cudaMalloc. The driver reads its settings from the environment as it starts, so compare
 * settings one process each, alternated, e.g.
 *   for r in 1 2 3; do for c in 8 4 2 1; do \
 *     CUDA_DEVICE_MAX_CONNECTIONS=$c build/bin/bench_context_start; done; done
 * (also CUDA_MODULE_LOADING, CUDA_CACHE_DISABLE, CUDA_VISIBLE_DEVICES: bench/RESULTS.md). */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define MUST(call)                                                                       \
  do {                                                                                   \
    if ((call) != 0) {                                                                   \
      fprintf(stderr, "bench_context_start: %s failed (%s:%d)\n", #call, __FILE__, __LINE__); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

int main(void) {
  CUdevice dev;
  CUcontext ctx;
  void *p;
  const double t0 = now();
  MUST(cuInit(0));
  const double t1 = now();
  MUST(cuDeviceGet(&dev, 0));
  MUST(cuDevicePrimaryCtxRetain(&ctx, dev));
  const double t2 = now();
  MUST(cuCtxSetCurrent(ctx));
  MUST(cudaFree(0));
  const double t3 = now();
  MUST(cudaMalloc(&p, 1 << 20));
  const double t4 = now();
  const char *connections = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  printf("connections %s  cuInit %.4f  primary_ctx %.4f  runtime %.4f  first_malloc %.4f  "
         "total %.4f\n",
         connections ? connections : "(driver default)", t1 - t0, t2 - t1, t3 - t2, t4 - t3,
         t4 - t0);
  return 0;
}
