/* The CUDA backend's out-of-core merge (backend_cuda_internal.cuh): chunks of the runs streamed
 * through the device, merged there and copied back, two chunks in flight. */
#include <stdlib.h>

#include "kernels/backend_cuda_internal.cuh"
#include "kernels/host_copy.cuh"

namespace h5g {
namespace detail {

namespace {

/* One chunk of a streamed merge on `stream` in the buffers b: its pieces up from the runs, the
 * merge, the result back to out. Timed as three ops. The host waits only where the merge does
 * (its plan's upload drains the stream: this chunk's pieces and the work of the chunk before it
 * on this stream; a re-sort waits for its pass plan), while the other stream goes on. */
int merge_chunk_on(CudaBackend *cb, cudaStream_t stream, const CallBuffers &b, const void *keys,
                   const uint64_t *values, unsigned width, const uint64_t *from,
                   const uint64_t *to, size_t nruns, uint64_t *piece_offsets, void *out,
                   uint64_t *out_values) {
  int rc = H5G_OK;
  size_t op = 0, n = 0;
  CHECK(op_begin(cb, OP_H2D, &op, stream));
  for (size_t j = 0; j < nruns; j++) {
    const size_t count = to[j] - from[j];
    piece_offsets[j] = n;
    if (count == 0) continue;
    CHECK_CUDA(host_copy_async((char *)b.keys + n * width, (const char *)keys + from[j] * width,
                               count * width, cudaMemcpyHostToDevice, stream));
    if (values)
      CHECK_CUDA(host_copy_async(b.vals + n, values + from[j], count * VALUE_BYTES,
                                 cudaMemcpyHostToDevice, stream));
    n += count;
  }
  piece_offsets[nruns] = n;
  CHECK(op_end(cb, op, stream));
  CHECK(op_begin(cb, OP_KERNELS, &op, stream));
  CHECK(sort_or_merge(stream, b.temp, b.temp_bytes, b.keys, b.alt, b.vals, b.alt_vals, n, width,
                      piece_offsets, nruns));
  CHECK(op_end(cb, op, stream));
  if (n == 0) goto done;
  CHECK(op_begin(cb, OP_D2H, &op, stream));
  CHECK_CUDA(host_copy_async(out, b.keys, n * width, cudaMemcpyDeviceToHost, stream));
  if (values)
    CHECK_CUDA(host_copy_async(out_values, b.vals, n * VALUE_BYTES, cudaMemcpyDeviceToHost,
                               stream));
  CHECK(op_end(cb, op, stream));
done:
  return rc;
}

} // namespace

/* Chunks alternate between two streams and two sets of buffers: chunk c + 1's pieces go up
 * while chunk c is merged and comes back (the copy engines of the two directions work at once).
 * It replaced a pack on the host and one synchronous call per chunk, a much slower merge phase
 * (bench/RESULTS.md, "Out of core: the streamed chunk merge"). */
int cuda_merge_stream(h5g_backend *be, const void *keys, const uint64_t *values, unsigned width,
                      const uint64_t *cuts, size_t nruns, size_t nchunks, void *out,
                      uint64_t *out_values) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const bool with_values = values != NULL;
  const size_t chunk = cuda_merge_chunk(be, width, with_values);
  const double start = now_seconds();
  const double device_before = be->h2d_seconds + be->d2h_seconds + be->kernel_seconds;
  cudaError_t drained = cudaSuccess;
  uint64_t *piece_offsets = (uint64_t *)malloc(2 * (nruns + 1) * sizeof(uint64_t));
  CallBuffers slot[2];
  uint64_t at = 0;
  CHECK_ALLOC(piece_offsets, 2 * (nruns + 1) * sizeof(uint64_t));
  for (size_t c = 0; c < nchunks; c++) {
    uint64_t count = 0;
    for (size_t j = 0; j < nruns; j++) count += cuts[(c + 1) * nruns + j] - cuts[c * nruns + j];
    if (count > chunk)
      H5G_FAIL(H5G_ERR_RUNTIME, "internal error: merge chunk %zu holds %llu keys, over %zu", c,
               (unsigned long long)count, chunk);
  }
  CHECK(prepare_slots(be, chunk, width, with_values, nruns, slot, 2));
  for (size_t c = 0; c < nchunks; c++) {
    const uint64_t *from = cuts + c * nruns, *to = from + nruns;
    const size_t s = c % 2;
    CHECK(merge_chunk_on(cb, s ? cb->side_stream : cb->stream, slot[s], keys, values, width, from,
                         to, nruns, piece_offsets + s * (nruns + 1), (char *)out + at * width,
                         values ? out_values + at : NULL));
    at += piece_offsets[s * (nruns + 1) + nruns];
  }
done:
  /* also after a failure: no copy may still be under way into host memory the caller frees */
  drained = cudaStreamSynchronize(cb->stream);
  if (drained == cudaSuccess) drained = cudaStreamSynchronize(cb->side_stream);
  else cudaStreamSynchronize(cb->side_stream);
  if (drained != cudaSuccess && rc == H5G_OK)
    rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "CUDA error %s in the streamed merge",
                       cudaGetErrorName(drained));
  cudaGetLastError();
  if (rc == H5G_OK) settle_ops(be, cb->nops);
  { /* the host only waited; the two streams' device times overlap, and none of it is hidden */
    const double device = be->h2d_seconds + be->d2h_seconds + be->kernel_seconds - device_before;
    const double wall = now_seconds() - start;
    be->waited_seconds += wall > device ? wall : device;
  }
  free(piece_offsets);
  return rc;
}

} // namespace detail
} // namespace h5g
