/* The CUDA backend's device memory (backend_cuda_internal.cuh): the pool every call carves its
 * buffers from, how many keys fit the budget, and pinning the host buffers copies go through. */
#include <stdint.h>

#include "kernels/backend_cuda_internal.cuh"

namespace h5g {
namespace detail {

namespace {

size_t aligned_bytes(size_t n, unsigned width) { return (n * width + 255) & ~(size_t)255; }

/* Scratch (beyond the keys, the values and their ping-pong buffers) of a sort or merge of n keys
 * of `width` bytes, with values or not. */
int scratch_bytes(size_t n, unsigned width, bool with_values, size_t nruns, size_t *bytes) {
  int rc = H5G_OK;
  /* a size query reads no buffer, only whether values come (kernels.h) */
  uint64_t *const vals = with_values ? H5G_CUDA_QUERY_VALUES : NULL;
  size_t sort_bytes = 0, merge_bytes = 0;
  CHECK(h5g_cuda_sort(NULL, &sort_bytes, NULL, NULL, vals, NULL, n, width, 0));
  CHECK(h5g_cuda_merge_runs(NULL, &merge_bytes, NULL, NULL, vals, NULL, n, width, NULL, nruns, 0));
  *bytes = sort_bytes > merge_bytes ? sort_bytes : merge_bytes;
done:
  return rc;
}

/* Device bytes one call on n keys needs: keys, values, their ping-pong buffers, scratch; a
 * multiple of 256, so that calls side by side in the pool stay aligned. */
size_t call_bytes(size_t n, unsigned width, bool with_values, size_t nruns) {
  size_t scratch = 0;
  if (scratch_bytes(n, width, with_values, nruns, &scratch) != H5G_OK) return SIZE_MAX;
  return 2 * aligned_bytes(n, width) + (with_values ? 2 * aligned_bytes(n, VALUE_BYTES) : 0) +
         aligned_bytes(scratch, 1);
}

/* Largest n for which `slots` calls side by side fit the budget (1 at least). */
size_t keys_that_fit(const h5g_backend *be, unsigned width, bool with_values, size_t slots) {
  const size_t element = width + (with_values ? VALUE_BYTES : 0);
  const size_t budget = be->mem_budget / slots;
  size_t lo = 1, hi = budget / (2 * element) + 1; /* call_bytes(lo) fits, hi not */
  if (call_bytes(lo, width, with_values, RESERVED_MERGE_RUNS) > budget) return 1;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (call_bytes(mid, width, with_values, RESERVED_MERGE_RUNS) <= budget) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* Makes the pool at least `bytes` large, within the budget. */
int reserve(h5g_backend *be, size_t bytes) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  if (bytes <= cb->pool_bytes) goto done;
  if (bytes > be->mem_budget)
    H5G_FAIL(H5G_ERR_RUNTIME,
             "a GPU call needs %zu bytes of device memory, over the budget of %llu", bytes,
             (unsigned long long)be->mem_budget);
  CHECK_CUDA(cudaStreamSynchronize(cb->stream));
  CHECK_CUDA(cudaStreamSynchronize(cb->side_stream));
  CHECK_CUDA(cudaFree(cb->pool));
  cb->pool = NULL;
  cb->pool_bytes = 0;
  if (cudaMalloc(&cb->pool, bytes) != cudaSuccess) {
    /* Free memory shrank since the budget was set: another process took it. */
    size_t free_bytes = 0, total_bytes = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_bytes, &total_bytes);
    cb->pool = NULL;
    H5G_FAIL(H5G_ERR_RUNTIME,
             "GPU %d: cannot allocate %zu bytes of device memory, %zu of %zu bytes are free "
             "(another process holds the rest?); lower --device-memory or free the GPU",
             cb->device, bytes, free_bytes, total_bytes);
  }
  cb->pool_bytes = bytes;
done:
  return rc;
}

} // namespace

size_t cuda_capacity(h5g_backend *be, unsigned width, int with_values) {
  return keys_that_fit(be, width, with_values != 0, 1);
}

/* Two chunks of a streamed merge are on the device at once. */
size_t cuda_merge_chunk(h5g_backend *be, unsigned width, int with_values) {
  return keys_that_fit(be, width, with_values != 0, 2);
}

/* Host memory made resident beforehand (base/host_memory.h) registers far faster than
 * cudaMallocHost allocates (bench/RESULTS.md, "Host slice buffers (bench/host_buffers.cu)").
 * Called from the pipeline's buffer thread: the device is per thread. */
int cuda_pin(h5g_backend *be, void *p, size_t bytes) {
  int rc = H5G_OK;
  CHECK_CUDA(cudaSetDevice(impl_of(be)->device));
  CHECK_CUDA(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
done:
  return rc;
}

/* The streams are drained first: after a failure, copies into or out of the buffer may still be
 * under way when the pipeline releases it. */
void cuda_unpin(h5g_backend *be, void *p) {
  cudaSetDevice(impl_of(be)->device); /* the unpinning thread's device is 0 until told */
  cudaStreamSynchronize(impl_of(be)->stream);
  cudaStreamSynchronize(impl_of(be)->side_stream);
  cudaHostUnregister(p);
}

/* Carves the buffers of `slots` calls side by side out of the pool, reserved first; each call
 * has its keys and their ping-pong buffer, with values the values and theirs (NULL without),
 * then its scratch. */
int prepare_slots(h5g_backend *be, size_t n, unsigned width, bool with_values, size_t nruns,
                  CallBuffers *b, size_t slots) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const size_t key_bytes = aligned_bytes(n, width);
  const size_t val_bytes = with_values ? aligned_bytes(n, VALUE_BYTES) : 0;
  const size_t slot_bytes = call_bytes(n, width, with_values, nruns);
  CHECK_CUDA(cudaSetDevice(cb->device));
  if (slot_bytes > SIZE_MAX / slots) H5G_FAIL(H5G_ERR_RUNTIME, "%zu keys do not fit", n);
  CHECK(reserve(be, slots * slot_bytes));
  for (size_t k = 0; k < slots; k++) {
    char *const pool = (char *)cb->pool + k * slot_bytes;
    b[k].keys = pool;
    b[k].alt = pool + key_bytes;
    b[k].vals = with_values ? (uint64_t *)(pool + 2 * key_bytes) : NULL;
    b[k].alt_vals = with_values ? (uint64_t *)(pool + 2 * key_bytes + val_bytes) : NULL;
    b[k].temp = pool + 2 * key_bytes + 2 * val_bytes;
    /* the last call also has what the pool holds beyond the slots */
    b[k].temp_bytes = (k + 1 == slots ? cb->pool_bytes - k * slot_bytes : slot_bytes) -
                      2 * key_bytes - 2 * val_bytes;
  }
done:
  return rc;
}

int prepare(h5g_backend *be, size_t n, unsigned width, bool with_values, size_t nruns,
            CallBuffers *b) {
  return prepare_slots(be, n, width, with_values, nruns, b, 1);
}

int check_fits(h5g_backend *be, size_t n, unsigned width, bool with_values) {
  int rc = H5G_OK;
  const size_t cap = cuda_capacity(be, width, with_values);
  if (n > cap)
    H5G_FAIL(H5G_ERR_USAGE, "%zu keys%s exceed the CUDA backend capacity of %zu", n,
             with_values ? " with values" : "", cap);
done:
  return rc;
}

} // namespace detail
} // namespace h5g
