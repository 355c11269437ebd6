/* Timed stream work of the CUDA backend (backend_cuda_internal.cuh): copies timed on their own,
 * and on the resident path stream work timed by events and only waited for where the host needs
 * its result, so the copies and kernels run while the host reads or writes the file. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/backend_cuda_internal.cuh"
#include "kernels/host_copy.cuh"

namespace h5g {
namespace detail {

namespace {

/* The resident path copies results back in pieces of this size, so the host can write the first
 * piece while the rest is still on its way. */
constexpr size_t COPY_BACK_PIECE_BYTES = (size_t)256 << 20;

} // namespace

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A copy between host and device, timed on its own so the report can show H2D and D2H apart
 * from the kernels (the stream is drained first, so earlier work is not counted). */
int timed_copy(h5g_backend *be, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  CHECK_CUDA(cudaStreamSynchronize(cb->stream));
  {
    const double start = now_seconds();
    CHECK_CUDA(host_copy_async(dst, src, bytes, kind, cb->stream));
    CHECK_CUDA(cudaStreamSynchronize(cb->stream));
    const double seconds = now_seconds() - start;
    (kind == cudaMemcpyHostToDevice ? be->h2d_seconds : be->d2h_seconds) += seconds;
    be->waited_seconds += seconds; /* nothing overlaps it */
  }
done:
  return rc;
}

int op_begin(CudaBackend *cb, OpKind kind, size_t *index, cudaStream_t stream) {
  int rc = H5G_OK;
  if (cb->nops == cb->ops_capacity) {
    const size_t grown = cb->ops_capacity ? 2 * cb->ops_capacity : 64;
    StreamOp *ops = (StreamOp *)realloc(cb->ops, grown * sizeof *ops);
    CHECK_ALLOC(ops, grown * sizeof *ops);
    cb->ops = ops;
    cb->ops_capacity = grown;
  }
  {
    StreamOp *op = &cb->ops[cb->nops];
    op->kind = kind;
    op->ended = false;
    op->copy_back = cb->copy_backs;
    op->through = 0;
    CHECK_CUDA(cudaEventCreate(&op->start));
    if (cudaEventCreate(&op->stop) != cudaSuccess) {
      cudaEventDestroy(op->start);
      CHECK_CUDA(cudaGetLastError());
    }
    *index = cb->nops++;
    CHECK_CUDA(cudaEventRecord(op->start, stream));
  }
done:
  return rc;
}

int op_end(CudaBackend *cb, size_t index, cudaStream_t stream) {
  int rc = H5G_OK;
  CHECK_CUDA(cudaEventRecord(cb->ops[index].stop, stream));
  cb->ops[index].ended = true;
done:
  return rc;
}

/* Ops [0, count) are done (the host waited for a later one): their times go to the report. */
void settle_ops(h5g_backend *be, size_t count) {
  CudaBackend *cb = impl_of(be);
  for (size_t i = 0; i < count; i++) {
    float ms = 0;
    if (cb->ops[i].ended &&
        cudaEventElapsedTime(&ms, cb->ops[i].start, cb->ops[i].stop) == cudaSuccess) {
      double *sum = cb->ops[i].kind == OP_H2D   ? &be->h2d_seconds
                    : cb->ops[i].kind == OP_D2H ? &be->d2h_seconds
                                                : &be->kernel_seconds;
      *sum += 1e-3 * ms;
    }
    cudaEventDestroy(cb->ops[i].start);
    cudaEventDestroy(cb->ops[i].stop);
  }
  memmove(cb->ops, cb->ops + count, (cb->nops - count) * sizeof *cb->ops);
  cb->nops -= count;
}

int copy_async(CudaBackend *cb, void *dst, const void *src, size_t bytes, OpKind kind,
               size_t through) {
  int rc = H5G_OK;
  size_t op = 0;
  CHECK(op_begin(cb, kind, &op, cb->stream));
  cb->ops[op].through = through;
  CHECK_CUDA(host_copy_async(dst, src, bytes, kind == OP_H2D ? cudaMemcpyHostToDevice
                                                             : cudaMemcpyDeviceToHost, cb->stream));
  CHECK(op_end(cb, op, cb->stream));
done:
  return rc;
}

/* Starts copying n device keys (and their values, with host_vals) back to the host in pieces,
 * each piece's values right after its keys. */
int copy_back(CudaBackend *cb, void *host_keys, const void *keys, uint64_t *host_vals,
              const uint64_t *vals, size_t n, unsigned width) {
  int rc = H5G_OK;
  const size_t piece = COPY_BACK_PIECE_BYTES / (width + (host_vals ? VALUE_BYTES : 0));
  cb->copy_backs++;
  cb->copy_back_total = n;
  for (size_t begin = 0; begin < n; begin += piece) {
    const size_t count = n - begin < piece ? n - begin : piece;
    /* with values a piece is back once its values are: its keys' copy counts the pieces before */
    CHECK(copy_async(cb, (char *)host_keys + begin * width, (const char *)keys + begin * width,
                     count * width, OP_D2H, host_vals ? begin : begin + count));
    if (host_vals)
      CHECK(copy_async(cb, host_vals + begin, vals + begin, count * VALUE_BYTES, OP_D2H,
                       begin + count));
  }
done:
  return rc;
}

} // namespace detail
} // namespace h5g
