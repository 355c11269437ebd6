/* Host slice buffers for the CUDA backend (issue 4): what it costs to get BYTES of host memory the
 * GPU copies from at full speed, and how fast host->device copies then run. The pipeline reads
 * the whole slice into such a buffer, so the cost is paid once per run and per GiB of slice.
 *   bench_host_buffers [GiB] [threads]        (default 4 GiB, 16 threads)
 * Ways compared (each: allocate + make resident, one full H2D copy, free; median of 3):
 *   cudaMallocHost           the driver maps, faults and pins the pages
 *   malloc+register          cudaHostRegister faults and pins a fresh malloc'd range
 *   touch+register           pages first touched by `threads` threads, then registered
 *   thp+touch+register       same on 2 MiB-aligned memory advised MADV_HUGEPAGE
 *   thp+touch (pageable)     no pinning: the H2D copy goes through the driver's staging */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cuda_runtime.h>

#include "tests/support/check_cuda.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct Touch {
  char *p;
  size_t bytes;
};

static void *touch_part(void *arg) {
  Touch *t = (Touch *)arg;
  for (size_t i = 0; i < t->bytes; i += 4096) t->p[i] = 0;
  return NULL;
}

static void touch(char *p, size_t bytes, int threads) {
  pthread_t tid[256];
  Touch parts[256];
  const size_t part = ((bytes + (size_t)threads - 1) / (size_t)threads + 4095) & ~(size_t)4095;
  for (int i = 0; i < threads; ++i) {
    const size_t begin = (size_t)i * part < bytes ? (size_t)i * part : bytes;
    parts[i] = {p + begin, begin + part < bytes ? part : bytes - begin};
    pthread_create(&tid[i], NULL, touch_part, &parts[i]);
  }
  for (int i = 0; i < threads; ++i) pthread_join(tid[i], NULL);
}

enum Way { MALLOC_HOST, MALLOC_REGISTER, TOUCH_REGISTER, THP_TOUCH_REGISTER, THP_TOUCH, WAYS };
static const char *way_name[WAYS] = {"cudaMallocHost", "malloc+register", "touch+register",
                                     "thp+touch+register", "thp+touch (pageable)"};

static void run(Way way, size_t bytes, int threads, void *dev, double out[3]) {
  char *p = NULL;
  const size_t huge = (size_t)2 << 20;
  double t0 = now();
  switch (way) {
  case MALLOC_HOST: MUST_CUDA(cudaMallocHost((void **)&p, bytes)); break;
  case MALLOC_REGISTER:
    p = (char *)malloc(bytes);
    MUST_CUDA(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
    break;
  case TOUCH_REGISTER:
    p = (char *)malloc(bytes);
    touch(p, bytes, threads);
    MUST_CUDA(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
    break;
  case THP_TOUCH_REGISTER:
  case THP_TOUCH:
    p = (char *)aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
    madvise(p, bytes, MADV_HUGEPAGE);
    touch(p, bytes, threads);
    if (way == THP_TOUCH_REGISTER) MUST_CUDA(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
    break;
  default: break;
  }
  double t1 = now();
  MUST_CUDA(cudaMemcpy(dev, p, bytes, cudaMemcpyHostToDevice));
  double t2 = now();
  if (way == MALLOC_HOST) MUST_CUDA(cudaFreeHost(p));
  else {
    if (way != THP_TOUCH) MUST_CUDA(cudaHostUnregister(p));
    free(p);
  }
  out[0] = t1 - t0;
  out[1] = (double)bytes / (t2 - t1) / 1e9;
  out[2] = now() - t2;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const double gib = argc > 1 ? atof(argv[1]) : 4.0;
  const int threads = argc > 2 ? atoi(argv[2]) : 16;
  const size_t bytes = (size_t)(gib * (double)(1ull << 30));
  void *dev = NULL;
  cudaDeviceProp prop;
  MUST_CUDA(cudaGetDeviceProperties(&prop, 0));
  MUST_CUDA(cudaMalloc(&dev, bytes));
  MUST_CUDA(cudaFree(0));
  printf("%s, %.1f GiB host buffer, %d touch threads, median of 3 after a warm-up\n\n", prop.name,
         gib, threads);
  printf("| way | allocate + resident s | GiB/s to resident | H2D GB/s | free s |\n|---|---:|---:|---:|---:|\n");
  for (int w = 0; w < WAYS; ++w) {
    double r[3][3], col[3][3], warm[3];
    run((Way)w, bytes, threads, dev, warm);
    for (int i = 0; i < 3; ++i) run((Way)w, bytes, threads, dev, r[i]);
    for (int c = 0; c < 3; ++c) {
      for (int i = 0; i < 3; ++i) col[c][i] = r[i][c];
      qsort(col[c], 3, sizeof(double), by_value);
    }
    printf("| %s | %.3f | %.1f | %.1f | %.3f |\n", way_name[w], col[0][1], gib / col[0][1], col[1][1],
           col[2][1]);
  }
  MUST_CUDA(cudaFree(dev));
  return 0;
}
