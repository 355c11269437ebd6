/* The CUDA backend's device-resident run (backend_cuda_internal.cuh, base/backend.h: load ...
 * wait_copied): keys loaded in pieces, sorted where they lie, exchanged from and received into
 * its buffers, merged, and copied back in pieces the host waits for one at a time. */
#include "kernels/backend_cuda_internal.cuh"

namespace h5g {
namespace detail {

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
  CHECK(copy_async(cb, (char *)cb->run.keys + first * width, piece, count * width, OP_H2D,
                   first + count));
done:
  return rc;
}

/* After the loads in stream order, before the sort transforms the keys in place. */
int cuda_checksum_loaded(h5g_backend *be, size_t first, size_t count) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  if (first + count > cb->run_n)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: checksum of keys [%zu, %zu) of a run of %zu",
             first, first + count, cb->run_n);
  CHECK(h5g_cuda_keys_checksum((const char *)cb->run.keys + first * cb->run_width, count,
                               cb->run_width, cb->loaded_sum, cb->stream));
done:
  return rc;
}

int cuda_loaded_checksum(h5g_backend *be, uint64_t *sum) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  unsigned long long device_sum = 0;
  CHECK_CUDA(cudaMemcpyAsync(&device_sum, cb->loaded_sum, sizeof device_sum,
                             cudaMemcpyDeviceToHost, cb->stream));
  CHECK_CUDA(cudaStreamSynchronize(cb->stream));
  *sum = device_sum;
done:
  return rc;
}

namespace {

/* Blocks until the first op of `kind` (D2H: of the last copy back) that leaves `count` keys in
 * place is done, and settles the ops up to it; none left: waited for before (settled). */
int wait_through(h5g_backend *be, OpKind kind, size_t count) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const double start = now_seconds();
  size_t i = 0;
  while (i < cb->nops && !(cb->ops[i].kind == kind && cb->ops[i].through >= count &&
                           (kind != OP_D2H || cb->ops[i].copy_back == cb->copy_backs)))
    i++;
  if (i == cb->nops) goto done;
  CHECK_CUDA(cudaEventSynchronize(cb->ops[i].stop));
  settle_ops(be, i + 1);
done:
  be->waited_seconds += now_seconds() - start;
  return rc;
}

} // namespace

int cuda_wait_loaded(h5g_backend *be, size_t count) {
  return count ? wait_through(be, OP_H2D, count) : H5G_OK;
}

int cuda_copy_out(h5g_backend *be, void *dst, uint64_t *dst_values, size_t first, size_t count) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  if (first + count > cb->copy_back_total || (dst_values && !cb->run_result_values))
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: copy out of keys [%zu, %zu)%s of a run of %zu%s",
             first, first + count, dst_values ? " with values" : "", cb->copy_back_total,
             cb->run_result_values ? "" : " without values");
  /* with values the piece is back once they are (copy_back's rule) */
  CHECK(copy_async(cb, dst, (const char *)cb->run_result + first * cb->run_width,
                   count * cb->run_width, OP_D2H, dst_values ? first : first + count));
  if (dst_values)
    CHECK(copy_async(cb, dst_values, cb->run_result_values + first, count * VALUE_BYTES, OP_D2H,
                     first + count));
done:
  return rc;
}

namespace {

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

} // namespace

namespace {

/* The loaded run sorted or merged where it lies: the keys in `in` (values in_vals), `alt` the
 * other side; the result lands in `in` and starts coming back to the host in pieces. With
 * `first_index` (a sort with values), the values are the source indices from there. */
struct RunStep {
  void *in, *alt;
  uint64_t *in_vals, *alt_vals;
  const uint64_t *run_offsets; /* a merge's runs, or NULL for a sort */
  size_t nruns;
  unsigned key_io;             /* H5G_CUDA_RAW_IN / RAW_OUT */
  const uint64_t *first_index;
};

int run_step(h5g_backend *be, void *keys, uint64_t *values, size_t n, const h5g_keyspec *ks,
             const RunStep &step) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  const CallBuffers &run = cb->run;
  const double start = now_seconds();
  size_t op = 0;
  cb->copy_back_total = 0;
  cb->run_result = step.in;
  cb->run_result_values = step.in_vals;
  if (n == 0) goto done;
  CHECK(check_run(cb, n, ks->width, values, step.nruns, step.run_offsets != NULL));
  CHECK(op_begin(cb, OP_KERNELS, &op, cb->stream));
  if (step.first_index && run.vals)
    CHECK(h5g_cuda_iota(run.vals, n, *step.first_index, cb->stream));
  CHECK(sort_or_merge(cb->stream, run.temp, run.temp_bytes, step.in, step.alt, step.in_vals,
                      step.alt_vals, n, ks->width, step.run_offsets,
                      step.run_offsets ? step.nruns : 0, ks, step.key_io));
  CHECK(op_end(cb, op, cb->stream));
  if (keys) {
    CHECK(copy_back(cb, keys, step.in, values, step.in_vals, n, ks->width));
  } else { /* copy_out brings it back, piece by piece */
    cb->copy_backs++;
    cb->copy_back_total = n;
  }
done:
  be->waited_seconds += now_seconds() - start; /* the sort waits once for its pass plan */
  return rc;
}

} // namespace

int cuda_sort_loaded(h5g_backend *be, void *keys, uint64_t *values, uint64_t first_index, size_t n,
                     const h5g_keyspec *ks, int final) {
  const CallBuffers &run = impl_of(be)->run;
  /* the raw keys loaded leave the sort as ordered bits, or as the raw output when final */
  RunStep step = {run.keys, run.alt, run.vals, run.alt_vals, NULL, 1,
                  H5G_CUDA_RAW_IN | (final ? H5G_CUDA_RAW_OUT : 0), &first_index};
  return run_step(be, keys, values, n, ks, step);
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
  const CallBuffers &run = impl_of(be)->run;
  /* received into the spare buffers; the kept run, sent away, is now the ping-pong buffer; runs
   * of ordered bits, merged into the raw output */
  RunStep step = {run.alt, run.keys, run.alt_vals, run.vals, run_offsets, nruns, H5G_CUDA_RAW_OUT,
                  NULL};
  return run_step(be, keys, values, n, ks, step);
}

int cuda_wait_copied(h5g_backend *be, size_t count) {
  int rc = H5G_OK;
  CudaBackend *cb = impl_of(be);
  if (count > cb->copy_back_total)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: waiting for %zu keys, %zu are being copied back",
             count, cb->copy_back_total);
  CHECK(count ? wait_through(be, OP_D2H, count) : H5G_OK);
done:
  return rc;
}

} // namespace detail
} // namespace h5g
