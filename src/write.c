/* Phase "write": the sorted share into a temporary file beside OUTPUT, renamed over OUTPUT only
 * after every rank succeeded (README "Semantics": output is atomic). */
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "io/files.h"
#include "src/interrupt.h"
#include "src/run.h"

/* What the temporary file will hold at most: the dataset, the in-place copy, and headroom for
 * HDF5's metadata and attributes. */
static unsigned long long output_bytes(const h5g_run *r) {
  const h5g_verdict *v = &r->verdict;
  struct stat input;
  unsigned long long need = v->info.n * r->plan.ks.width + v->carried_bytes + (1ull << 20);
  if (r->opt->index_out) need += v->info.n * sizeof(uint64_t);
  if (v->in_place && stat(r->opt->input, &input) == 0) need += (unsigned long long)input.st_size;
  return need;
}

/* Rank 0 checks that the output fits, then (in place) copies the input beside OUTPUT. */
int h5g_write_prepare(h5g_run *r) {
  int rc = H5G_OK;
  r->tmp_created = 1;
  if (r->rank != 0) goto done;
  h5g_interrupt_temp(r->verdict.tmp_path);
  CHECK(h5g_files_check_space(r->opt->output, output_bytes(r)));
  if (r->verdict.in_place) CHECK(h5g_files_copy(r->opt->input, r->verdict.tmp_path));
done:
  return rc;
}

int h5g_write_open(h5g_run *r) {
  if (r->verdict.in_place) return h5g_io_open_file(r->comm, r->verdict.tmp_path, 1, &r->out_file);
  return h5g_io_create_file(r->comm, r->verdict.tmp_path, &r->out_file);
}

/* Rank 0 reserves the output's disk space before any data is written. */
int h5g_write_reserve(h5g_run *r) {
  return r->rank == 0 ? h5g_files_reserve(r->verdict.tmp_path, output_bytes(r)) : H5G_OK;
}

/* Before each piece is written: the GPU has copied it back. */
static int piece_copied_back(void *ctx, uint64_t first, uint64_t count, int moved) {
  h5g_run *r = ctx;
  return moved ? H5G_OK : r->be->wait_copied(r->be, first + count);
}

static int wait_all_copied(h5g_run *r) { return r->be->wait_copied(r->be, r->plan.n); }

/* Keys (unless whole records of a compound move), then the source index when asked for. On the
 * resident path the output is still coming back from the GPU: each piece is written once it is
 * here, and the values are all here before anything reads them. Steps of their own, so that the
 * collective closes at the end meet on every rank. */
int h5g_write_keys(h5g_run *r) {
  int rc = H5G_OK;
  const h5g_plan *plan = &r->plan;
  const h5g_data *d = &r->data;
  int from_device = plan->path == H5G_PATH_DEVICE_RESIDENT;
  h5g_dset *keys = NULL, *index = NULL;
  if (!r->opt->key_field) {
    STEP(r, H5G_PHASE_WRITE, h5g_io_create_like(r->out_file, r->opt->output_dataset, r->keys_in, &keys));
    h5g_io_allow_direct(keys);
    h5g_fault_point(r, "write-data");
    STEP(r, H5G_PHASE_WRITE, h5g_io_write_each(keys, plan->offset, plan->n, d->sorted,
                                               from_device ? piece_copied_back : NULL, r));
  }
  if (from_device) STEP(r, H5G_PHASE_WRITE, wait_all_copied(r));
  if (r->opt->index_out) {
    STEP(r, H5G_PHASE_WRITE, h5g_io_create_index(r->out_file, r->opt->index_out, r->verdict.info.n, &index));
    h5g_io_allow_direct(index);
    STEP(r, H5G_PHASE_WRITE, h5g_io_write(index, plan->offset, plan->n, d->sorted_values));
  }
done:
  if (h5g_io_close(index) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  if (h5g_io_close(keys) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  return rc;
}

int h5g_write_close(h5g_run *r) {
  int rc = h5g_io_close_file(r->out_file);
  r->out_file = NULL;
  return rc;
}

/* Rank 0, before the commit: HDF5 without SWMR cannot read a file that another process changes,
 * so a run whose input changed (size or modification time) since it was validated fails rather
 * than commit what it read. */
static int check_input_unchanged(const h5g_run *r) {
  int rc = H5G_OK;
  struct stat now;
  h5g_verdict then = r->verdict;
  if (stat(r->opt->input, &now) != 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "input changed while it was sorted: it is gone (%s)", r->opt->input);
  h5g_input_stamp(&now, &then);
  if (then.input_size != r->verdict.input_size || then.input_mtime_sec != r->verdict.input_mtime_sec ||
      then.input_mtime_nsec != r->verdict.input_mtime_nsec)
    H5G_FAIL(H5G_ERR_RUNTIME, "input changed while it was sorted (%s); no output was written",
             r->opt->input);
done:
  return rc;
}

int h5g_write_commit(h5g_run *r) {
  int rc = H5G_OK;
  if (r->rank == 0) {
    CHECK(check_input_unchanged(r));
    CHECK(h5g_files_commit(r->verdict.tmp_path, r->opt->output, r->verdict.in_place));
    h5g_interrupt_committed();
  }
  r->tmp_created = 0;
done:
  return rc;
}
