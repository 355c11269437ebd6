/* The CUDA backend's stand-ins in a build without CUDA (no nvcc at build time): no device is
 * visible, and asking for the backend says why it cannot run. */
#include "base/error.h"
#include "kernels/cuda_backend.h"

int h5g_cuda_device_count(void) { return 0; }

uint64_t h5g_cuda_free_memory(int device) {
  (void)device;
  return 0;
}

int h5g_cuda_build(char *buf, size_t size) {
  if (size) buf[0] = '\0';
  return 0;
}

int h5g_backend_cuda_create(h5g_backend **out, int local_rank, uint64_t mem_budget) {
  (void)local_rank;
  (void)mem_budget;
  *out = NULL;
  return h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                       "this h5gsort was built without CUDA (no nvcc at build time); use "
                       "--backend cpu or auto");
}

void h5g_cuda_environment(void) {}

int h5g_cuda_warmup_start(int local_rank, h5g_cuda_warmup **w) {
  (void)local_rank;
  *w = NULL;
  return H5G_OK;
}

int h5g_cuda_warmup_finish(h5g_cuda_warmup *w, int needed, double *seconds) {
  (void)w;
  (void)needed;
  if (seconds) *seconds = 0;
  return H5G_OK;
}
