/* The CUDA backend's calls on host keys (backend_cuda_internal.cuh): sort, merge and key
 * transform, each up to the device, there, and back; and the sort-or-merge choice that every
 * path of the backend runs on the device. */
#include "kernels/backend_cuda_internal.cuh"
#include "kernels/tuning.cuh"

namespace h5g {
namespace detail {

/* Forward or inverse key transform on the GPU, in chunks that fit the budget. Chosen over the
 * host loop of base/keys.c because the transform is memory-bound: on the host it runs at one
 * core's bandwidth, while upload + kernel + download moves the keys at the pinned-copy rate,
 * many times that (bench/RESULTS.md, "Host slice buffers (bench/host_buffers.cu)"). */
int cuda_transform(h5g_backend *be, void *keys, size_t n, const h5g_keyspec *ks, int inverse) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const size_t chunk = cuda_capacity(be, ks->width, 0);
  CallBuffers b;
  if (n == 0 || (ks->cls == H5G_KEY_UNSIGNED && !ks->descending)) goto done;
  CHECK(prepare(be, n < chunk ? n : chunk, ks->width, false, 1, &b));
  for (size_t begin = 0; begin < n; begin += chunk) {
    const size_t count = n - begin < chunk ? n - begin : chunk;
    char *host = (char *)keys + begin * ks->width;
    CHECK(timed_copy(be, b.keys, host, count * ks->width, cudaMemcpyHostToDevice));
    CHECK(h5g_cuda_keys_transform(b.keys, count, ks, inverse, cb->stream));
    CHECK(timed_copy(be, host, b.keys, count * ks->width, cudaMemcpyDeviceToHost));
  }
  CHECK_CUDA(cudaStreamSynchronize(cb->stream));
done:
  return rc;
}

/* On the device: sorts keys[0..n) (vals moving with them, when not NULL), or with run_offsets
 * merges the nruns sorted runs there; alt and alt_vals are the ping-pong buffers. Many runs are
 * re-sorted instead: faster than their rounds of merges (tuning.cuh), and as stable (the sort
 * with values is, so equal keys of earlier runs stay first). Keys of class ks come in and leave
 * raw or as ordered bits as `raw` says (kernels.h: the transforms fused into the kernels; a
 * merge takes ordered bits); ks NULL: ordered bits of `width` bytes in and out. */
int sort_or_merge(cudaStream_t stream, void *temp, size_t temp_bytes, void *keys, void *alt,
                  uint64_t *vals, uint64_t *alt_vals, size_t n, unsigned width,
                  const uint64_t *run_offsets, size_t nruns, const h5g_keyspec *ks,
                  unsigned raw) {
  int rc = H5G_OK;
  const h5g_keyspec bits = {H5G_KEY_UNSIGNED, width, 0};
  if (!ks) ks = &bits;
  /* one key or one run: the _typed routines still transform the keys as asked */
  if (n == 0) goto done;
  if (run_offsets && h5g_cuda_merge_rounds(nruns) <= (size_t)h5g::merge_max_rounds(width))
    CHECK(h5g_cuda_merge_runs_typed(temp, &temp_bytes, keys, alt, vals, alt_vals, n, ks, raw,
                                    run_offsets, nruns, stream));
  else
    CHECK(h5g_cuda_sort_typed(temp, &temp_bytes, keys, alt, vals, alt_vals, n, ks, raw, stream));
done:
  return rc;
}

namespace {

/* sort (run_offsets NULL) and merge of host keys (and values): up, sorted or merged, back. */
int host_call(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width,
              const uint64_t *run_offsets, size_t nruns) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const bool with_values = values != NULL;
  CallBuffers b;
  if (n < 2 || (run_offsets && nruns < 2)) goto done;
  CHECK(check_fits(be, n, width, with_values));
  CHECK(prepare(be, n, width, with_values, run_offsets ? nruns : 1, &b));
  CHECK(timed_copy(be, b.keys, keys, n * width, cudaMemcpyHostToDevice));
  if (with_values) CHECK(timed_copy(be, b.vals, values, n * VALUE_BYTES, cudaMemcpyHostToDevice));
  CHECK(sort_or_merge(cb->stream, b.temp, b.temp_bytes, b.keys, b.alt, b.vals, b.alt_vals, n, width,
                      run_offsets, nruns));
  /* timed_copy waits for the stream: the results are in host memory on return */
  CHECK(timed_copy(be, keys, b.keys, n * width, cudaMemcpyDeviceToHost));
  if (with_values) CHECK(timed_copy(be, values, b.vals, n * VALUE_BYTES, cudaMemcpyDeviceToHost));
done:
  return rc;
}

} // namespace

int cuda_sort(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width) {
  return host_call(be, keys, values, n, width, NULL, 0);
}

int cuda_merge(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width,
               const uint64_t *run_offsets, size_t nruns) {
  return host_call(be, keys, values, n, width, run_offsets, nruns);
}

} // namespace detail
} // namespace h5g
