/* Test helper for gpu_e2e.sh: holds device memory as another job on a shared GPU would.
 *   hold_gpu_memory DEVICE LEAVE_MIB
 * allocates all but LEAVE_MIB MiB of the device's free memory (in 64 MiB steps, as much as the
 * driver grants), prints "holding N bytes, M free" and sleeps until it is killed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s DEVICE LEAVE_MIB\n", argv[0]);
    return 2;
  }
  const size_t step = (size_t)64 << 20, leave = strtoull(argv[2], NULL, 10) << 20;
  size_t free_bytes = 0, total_bytes = 0, held = 0;
  if (cudaSetDevice(atoi(argv[1])) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    fprintf(stderr, "hold_gpu_memory: no usable CUDA device\n");
    return 1;
  }
  /* Many blocks rather than one: the driver keeps some memory back from a single huge request. */
  while (free_bytes > leave + step) {
    void *p = NULL;
    if (cudaMalloc(&p, step) != cudaSuccess) {
      cudaGetLastError();
      break;
    }
    held += step;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) break;
  }
  printf("holding %zu bytes, %zu free\n", held, free_bytes);
  fflush(stdout);
  for (;;) pause();
}
