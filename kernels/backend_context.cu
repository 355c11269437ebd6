/* The CUDA backend's context and life (backend_cuda_internal.cuh, cuda_backend.h): the context
 * made in a warm-up thread while the pipeline validates, device queries, and the backend's
 * creation and destruction. The context itself goes with the process's exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/backend_cuda_internal.cuh"
#include "kernels/cuda_backend.h"
#include "kernels/tuning.cuh"

namespace h5g {
namespace detail {

namespace {

/* Makes (or takes) the context of `device`: the first call on a device creates it, which needs
 * device memory of its own. cudaSetDevice creates it since CUDA 12; cudaFree(0) before. */
int make_current_context(int device) {
  int rc = H5G_OK;
  const cudaError_t err = cudaSetDevice(device);
  if (err == cudaErrorMemoryAllocation)
    H5G_FAIL(H5G_ERR_RUNTIME,
             "GPU %d: no device memory left to start CUDA on it (another process holds it?); "
             "free the GPU or use --backend cpu", device);
  CHECK_CUDA(err);
  CHECK_CUDA(cudaFree(0));
done:
  return rc;
}

} // namespace
} // namespace detail
} // namespace h5g

using namespace h5g::detail;

struct h5g_cuda_warmup {
  pthread_t thread;
  int local_rank, rc;
  double seconds;
  char error[H5G_MSG_MAX]; /* errors are per thread: handed over by h5g_cuda_warmup_finish */
};

namespace {

void *warmup_thread(void *arg) {
  h5g_cuda_warmup *w = (h5g_cuda_warmup *)arg;
  const double start = now_seconds();
  const int count = h5g_cuda_device_count();
  /* the device the backend picks */
  if (count > 0) w->rc = make_current_context(w->local_rank % count);
  if (w->rc != H5G_OK) snprintf(w->error, sizeof w->error, "%s", h5g_error_message());
  w->seconds = now_seconds() - start;
  return NULL;
}

} // namespace

extern "C" void h5g_cuda_environment(void) {
  char connections[16];
  snprintf(connections, sizeof connections, "%d", h5g::DEVICE_CONNECTIONS);
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", connections, 0);
}

extern "C" int h5g_cuda_warmup_start(int local_rank, h5g_cuda_warmup **out) {
  int rc = H5G_OK;
  h5g_cuda_warmup *w = (h5g_cuda_warmup *)calloc(1, sizeof(*w));
  *out = NULL;
  CHECK_ALLOC(w, sizeof(*w));
  w->local_rank = local_rank < 0 ? 0 : local_rank;
  if (pthread_create(&w->thread, NULL, warmup_thread, w) != 0) goto done; /* the backend makes it */
  *out = w;
  w = NULL;
done:
  free(w);
  return rc;
}

extern "C" int h5g_cuda_warmup_finish(h5g_cuda_warmup *w, int needed, double *seconds) {
  int rc = H5G_OK;
  if (seconds) *seconds = 0;
  if (!w) goto done;
  pthread_join(w->thread, NULL);
  if (seconds) *seconds = w->seconds;
  if (needed && w->rc != H5G_OK) H5G_FAIL(w->rc, "%s", w->error);
done:
  free(w);
  return rc;
}

extern "C" int h5g_cuda_build(char *buf, size_t size) {
  /* H5G_CUDA_ARCHITECTURES: kernels/CMakeLists.txt passes CMAKE_CUDA_ARCHITECTURES */
  snprintf(buf, size, "CUDA runtime %d.%d, architectures %s", CUDART_VERSION / 1000,
           CUDART_VERSION % 1000 / 10, H5G_CUDA_ARCHITECTURES);
  return 1;
}

extern "C" int h5g_cuda_device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); /* clear the sticky "no device" error */
    return 0;
  }
  return n;
}

extern "C" uint64_t h5g_cuda_free_memory(int device) {
  size_t free_bytes = 0, total_bytes = 0;
  int count = h5g_cuda_device_count();
  if (count == 0 || cudaSetDevice(device % count) != cudaSuccess ||
      cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return free_bytes;
}

namespace {

void cuda_destroy(h5g_backend *be) {
  if (!be) return;
  CudaBackend *cb = impl_of(be);
  if (cb) {
    cudaSetDevice(cb->device);
    if (cb->stream) cudaStreamSynchronize(cb->stream);
    if (cb->side_stream) cudaStreamSynchronize(cb->side_stream);
    settle_ops(be, cb->nops);
    free(cb->ops);
    cudaFree(cb->pool);
    cudaFree(cb->rows);
    cudaFree(cb->loaded_sum);
    if (cb->stream) cudaStreamDestroy(cb->stream);
    if (cb->side_stream) cudaStreamDestroy(cb->side_stream);
    free(cb);
  }
  free(be);
}

} // namespace

extern "C" int h5g_backend_cuda_create(h5g_backend **out, int local_rank, uint64_t mem_budget) {
  int rc = H5G_OK;
  h5g_backend *be = NULL;
  CudaBackend *cb = NULL;
  cudaDeviceProp props;
  size_t free_bytes = 0, total_bytes = 0;
  const int count = h5g_cuda_device_count();
  *out = NULL;
  if (count == 0) H5G_FAIL(H5G_ERR_RUNTIME, "no CUDA device is visible");
  be = (h5g_backend *)calloc(1, sizeof(*be));
  CHECK_ALLOC(be, sizeof(*be));
  cb = (CudaBackend *)calloc(1, sizeof(*cb));
  CHECK_ALLOC(cb, sizeof(*cb));
  be->impl = cb;
  cb->device = (local_rank < 0 ? 0 : local_rank) % count;
  CHECK(make_current_context(cb->device)); /* made already when h5g_cuda_warmup_start ran */
  CHECK_CUDA(cudaGetDeviceProperties(&props, cb->device));
  /* Both streams now, one after the other: as far as is known (the mapping is not documented)
   * the driver hands its hardware work queues (h5g_cuda_environment: 2) to streams in turn as
   * they are made, so NCCL's streams, made later, should not leave the streamed merge's second
   * stream on the first one's queue (measured neutral:
   * bench/RESULTS.md, "Records, two key fields, and the build before issue 30"). */
  CHECK_CUDA(cudaStreamCreateWithFlags(&cb->stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&cb->side_stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaMalloc(&cb->loaded_sum, sizeof *cb->loaded_sum));
  CHECK_CUDA(cudaMemsetAsync(cb->loaded_sum, 0, sizeof *cb->loaded_sum, cb->stream));
  CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  be->name = "cuda";
  snprintf(be->device_name, sizeof be->device_name, "%s", props.name);
  be->mem_budget = mem_budget ? mem_budget : (uint64_t)(free_bytes / 10 * 9);
  be->capacity = cuda_capacity;
  be->pin = cuda_pin;
  be->unpin = cuda_unpin;
  be->transform = cuda_transform;
  be->sort = cuda_sort;
  be->merge = cuda_merge;
  be->merge_chunk = cuda_merge_chunk;
  be->merge_stream = cuda_merge_stream;
  be->load = cuda_load;
  be->sort_loaded = cuda_sort_loaded;
  be->run_buffers = cuda_run_buffers;
  be->merge_received = cuda_merge_received;
  be->wait_copied = cuda_wait_copied;
  be->wait_loaded = cuda_wait_loaded;
  be->copy_out = cuda_copy_out;
  be->checksum_loaded = cuda_checksum_loaded;
  be->loaded_checksum = cuda_loaded_checksum;
  be->gather_fits = cuda_gather_fits;
  be->gather_rows = cuda_gather_rows;
  be->destroy = cuda_destroy;
  *out = be;
  be = NULL;
done:
  cuda_destroy(be);
  return rc;
}
