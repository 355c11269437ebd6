/* The CUDA backend's rows that follow the resident run (backend_cuda_internal.cuh, base/backend.h:
 * gather_reserve ... gather_done): a table of rows goes up piece by piece, is put in the order of
 * the source indices the run's sort left on the device, and comes back piece by piece, in two
 * tables of its own beside the pool; every step on the backend's stream, waited for only where
 * the host needs a piece's copy done. */
#include "kernels/backend_cuda_internal.cuh"

namespace h5g {
namespace detail {

namespace {

size_t table_bytes(size_t n, size_t row_bytes) { return (n * row_bytes + 255) & ~(size_t)255; }

/* Two tables of n rows (in, out) and the word that says an index fell outside. */
size_t rows_bytes(size_t n, size_t row_bytes) {
  return 2 * table_bytes(n, row_bytes) + 256;
}

/* The run's values are the source indices of n keys: a sort of n keys with values. */
bool run_has_index(const CudaBackend *cb, size_t n) {
  return cb->run_result_values && cb->run_n == n;
}

unsigned *outside_word(const CudaBackend *cb) {
  return (unsigned *)((char *)cb->rows + 2 * cb->rows_table);
}

/* A table of n rows of row_bytes fits the room gather_reserve made. */
int check_table(const CudaBackend *cb, size_t n, size_t row_bytes) {
  int rc = H5G_OK;
  if (!cb->rows_table || n > SIZE_MAX / (row_bytes ? row_bytes : 1) ||
      n * row_bytes > cb->rows_table)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: a table of %zu rows of %zu bytes to gather on the "
             "GPU, in room for %zu bytes", n, row_bytes, cb->rows_table);
done:
  return rc;
}

} // namespace

int cuda_gather_reserve(h5g_backend *be, size_t n, size_t row_bytes) {
  CudaBackend *cb = impl_of(be);
  if (!run_has_index(cb, n) || !row_bytes || n > SIZE_MAX / 4 / row_bytes ||
      cb->pool_bytes + rows_bytes(n, row_bytes) > be->mem_budget)
    return 0;
  const size_t bytes = rows_bytes(n, row_bytes);
  if (bytes > cb->rows_bytes) {
    if (cudaSetDevice(cb->device) != cudaSuccess ||
        cudaStreamSynchronize(cb->stream) != cudaSuccess)
      return 0;
    cudaFree(cb->rows);
    cb->rows = NULL;
    cb->rows_bytes = cb->rows_table = 0;
    if (cudaMalloc(&cb->rows, bytes) != cudaSuccess) {
      cudaGetLastError(); /* out of memory is not sticky: the host route serves */
      return 0;
    }
    cb->rows_bytes = bytes;
  }
  cb->rows_table = table_bytes(n, row_bytes);
  return cudaMemsetAsync(outside_word(cb), 0, sizeof(unsigned), cb->stream) == cudaSuccess;
}

namespace {

/* Rows [first, first + count) of a table of n fit it; the piece's copy keeps its host range, so
 * that gather_wait finds it. */
int copy_piece(CudaBackend *cb, void *device_table, void *piece, size_t n, size_t row_bytes,
               size_t first, size_t count, OpKind kind) {
  int rc = H5G_OK;
  CHECK(check_table(cb, n, row_bytes));
  if (first > n || count > n - first)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: rows [%zu, %zu) of a table of %zu %s the GPU",
             first, first + count, n, kind == OP_H2D ? "to" : "from");
  CHECK_CUDA(cudaSetDevice(cb->device));
  {
    char *on_device = (char *)device_table + first * row_bytes;
    const size_t bytes = count * row_bytes;
    CHECK(copy_async(cb, kind == OP_H2D ? on_device : piece, kind == OP_H2D ? piece : on_device,
                     bytes, kind, 0));
    cb->ops[cb->nops - 1].host_begin = (const char *)piece;
    cb->ops[cb->nops - 1].host_end = (const char *)piece + bytes;
  }
done:
  return rc;
}

} // namespace

int cuda_gather_up(h5g_backend *be, const void *piece, size_t n, size_t row_bytes, size_t first,
                   size_t count) {
  CudaBackend *cb = impl_of(be);
  return copy_piece(cb, cb->rows, const_cast<void *>(piece), n, row_bytes, first, count, OP_H2D);
}

int cuda_gather_rows(h5g_backend *be, size_t n, size_t row_bytes, uint64_t first_index) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  size_t op = 0;
  CHECK(check_table(cb, n, row_bytes));
  if (!run_has_index(cb, n))
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: %zu rows to gather on the GPU, beside a run of "
             "%zu keys%s", n, cb->run_n, cb->run_result_values ? " with values" : "");
  CHECK_CUDA(cudaSetDevice(cb->device));
  CHECK(op_begin(cb, OP_KERNELS, &op, cb->stream));
  CHECK(h5g_cuda_gather_rows(cb->rows, n, row_bytes, cb->run_result_values, first_index, n,
                             (char *)cb->rows + cb->rows_table, outside_word(cb), cb->stream));
  CHECK(op_end(cb, op, cb->stream));
done:
  return rc;
}

int cuda_gather_down(h5g_backend *be, void *piece, size_t n, size_t row_bytes, size_t first,
                     size_t count) {
  CudaBackend *cb = impl_of(be);
  return copy_piece(cb, (char *)cb->rows + cb->rows_table, piece, n, row_bytes, first, count,
                    OP_D2H);
}

int cuda_gather_wait(h5g_backend *be, const void *end) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const double start = now_seconds();
  const char *upto = (const char *)end;
  size_t i = cb->nops; /* the newest copy there: the ones before it are done once it is */
  while (i > 0 && !(cb->ops[i - 1].host_begin < upto && upto <= cb->ops[i - 1].host_end)) i--;
  if (i == 0) goto done; /* settled: waited for before */
  CHECK_CUDA(cudaEventSynchronize(cb->ops[i - 1].stop));
  settle_ops(be, i);
done:
  be->waited_seconds += now_seconds() - start;
  return rc;
}

int cuda_gather_done(h5g_backend *be) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const double start = now_seconds();
  unsigned outside = 0;
  if (!cb->rows_table) goto done; /* no room made: nothing started */
  CHECK_CUDA(cudaSetDevice(cb->device));
  CHECK_CUDA(cudaMemcpyAsync(&outside, outside_word(cb), sizeof outside, cudaMemcpyDeviceToHost,
                             cb->stream));
  CHECK_CUDA(cudaStreamSynchronize(cb->stream));
  settle_ops(be, cb->nops);
  if (outside)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: a source index on the GPU outside the rows of the "
             "slice");
done:
  be->waited_seconds += now_seconds() - start;
  return rc;
}

} // namespace detail
} // namespace h5g
