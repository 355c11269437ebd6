/* The CUDA backend (base/backend.h): keys (and for records their uint64 values) travel host ->
 * device on a stream, are sorted or merged by this project's kernels, and travel back; one path
 * for both, the values an optional part of each call (NULL: keys only, whose kernels hold no value
 * code). On the resident path the values are the keys' source indices, made on the device.
 * Device memory is one pool, allocated on first need, grown only when a call needs more, and never
 * larger than mem_budget. Merging P runs uses merge path up to a measured number of rounds, a
 * re-sort beyond it (tuning.cuh). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "kernels/tuning.cuh"
#include "base/backend.h"

namespace {

/* Merge scratch is reserved for up to this many runs when capacity() is computed. */
constexpr size_t RESERVED_MERGE_RUNS = 1 << 16;
/* The resident path copies results back in pieces of this size, so the host can write the first
 * piece while the rest is still on its way. */
constexpr size_t COPY_BACK_PIECE_BYTES = (size_t)256 << 20;

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
  size_t copied_back; /* OP_D2H: keys (and values) of that copy back on the host once done */
};

struct CudaBackend {
  int device;
  cudaStream_t stream;
  cudaStream_t side_stream; /* a streamed merge's second chunk in flight (made on first need) */
  void *pool;
  size_t pool_bytes;
  /* the resident run (base/backend.h: load ... wait_copied) */
  CallBuffers run;
  size_t run_n;
  unsigned run_width;
  bool run_values;        /* the run has a value per key (run.vals, run.alt_vals) */
  size_t copy_backs;      /* copies back started so far */
  size_t copy_back_total; /* keys (and values) the last one moves in all */
  StreamOp *ops;          /* timed stream work not yet waited for, in stream order */
  size_t nops, ops_capacity;
};

CudaBackend *impl_of(h5g_backend *be) { return (CudaBackend *)be->impl; }

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
    CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, cb->stream));
    CHECK_CUDA(cudaStreamSynchronize(cb->stream));
    const double seconds = now_seconds() - start;
    (kind == cudaMemcpyHostToDevice ? be->h2d_seconds : be->d2h_seconds) += seconds;
    be->waited_seconds += seconds; /* nothing overlaps it */
  }
done:
  return rc;
}

constexpr unsigned VALUE_BYTES = sizeof(uint64_t);
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

size_t cuda_capacity(h5g_backend *be, unsigned width, int with_values) {
  return keys_that_fit(be, width, with_values != 0, 1);
}

/* Two chunks of a streamed merge are on the device at once. */
size_t cuda_merge_chunk(h5g_backend *be, unsigned width, int with_values) {
  return keys_that_fit(be, width, with_values != 0, 2);
}

/* Makes the pool at least `bytes` large, within the budget. */
int reserve(h5g_backend *be, size_t bytes) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  if (bytes <= cb->pool_bytes) goto done;
  if (bytes > be->mem_budget)
    H5G_FAIL(H5G_ERR_RUNTIME, "a GPU call needs %zu bytes of device memory, over the budget of %llu",
             bytes, (unsigned long long)be->mem_budget);
  CHECK_CUDA(cudaStreamSynchronize(cb->stream));
  if (cb->side_stream) CHECK_CUDA(cudaStreamSynchronize(cb->side_stream));
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

/* Host memory made resident beforehand (base/host_memory.h) registers 9x faster than
 * cudaMallocHost allocates (4 GiB: 0.15 vs 1.40 s, bench/host_buffers.cu). Called from the
 * pipeline's buffer thread: the device is per thread. */
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
  if (impl_of(be)->side_stream) cudaStreamSynchronize(impl_of(be)->side_stream);
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

/* Forward or inverse key transform on the GPU, in chunks that fit the budget. Chosen over the
 * host loop of base/keys.c because the transform is memory-bound: on the host it runs at one
 * core's bandwidth (a few GB/s), while upload + kernel + download moves the keys at the
 * pinned-copy rate (~55 GB/s each way, shared/gpu/README.md). */
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

int check_fits(h5g_backend *be, size_t n, unsigned width, bool with_values) {
  int rc = H5G_OK;
  const size_t cap = cuda_capacity(be, width, with_values);
  if (n > cap)
    H5G_FAIL(H5G_ERR_USAGE, "%zu keys%s exceed the CUDA backend capacity of %zu", n,
             with_values ? " with values" : "", cap);
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
                  const uint64_t *run_offsets, size_t nruns, const h5g_keyspec *ks = NULL,
                  unsigned raw = 0) {
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

int cuda_sort(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width) {
  return host_call(be, keys, values, n, width, NULL, 0);
}

int cuda_merge(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width,
               const uint64_t *run_offsets, size_t nruns) {
  return host_call(be, keys, values, n, width, run_offsets, nruns);
}

/* The resident path: stream work is timed by events and only waited for where the host needs
 * its result, so the copies and kernels run while the host reads or writes the file. */

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
    op->copied_back = 0;
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
    if (cb->ops[i].ended && cudaEventElapsedTime(&ms, cb->ops[i].start, cb->ops[i].stop) == cudaSuccess) {
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
               size_t copied_back) {
  int rc = H5G_OK;
  size_t op = 0;
  CHECK(op_begin(cb, kind, &op, cb->stream));
  cb->ops[op].copied_back = copied_back;
  CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, kind == OP_H2D ? cudaMemcpyHostToDevice
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
    CHECK_CUDA(cudaMemcpyAsync((char *)b.keys + n * width, (const char *)keys + from[j] * width,
                               count * width, cudaMemcpyHostToDevice, stream));
    if (values)
      CHECK_CUDA(cudaMemcpyAsync(b.vals + n, values + from[j], count * VALUE_BYTES,
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
  CHECK_CUDA(cudaMemcpyAsync(out, b.keys, n * width, cudaMemcpyDeviceToHost, stream));
  if (values)
    CHECK_CUDA(cudaMemcpyAsync(out_values, b.vals, n * VALUE_BYTES, cudaMemcpyDeviceToHost,
                               stream));
  CHECK(op_end(cb, op, stream));
done:
  return rc;
}

/* Chunks alternate between two streams and two sets of buffers: chunk c + 1's pieces go up
 * while chunk c is merged and comes back (the copy engines of the two directions work at once).
 * H200 machine, 4 GiB of u4 at --device-memory 512M: the merge phase took 0.29 s with a pack on
 * the host and one synchronous call per chunk, 0.115 s so (bench/RESULTS.md). */
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
  if (!cb->side_stream)
    CHECK_CUDA(cudaStreamCreateWithFlags(&cb->side_stream, cudaStreamNonBlocking));
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
  if (cb->side_stream && drained == cudaSuccess) drained = cudaStreamSynchronize(cb->side_stream);
  else if (cb->side_stream) cudaStreamSynchronize(cb->side_stream);
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

int cuda_load(h5g_backend *be, const void *piece, size_t first, size_t count, size_t n,
              unsigned width, int with_values) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  if (first == 0) { /* a new run: its buffers, with merge scratch for the runs it may receive */
    CHECK(check_fits(be, n, width, with_values != 0));
    CHECK(prepare(be, n, width, with_values != 0, RESERVED_MERGE_RUNS, &cb->run));
    cb->run_n = n;
    cb->run_width = width;
    cb->run_values = with_values != 0;
  }
  if (cb->run_n != n || cb->run_width != width || cb->run_values != (with_values != 0) ||
      first + count > n)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: load of keys [%zu, %zu) outside the run of %zu",
             first, first + count, n);
  CHECK(copy_async(cb, (char *)cb->run.keys + first * width, piece, count * width, OP_H2D, 0));
done:
  return rc;
}

/* The run's sort or merge and the copy back both refuse what the loaded run cannot give. A merge
 * of received runs may hold fewer keys than were loaded (--top keeps only the first K). */
int check_run(const CudaBackend *cb, size_t n, unsigned width, const uint64_t *values,
              size_t nruns, bool fewer) {
  int rc = H5G_OK;
  if ((fewer ? n > cb->run_n : n != cb->run_n) || cb->run_width != width ||
      (values && !cb->run_values) ||
      nruns > RESERVED_MERGE_RUNS)
    H5G_FAIL(H5G_ERR_RUNTIME,
             "internal error: %zu %u-byte keys%s in %zu runs on the GPU, the loaded run has %zu "
             "%u-byte keys%s", n, width, values ? " with values" : "", nruns, cb->run_n,
             cb->run_width, cb->run_values ? " with values" : "");
done:
  return rc;
}

int cuda_sort_loaded(h5g_backend *be, void *keys, uint64_t *values, uint64_t first_index, size_t n,
                     const h5g_keyspec *ks, int final) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const CallBuffers &run = cb->run;
  const unsigned width = ks->width;
  const double start = now_seconds();
  size_t op = 0;
  cb->copy_back_total = 0;
  if (n == 0) goto done;
  CHECK(check_run(cb, n, width, values, 1, false));
  CHECK(op_begin(cb, OP_KERNELS, &op, cb->stream));
  if (run.vals) CHECK(h5g_cuda_iota(run.vals, n, first_index, cb->stream));
  /* the raw keys loaded leave the sort as ordered bits, or as the raw output when final */
  CHECK(sort_or_merge(cb->stream, run.temp, run.temp_bytes, run.keys, run.alt, run.vals,
                      run.alt_vals, n, width, NULL, 0, ks,
                      H5G_CUDA_RAW_IN | (final ? H5G_CUDA_RAW_OUT : 0)));
  CHECK(op_end(cb, op, cb->stream));
  CHECK(copy_back(cb, keys, run.keys, values, run.vals, n, width));
done:
  be->waited_seconds += now_seconds() - start; /* the sort waits once for its pass plan */
  return rc;
}

int cuda_run_buffers(h5g_backend *be, h5g_device_run *run) {
  const CudaBackend *cb = impl_of(be);
  run->keys = cb->run.keys;
  run->spare = cb->run.alt;
  run->values = cb->run.vals; /* NULL in a run without values (prepare) */
  run->spare_values = cb->run.alt_vals;
  return H5G_OK;
}

int cuda_merge_received(h5g_backend *be, void *keys, uint64_t *values, size_t n,
                        const h5g_keyspec *ks, const uint64_t *run_offsets, size_t nruns) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const CallBuffers &run = cb->run;
  const unsigned width = ks->width;
  const double start = now_seconds();
  size_t op = 0;
  cb->copy_back_total = 0;
  if (n == 0) goto done;
  CHECK(check_run(cb, n, width, values, nruns, true));
  CHECK(op_begin(cb, OP_KERNELS, &op, cb->stream));
  /* received into the spare buffers; the kept run, sent away, is now the ping-pong buffer; runs
   * of ordered bits, merged into the raw output */
  CHECK(sort_or_merge(cb->stream, run.temp, run.temp_bytes, run.alt, run.keys, run.alt_vals,
                      run.vals, n, width, run_offsets, nruns, ks, H5G_CUDA_RAW_OUT));
  CHECK(op_end(cb, op, cb->stream));
  CHECK(copy_back(cb, keys, run.alt, values, run.alt_vals, n, width));
done:
  be->waited_seconds += now_seconds() - start;
  return rc;
}

int cuda_wait_copied(h5g_backend *be, size_t count) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const double start = now_seconds();
  size_t i = 0;
  if (count > cb->copy_back_total)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: waiting for %zu keys, %zu are being copied back",
             count, cb->copy_back_total);
  if (count == 0) goto done;
  while (i < cb->nops && !(cb->ops[i].kind == OP_D2H && cb->ops[i].copy_back == cb->copy_backs &&
                           cb->ops[i].copied_back >= count))
    i++;
  if (i == cb->nops) goto done; /* waited for before (its op is settled) */
  CHECK_CUDA(cudaEventSynchronize(cb->ops[i].stop));
  settle_ops(be, i + 1);
done:
  be->waited_seconds += now_seconds() - start;
  return rc;
}

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
    if (cb->stream) cudaStreamDestroy(cb->stream);
    if (cb->side_stream) cudaStreamDestroy(cb->side_stream);
    free(cb);
  }
  free(be);
}

/* The device whose context this process made (-1: none), for h5g_cuda_release_context. Written
 * by the warm-up thread before it is joined, or by the main thread. */
int g_context_device = -1;

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
  g_context_device = device;
done:
  return rc;
}

} // namespace

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
  *seconds = 0;
  if (!w) goto done;
  pthread_join(w->thread, NULL);
  *seconds = w->seconds;
  if (needed && w->rc != H5G_OK) H5G_FAIL(w->rc, "%s", w->error);
done:
  free(w);
  return rc;
}

extern "C" double h5g_cuda_release_context(void) {
  if (g_context_device < 0) return 0;
  const double start = now_seconds();
  if (cudaSetDevice(g_context_device) == cudaSuccess) cudaDeviceReset();
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
  CHECK_CUDA(cudaStreamCreateWithFlags(&cb->stream, cudaStreamNonBlocking));
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
  be->destroy = cuda_destroy;
  *out = be;
  be = NULL;
done:
  cuda_destroy(be);
  return rc;
}
