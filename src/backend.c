/* Builds without CUDA get these stand-ins, so the CLI can say why `--backend cuda` fails. */
#include "base/backend.h"
#include "base/error.h"

#ifndef H5G_HAVE_CUDA
int h5g_cuda_device_count(void) { return 0; }

uint64_t h5g_cuda_free_memory(int device) {
  (void)device;
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

int h5g_cuda_warmup_rank(const h5g_cuda_warmup *w) {
  (void)w;
  return -1;
}

void h5g_cuda_hand_over_context(h5g_descriptor_taker take) { (void)take; }

int h5g_cuda_context_goes_to_taker(void) { return 0; }

double h5g_cuda_release_context(double *behind_write, int *handed_over) {
  if (behind_write) *behind_write = 0;
  if (handed_over) *handed_over = 0;
  return 0;
}
#endif
