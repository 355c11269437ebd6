/* The CUDA backend (base/backend.h): keys (and for records their uint64 values) travel host ->
 * device on a stream, are sorted or merged by this project's kernels, and travel back; one path
 * for both, the values an optional part of each call (NULL: keys only, whose kernels hold no value
 * code). On the resident path the values are the keys' source indices, made on the device.
 * Device memory is one pool, allocated on first need, grown only when a call needs more, and never
 * larger than mem_budget. Merging P runs uses merge path up to a measured number of rounds, a
 * re-sort beyond it (tuning.cuh).
 *
 * Private to the backend's files (not for callers: they use base/backend.h and kernels/kernels.h):
 *   backend_pool.cu          the device memory pool: sizing, capacity, reserve; pinned host memory
 *   backend_ops.cu           timed stream work: events per op, timed and asynchronous copies
 *   backend_host_calls.cu    sort, merge and key transform of host keys (up, on the GPU, back)
 *   backend_stream_merge.cu  the out-of-core merge, chunks streamed on two streams
 *   backend_resident.cu      the device-resident run: load, sort, merge received runs, copy back
 *   backend_rows.cu          rows put in the order of the resident run's source indices
 *   backend_context.cu       the CUDA context (warm-up thread), device
 *                            queries, create/destroy */
#ifndef H5G_BACKEND_CUDA_INTERNAL_CUH
#define H5G_BACKEND_CUDA_INTERNAL_CUH

#include <stddef.h>
#include <stdint.h>

#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "base/backend.h"

namespace h5g {
namespace detail {

/* Merge scratch is reserved for up to this many runs when capacity() is computed. */
inline constexpr size_t RESERVED_MERGE_RUNS = 1 << 16;
inline constexpr unsigned VALUE_BYTES = sizeof(uint64_t);

/* Where the keys, the values (NULL in a keys-only call), their ping-pong buffers and the scratch
 * of one call lie in the pool. */
struct CallBuffers {
  void *keys, *alt, *temp;
  uint64_t *vals, *alt_vals;
  size_t temp_bytes;
};

/* One piece of stream work timed by a pair of events: a copy or the kernels of one call. */
enum OpKind { OP_H2D, OP_D2H, OP_KERNELS };
struct StreamOp {
  cudaEvent_t start, stop;
  OpKind kind;
  bool ended;         /* its stop event was recorded (not so when the work failed to start) */
  size_t copy_back;   /* OP_D2H: which copy back it is part of (CudaBackend::copy_backs) */
  size_t through;     /* once done, keys [0, through) are in place: OP_D2H, of that copy back on
                       * the host (and values); OP_H2D, of the run on the device */
};

struct CudaBackend {
  int device;
  cudaStream_t stream;
  cudaStream_t side_stream; /* a streamed merge's second chunk in flight */
  void *pool;
  size_t pool_bytes;
  /* the resident run (base/backend.h: load ... wait_copied) */
  CallBuffers run;
  size_t run_n;
  unsigned run_width;
  bool run_values;        /* the run has a value per key (run.vals, run.alt_vals) */
  const void *run_result; /* where the last sort or merge of the run left it (copy_out) */
  const uint64_t *run_result_values; /* and its values (NULL: none) */
  size_t copy_backs;      /* copies back started so far */
  size_t copy_back_total; /* keys (and values) the last one moves in all */
  StreamOp *ops;          /* timed stream work not yet waited for, in stream order */
  size_t nops, ops_capacity;
  unsigned long long *loaded_sum; /* device word: the checksum of the keys checksum_loaded took */
  void *rows;        /* gather_rows' tables, beside the pool (backend_rows.cu) */
  size_t rows_bytes;
};

inline CudaBackend *impl_of(h5g_backend *be) { return (CudaBackend *)be->impl; }

/* backend_pool.cu */
size_t cuda_capacity(h5g_backend *be, unsigned width, int with_values);
size_t cuda_merge_chunk(h5g_backend *be, unsigned width, int with_values);
int cuda_pin(h5g_backend *be, void *p, size_t bytes);
void cuda_unpin(h5g_backend *be, void *p);
int prepare_slots(h5g_backend *be, size_t n, unsigned width, bool with_values, size_t nruns,
                  CallBuffers *b, size_t slots);
int prepare(h5g_backend *be, size_t n, unsigned width, bool with_values, size_t nruns,
            CallBuffers *b);
int check_fits(h5g_backend *be, size_t n, unsigned width, bool with_values);

/* backend_ops.cu */
double now_seconds();
int timed_copy(h5g_backend *be, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
int op_begin(CudaBackend *cb, OpKind kind, size_t *index, cudaStream_t stream);
int op_end(CudaBackend *cb, size_t index, cudaStream_t stream);
void settle_ops(h5g_backend *be, size_t count);
int copy_async(CudaBackend *cb, void *dst, const void *src, size_t bytes, OpKind kind,
               size_t through);
int copy_back(CudaBackend *cb, void *host_keys, const void *keys, uint64_t *host_vals,
              const uint64_t *vals, size_t n, unsigned width);

/* backend_host_calls.cu */
int sort_or_merge(cudaStream_t stream, void *temp, size_t temp_bytes, void *keys, void *alt,
                  uint64_t *vals, uint64_t *alt_vals, size_t n, unsigned width,
                  const uint64_t *run_offsets, size_t nruns, const h5g_keyspec *ks = NULL,
                  unsigned raw = 0);
int cuda_transform(h5g_backend *be, void *keys, size_t n, const h5g_keyspec *ks, int inverse);
int cuda_sort(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width);
int cuda_merge(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width,
               const uint64_t *run_offsets, size_t nruns);

/* backend_stream_merge.cu */
int cuda_merge_stream(h5g_backend *be, const void *keys, const uint64_t *values, unsigned width,
                      const uint64_t *cuts, size_t nruns, size_t nchunks, void *out,
                      uint64_t *out_values);

/* backend_resident.cu */
int cuda_load(h5g_backend *be, const void *piece, size_t first, size_t count, size_t n,
              unsigned width, int with_values);
int cuda_sort_loaded(h5g_backend *be, void *keys, uint64_t *values, uint64_t first_index, size_t n,
                     const h5g_keyspec *ks, int final);
int cuda_run_buffers(h5g_backend *be, h5g_device_run *run);
int cuda_merge_received(h5g_backend *be, void *keys, uint64_t *values, size_t n,
                        const h5g_keyspec *ks, const uint64_t *run_offsets, size_t nruns);
int cuda_wait_copied(h5g_backend *be, size_t count);
int cuda_wait_loaded(h5g_backend *be, size_t count);
int cuda_copy_out(h5g_backend *be, void *dst, uint64_t *dst_values, size_t first, size_t count);
int cuda_checksum_loaded(h5g_backend *be, size_t first, size_t count);
int cuda_loaded_checksum(h5g_backend *be, uint64_t *sum);

/* backend_rows.cu */
int cuda_gather_fits(h5g_backend *be, size_t n, size_t row_bytes);
int cuda_gather_rows(h5g_backend *be, const void *rows, size_t n, size_t row_bytes,
                     uint64_t first_index, void *out);

} // namespace detail
} // namespace h5g

#endif
