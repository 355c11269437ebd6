/* The CUDA backend's context and life (backend_cuda_internal.cuh): the context made in a warm-up
 * thread while the pipeline validates, its release (after MPI_Finalize, or in a thread behind the
 * write once the GPU's work is over, or by another process after this one's exit), device
 * queries, and the backend's creation and destruction. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/backend_cuda_internal.cuh"
#include "kernels/tuning.cuh"

namespace h5g {
namespace detail {

namespace {

/* The device whose context this process made (-1: none), for h5g_cuda_release_context, and
 * whether other processes may make contexts on it meanwhile (its compute mode is the default).
 * Written by the warm-up thread before it is joined, or by the main thread. */
int g_context_device = -1;
bool g_context_shared = false;

/* More than a context's descriptors (23 with it alive: H100, CUDA 13), and no more than the
 * helper takes (io/populate.h, H5G_HELPER_DESCRIPTORS: the same 256). */
constexpr int DRIVER_DESCRIPTORS_MAX = 256;

/* h5g_cuda_hand_over_context: who takes the driver's descriptors (NULL: nobody), set before any
 * thread that reads it starts. */
h5g_descriptor_taker g_taker = NULL;

/* The context is left as it is for g_taker, rather than destroyed here: the taker closes the
 * driver's descriptors after this process's exit, and the release runs then (H100 machine,
 * CUDA 13, a probe's context with 4 GiB of device memory: cudaDeviceReset 0.06-0.08 s, then
 * 0.05-0.08 s in the exit for its descriptors; handed over, that exit took 0.0006 s and the
 * taker's close 0.12-0.16 s; h5gsort's exit stage 0.006-0.008 s against 0.078: bench/RESULTS.md).
 * Not where the compute mode keeps the device to one process (a job's next step would find it
 * taken until the release). */
bool context_left_for_taker() { return g_taker && g_context_shared; }

/* The descriptors of NVIDIA's driver this process holds (/dev/nvidia*), at most `max` into fds;
 * their count, or -1 when there are more or /proc cannot tell. */
int driver_descriptors(int *fds, int max) {
  int count = 0;
  DIR *dir = opendir("/proc/self/fd");
  if (!dir) return -1;
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    char link[64], target[64];
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (strncmp(target, "/dev/nvidia", 11) != 0) continue;
    if (count == max) {
      count = -1;
      break;
    }
    fds[count++] = atoi(e->d_name);
  }
  closedir(dir);
  return count;
}

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
  int mode;
  g_context_shared = cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device) == cudaSuccess &&
                     mode == cudaComputeModeDefault;
  g_context_device = device;
done:
  return rc;
}

/* The release cuda_retire began: its thread waits for the copies back (COPIED, with their
 * outcome), then destroys the context (RELEASED). `stage` is written under `lock`; `started`
 * only by the threads that start and join it; `seconds` is read once it is joined. One backend
 * a process at a time, as the context. */
enum RetireStage { COPYING, COPIED, RELEASED };
struct Retirement {
  pthread_t thread;
  bool started;
  pthread_mutex_t lock;
  pthread_cond_t moved;
  RetireStage stage;
  h5g_backend *be;
  cudaError_t copies_error;
  double seconds;
};
Retirement g_retire = {pthread_t(), false, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                       COPYING, NULL, cudaSuccess, 0};

void retire_stage(RetireStage stage) {
  pthread_mutex_lock(&g_retire.lock);
  g_retire.stage = stage;
  pthread_cond_broadcast(&g_retire.moved);
  pthread_mutex_unlock(&g_retire.lock);
}

/* Called only on a retired backend (its thread started). */
void wait_retire_stage(RetireStage stage) {
  pthread_mutex_lock(&g_retire.lock);
  while (g_retire.stage < stage) pthread_cond_wait(&g_retire.moved, &g_retire.lock);
  pthread_mutex_unlock(&g_retire.lock);
}

void *retire_thread(void *) {
  const double start = now_seconds();
  h5g_backend *be = g_retire.be;
  CudaBackend *cb = impl_of(be);
  cudaError_t err = cudaSetDevice(cb->device);
  if (err == cudaSuccess) err = cudaStreamSynchronize(cb->stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(cb->side_stream);
  if (err == cudaSuccess) settle_ops(be, cb->nops); /* the report's copy times */
  g_retire.copies_error = err;
  retire_stage(COPIED); /* the backend is the host's again: not touched below */
  if (!context_left_for_taker()) cudaDeviceReset();
  cudaGetLastError(); /* nothing is left to tell of a failure */
  g_retire.seconds = now_seconds() - start;
  retire_stage(RELEASED);
  return NULL;
}

} // namespace

int wait_retired_copies(h5g_backend *be) {
  int rc = H5G_OK;
  const double start = now_seconds();
  wait_retire_stage(COPIED);
  be->waited_seconds += now_seconds() - start;
  if (g_retire.copies_error != cudaSuccess)
    H5G_FAIL(H5G_ERR_RUNTIME, "copying the sorted keys back from the GPU: %s",
             cudaGetErrorString(g_retire.copies_error));
done:
  return rc;
}

void wait_retired_release() { wait_retire_stage(RELEASED); }

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

extern "C" int h5g_cuda_warmup_rank(const h5g_cuda_warmup *w) { return w ? w->local_rank : -1; }

extern "C" int h5g_cuda_context_goes_to_taker(void) {
  return g_context_device >= 0 && context_left_for_taker();
}

extern "C" void h5g_cuda_hand_over_context(h5g_descriptor_taker take) {
  /* not under a tool injected into CUDA (Nsight Systems, Nsight Compute, compute-sanitizer): it
   * reads the context through the driver at the exit */
  g_taker = getenv("CUDA_INJECTION64_PATH") ? NULL : take;
}

extern "C" double h5g_cuda_release_context(double *behind_write, int *handed_over) {
  int fds[DRIVER_DESCRIPTORS_MAX];
  if (behind_write) *behind_write = 0;
  if (handed_over) *handed_over = 0;
  if (g_context_device < 0) return 0;
  const double start = now_seconds();
  if (g_retire.started) {
    pthread_join(g_retire.thread, NULL);
    if (behind_write) *behind_write = g_retire.seconds;
    g_retire.started = false;
  }
  const int count = context_left_for_taker() ? driver_descriptors(fds, DRIVER_DESCRIPTORS_MAX) : 0;
  if (count > 0 && g_taker(fds, count)) {
    if (handed_over) *handed_over = 1;
  } else if (cudaSetDevice(g_context_device) == cudaSuccess) {
    cudaDeviceReset(); /* here: its retire left it to a taker that did not take it, or none */
  }
  cudaGetLastError(); /* nothing is left to tell of a failure */
  g_context_device = -1;
  return now_seconds() - start;
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

/* base/backend.h: the release of the context begins in a thread (retire_thread). Where no
 * thread can be made the backend stays as it is, and the tear-down releases it. */
int cuda_retire(h5g_backend *be) {
  CudaBackend *cb = impl_of(be);
  if (cb->retired || g_context_device != cb->device) return H5G_OK;
  g_retire.be = be;
  g_retire.stage = COPYING;
  if (pthread_create(&g_retire.thread, NULL, retire_thread, NULL) != 0) return H5G_OK;
  g_retire.started = true;
  cb->retired = true;
  return H5G_OK;
}

void cuda_destroy(h5g_backend *be) {
  if (!be) return;
  CudaBackend *cb = impl_of(be);
  if (cb && cb->retired) { /* its streams, events and pool go with the context */
    wait_retired_copies(be);
    free(cb->ops);
    free(cb);
  } else if (cb) {
    cudaSetDevice(cb->device);
    if (cb->stream) cudaStreamSynchronize(cb->stream);
    if (cb->side_stream) cudaStreamSynchronize(cb->side_stream);
    settle_ops(be, cb->nops);
    free(cb->ops);
    cudaFree(cb->pool);
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
   * stream on the first one's queue (measured neutral: bench/RESULTS.md). */
  CHECK_CUDA(cudaStreamCreateWithFlags(&cb->stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&cb->side_stream, cudaStreamNonBlocking));
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
  be->retire = cuda_retire;
  be->destroy = cuda_destroy;
  *out = be;
  be = NULL;
done:
  cuda_destroy(be);
  return rc;
}
