/* The CUDA backend's rows that follow the resident run (backend_cuda_internal.cuh, base/backend.h:
 * gather_fits, gather_rows): a table of rows goes up, is put in the order of the source indices
 * the run's sort left on the device, and comes back, in buffers of its own beside the pool. */
#include "kernels/backend_cuda_internal.cuh"

namespace h5g {
namespace detail {

namespace {

size_t table_bytes(size_t n, size_t row_bytes) { return (n * row_bytes + 255) & ~(size_t)255; }

/* Two tables of n rows (in, out) and the word that says an index fell outside. */
size_t rows_bytes(size_t n, size_t row_bytes) {
  return 2 * table_bytes(n, row_bytes) + 256;
}

/* The run's values are the source indices of n rows: a sort of n keys with values. */
bool run_has_index(const CudaBackend *cb, size_t n) {
  return cb->run_result_values && cb->run_n == n;
}

/* Makes the rows' buffers at least `bytes` large, within the budget beside the pool. */
int reserve_rows(h5g_backend *be, size_t bytes) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  if (bytes <= cb->rows_bytes) goto done;
  CHECK_CUDA(cudaStreamSynchronize(cb->stream));
  CHECK_CUDA(cudaFree(cb->rows));
  cb->rows = NULL;
  cb->rows_bytes = 0;
  CHECK_CUDA(cudaMalloc(&cb->rows, bytes));
  cb->rows_bytes = bytes;
done:
  return rc;
}

} // namespace

int cuda_gather_fits(h5g_backend *be, size_t n, size_t row_bytes) {
  const CudaBackend *cb = impl_of(be);
  return run_has_index(cb, n) && row_bytes && n <= SIZE_MAX / 4 / row_bytes &&
         cb->pool_bytes + rows_bytes(n, row_bytes) <= be->mem_budget;
}

int cuda_gather_rows(h5g_backend *be, const void *rows, size_t n, size_t row_bytes,
                     uint64_t first_index, void *out) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const double start = now_seconds();
  const size_t table = table_bytes(n, row_bytes);
  unsigned outside = 0, *outside_word = NULL;
  size_t op = 0;
  if (!cuda_gather_fits(be, n, row_bytes))
    H5G_FAIL(H5G_ERR_RUNTIME,
             "internal error: %zu rows of %zu bytes to gather on the GPU, beside a run of %zu "
             "keys%s and %zu bytes of its %llu-byte budget", n, row_bytes, cb->run_n,
             cb->run_result_values ? " with values" : "", cb->pool_bytes,
             (unsigned long long)be->mem_budget);
  CHECK_CUDA(cudaSetDevice(cb->device));
  CHECK(reserve_rows(be, rows_bytes(n, row_bytes)));
  outside_word = (unsigned *)((char *)cb->rows + 2 * table);
  CHECK_CUDA(cudaMemsetAsync(outside_word, 0, sizeof *outside_word, cb->stream));
  CHECK(copy_async(cb, cb->rows, rows, n * row_bytes, OP_H2D, 0));
  CHECK(op_begin(cb, OP_KERNELS, &op, cb->stream));
  CHECK(h5g_cuda_gather_rows(cb->rows, n, row_bytes, cb->run_result_values, first_index, n,
                             (char *)cb->rows + table, outside_word, cb->stream));
  CHECK(op_end(cb, op, cb->stream));
  CHECK(copy_async(cb, out, (char *)cb->rows + table, n * row_bytes, OP_D2H, 0));
  CHECK_CUDA(cudaMemcpyAsync(&outside, outside_word, sizeof outside, cudaMemcpyDeviceToHost,
                             cb->stream));
  CHECK_CUDA(cudaStreamSynchronize(cb->stream));
  settle_ops(be, cb->nops);
  if (outside)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: a source index on the GPU outside the %zu rows "
             "from %llu", n, (unsigned long long)first_index);
done:
  be->waited_seconds += now_seconds() - start;
  return rc;
}

} // namespace detail
} // namespace h5g
