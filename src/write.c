/* Phase "write": the sorted share into a temporary file beside OUTPUT, renamed over OUTPUT only
 * after every rank succeeded (docs/semantics.md, "Atomic output"). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/compose.h"
#include "base/error.h"
#include "base/host_memory.h"
#include "io/h5io.h"
#include "mpi/agree.h"
#include "src/interrupt.h"
#include "src/write.h"

#include "src/merge_runs.h"
#include "src/validate.h"

/* The temporary file starts as a copy of the input (in place, --whole-file), whose datasets
 * are then replaced; else it starts empty. */
static int copies_input(const h5g_run *r, const h5g_verdict *v) {
  return v->in_place || r->opt->whole_file;
}

/* What the temporary file will hold at most, as far as it is known before writing: the unfiltered
 * datasets, the copy of the input, and headroom for HDF5's metadata and attributes. A filtered
 * dataset counts nothing: its size is known only once its chunks are compressed (a sorted
 * dataset often shrinks 10-600 times), and counting its raw size would refuse runs that fit or,
 * reserved, hold disk the output never uses until the commit gives it back. A disk that fills
 * while filtered chunks are written fails the write (exit 1, no output), as any I/O error does. */
unsigned long long h5g_write_output_bytes(const h5g_run *r, const h5g_verdict *v,
                                          const h5g_plan *plan, const h5g_extent *e) {
  struct stat input;
  uint64_t rows = e->out_total; /* fewer than N with --top and --unique */
  uint64_t key_bytes = v->composed ? 0 : plan->ks.width; /* several: their own widths */
  for (int i = 0; v->composed && i < v->layout.count; i++) key_bytes += v->layout.key[i].width;
  /* the carried datasets' share of the input file (its size bounds theirs) */
  double carried = v->info.n ? (double)v->carried_bytes * ((double)rows / (double)v->info.n) : 0;
  unsigned long long need = (unsigned long long)carried + (1ull << 20);
  if (!v->keys_filtered) need += rows * key_bytes;
  if (r->opt->index_out && !v->index_filtered) need += rows * sizeof(uint64_t);
  if (r->opt->counts) need += rows * sizeof(uint64_t);
  if (copies_input(r, v) && stat(r->opt->input, &input) == 0)
    need += (unsigned long long)input.st_size;
  return need;
}

/* Rank 0 claims the temporary's name: the lock that tells other runs' sweeps that the run is
 * live, taken just before the temporary is made (a run has neither until here). Until every rank
 * knows that it holds (the step's agreement), nothing of the name is the run's to remove: a
 * refused lock is another live run's name. */
static int claim_temp(h5g_run *r, const h5g_verdict *v) {
  h5g_fault_point(r, "write-create");
  return r->rank == 0 ? h5g_files_hold_temp_lock(v->tmp_path) : H5G_OK;
}

/* Rank 0 checks that the output fits, then (in place, --whole-file) copies the input beside
 * OUTPUT. */
static int write_prepare(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                         const h5g_extent *e) {
  int rc = H5G_OK;
  r->tmp_created = 1;
  h5g_interrupt_temp(v->tmp_path, r->size);
  if (r->rank != 0) goto done;
  CHECK(h5g_files_check_space(r->opt->output, h5g_write_output_bytes(r, v, plan, e)));
  if (copies_input(r, v)) CHECK(h5g_files_copy(r->opt->input, v->tmp_path));
done:
  return rc;
}

static int write_open(h5g_run *r, const h5g_verdict *v) {
  if (copies_input(r, v)) return h5g_io_open_file(r->comm, v->tmp_path, 1, &r->out_file);
  return h5g_io_create_file(r->comm, v->tmp_path, &r->out_file);
}

/* Rank 0 reserves the output's disk space before any data is written. */
static int write_reserve(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                         const h5g_extent *e) {
  if (r->rank != 0) return H5G_OK;
  return h5g_files_reserve(v->tmp_path, h5g_write_output_bytes(r, v, plan, e));
}

int h5g_write_start(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                    const h5g_extent *e) {
  int rc = H5G_OK;
  STEP(r, H5G_PHASE_WRITE, claim_temp(r, v));
  STEP(r, H5G_PHASE_WRITE, write_prepare(r, v, plan, e));
  STEP(r, H5G_PHASE_WRITE, write_open(r, v));
  STEP(r, H5G_PHASE_WRITE, write_reserve(r, v, plan, e));
done:
  return rc;
}

/* Collective: the dataset of n keys at `path` in OUTPUT, made like `like`, which the rank's
 * threads may write directly. */
static int make_key_dataset(h5g_run *r, const h5g_extent *e, const char *path,
                            const h5g_dset *like, h5g_dset **out) {
  int rc = H5G_OK;
  STEP(r, H5G_PHASE_WRITE, h5g_io_create_like(r->out_file, path, like, e->out_total, &r->opt->storage, out));
  h5g_io_allow_direct(*out);
done:
  return rc;
}

/* Where the keys written are: in host memory, or coming back from the GPU into it (plan.streamed:
 * write_streamed). */
typedef enum { KEYS_ON_HOST, KEYS_COMING_BACK } keys_source;

typedef struct {
  h5g_run *r;
  const h5g_extent *e;
  const h5g_dset *out;
  char *keys;      /* what is written: n keys of `width` bytes */
  unsigned width;
  int from_device; /* the piece is still coming back from the GPU */
  int file_form;   /* the output takes its keys in the file's form (h5g_io_file_form) */
} keys_writer;

/* Starts bringing back the slot's worth of keys from `first` on into its slot (none past n), and
 * with `values` (a ring of as many slots) their values. */
static int copy_out_slot(h5g_run *r, const h5g_plan *plan, char *ring, uint64_t *values,
                         uint64_t first, uint64_t n) {
  uint64_t count = h5g_slot_keys(plan, first, n);
  uint64_t *slot_values = values ? values + first % h5g_ring_elems(plan) : NULL;
  return count ? r->be->copy_out(r->be, h5g_ring_slot(plan, ring, first), slot_values, first,
                                 count)
               : H5G_OK;
}

/* plan.streamed: the sorted run comes back slot by slot into the ring (with `index`, its source
 * indices into the values' ring), each slot written once it is back and then refilled with the
 * keys H5G_RING_SLOTS slots ahead. Each slot is one write of its own per dataset (a mapping or
 * an HDF5 write of its rows). */
static int write_streamed(h5g_run *r, const h5g_plan *plan, const h5g_extent *e, h5g_dset *out,
                          const h5g_data *d, h5g_dset *index) {
  int rc = H5G_OK;
  uint64_t slot = plan->slot_elems, n = e->out_n;
  unsigned w = plan->ks.width;
  char *ring = d->keys;
  uint64_t *values = index ? d->values : NULL;
  if (values) CHECK(h5g_buffers_wait_pinned(d->set, H5G_BUFFER_VALUES, h5g_ring_elems(plan)));
  for (uint64_t first = 0; first < h5g_ring_elems(plan); first += slot)
    CHECK(copy_out_slot(r, plan, ring, values, first, n));
  for (uint64_t first = 0; first < n; first += slot) {
    uint64_t count = h5g_slot_keys(plan, first, n);
    char *keys = h5g_ring_slot(plan, ring, first);
    CHECK(r->be->wait_copied(r->be, first + count));
    if (h5g_io_file_form(out)) CHECK(h5g_io_convert_rows(out, keys, count, 1));
    CHECK(h5g_io_write_each(out, e->out_offset + first, count, keys, NULL, NULL));
    if (index)
      CHECK(h5g_io_write_each(index, e->out_offset + first, count,
                              values + first % h5g_ring_elems(plan), NULL, NULL));
    h5g_progress_bytes(&r->progress, (first + count) * w, n * w);
    uint64_t ahead = first + h5g_ring_elems(plan);
    CHECK(copy_out_slot(r, plan, ring, values, ahead, n));
  }
done:
  return rc;
}

/* Before each piece is written: the GPU has copied it back, and it is in the file's form; after:
 * back in the host's, so the buffer holds what it held. */
static int keys_piece(void *ctx, uint64_t first, uint64_t count, int moved) {
  int rc = H5G_OK;
  keys_writer *w = ctx;
  unsigned width = w->width;
  if (!moved && w->from_device) CHECK(w->r->be->wait_copied(w->r->be, first + count));
  if (w->file_form) CHECK(h5g_io_convert_rows(w->out, w->keys + first * width, count, !moved));
  if (moved) h5g_progress_bytes(&w->r->progress, (first + count) * width, w->e->out_n * width);
done:
  return rc;
}

/* Collective: n keys at `path` in OUTPUT, made like `like`. */
static int write_key_dataset(h5g_run *r, const h5g_extent *e, const char *path,
                             const h5g_dset *like, void *keys, unsigned width,
                             keys_source source) {
  int rc = H5G_OK;
  h5g_dset *out = NULL;
  CHECK(make_key_dataset(r, e, path, like, &out));
  h5g_fault_point(r, "write-data");
  keys_writer w = {r, e, out, keys, width, source == KEYS_COMING_BACK, h5g_io_file_form(out)};
  STEP(r, H5G_PHASE_WRITE, h5g_io_write_each(out, e->out_offset, e->out_n, keys,
                                             keys_piece, &w));
done:
  if (h5g_io_close(out) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  return rc;
}

/* Collective, plan.streamed: the keys, and into `index` their source indices, as they come back
 * from the GPU. */
static int write_streamed_keys(h5g_run *r, const h5g_plan *plan, const h5g_extent *e,
                               const h5g_data *d, h5g_dset *index) {
  int rc = H5G_OK;
  h5g_dset *out = NULL;
  CHECK(make_key_dataset(r, e, r->opt->output_dataset, r->keys_in[0], &out));
  h5g_fault_point(r, "write-data");
  STEP(r, H5G_PHASE_WRITE, write_streamed(r, plan, e, out, d, index));
done:
  if (h5g_io_close(out) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  return rc;
}

/* Collective, several -d: each integer key of one composed word taken out of the sorted composed
 * keys and written at its path (the others are fetched by source index with the carried
 * datasets: src/carry.c). */
static int write_composed_keys(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                               const h5g_extent *e, const h5g_data *d) {
  int rc = H5G_OK;
  const h5g_key_layout *layout = &v->layout;
  void *part = NULL;
  size_t bytes = e->out_n * sizeof(uint64_t);
  part = h5g_bulk_alloc(bytes); /* spills with the buffers (base/host_memory.h) */
  CHECK(h5g_agree_alloc(r->comm, part != NULL, bytes));
  for (int i = 0; i < layout->count; i++) {
    if (h5g_keyset_fetched(layout, i)) continue;
    h5g_key_source k = h5g_options_key(r->opt, i);
    h5g_keyspec ks = {layout->key[i].cls, layout->key[i].width, k.descending, k.na};
    h5g_compose_take(d->sorted, plan->ks.width, part, e->out_n, &ks, layout->shift[i],
                     plan->io_threads);
    CHECK(write_key_dataset(r, e, h5g_options_key_output(r->opt, i), r->keys_in[i], part,
                            ks.width, KEYS_ON_HOST));
  }
done:
  h5g_bulk_free(part);
  return rc;
}

/* Keys (unless whole records of a compound move), then the source index when asked for
 * (streamed: beside them, slot by slot). On the resident path the output is still coming back
 * from the GPU: each piece is written once it is here, and the values are all here before
 * anything reads them. Steps of their own, so that the collective closes at the end meet on
 * every rank. */
int h5g_write_keys(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                   const h5g_extent *e, const h5g_data *d) {
  int rc = H5G_OK;
  int from_device = plan->path == H5G_PATH_DEVICE_RESIDENT && !d->share_on_host;
  h5g_dset *index = NULL, *counts = NULL;
  /* whole records of a table or rows of a 2-D dataset move as carried data (src/carry.c) */
  int keys_move = !r->opt->key_field && !r->opt->nkey_columns;
  keys_source source = from_device ? KEYS_COMING_BACK : KEYS_ON_HOST;
  if (r->opt->index_out) {
    STEP(r, H5G_PHASE_WRITE, h5g_io_create_index_like(r->out_file, r->opt->index_out,
                                                      e->out_total, r->keys_in[0],
                                                      &r->opt->storage, &index));
    h5g_io_allow_direct(index);
  }
  if (plan->streamed) /* the keys of one dataset, and the index (src/plan.c) */
    CHECK(write_streamed_keys(r, plan, e, d, index));
  else if (keys_move && !v->composed)
    CHECK(write_key_dataset(r, e, r->opt->output_dataset, r->keys_in[0], d->sorted,
                            plan->ks.width, source));
  if (from_device) STEP(r, H5G_PHASE_WRITE, h5g_merge_wait(r, plan, e));
  if (keys_move && v->composed) CHECK(write_composed_keys(r, v, plan, e, d));
  if (r->opt->counts) {
    STEP(r, H5G_PHASE_WRITE, h5g_io_create_index_like(r->out_file, r->opt->counts, e->out_total,
                                                      r->keys_in[0], &r->opt->storage, &counts));
    h5g_io_allow_direct(counts);
    STEP(r, H5G_PHASE_WRITE, h5g_io_write(counts, e->out_offset, e->out_n, d->counts));
  }
  if (r->opt->index_out && !plan->streamed)
    STEP(r, H5G_PHASE_WRITE, h5g_io_write(index, e->out_offset, e->out_n, d->sorted_values));
done:
  if (h5g_io_close(index) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  if (h5g_io_close(counts) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  return rc;
}

/* True when `group` (a prefix of written[i]) is also a group on the path of an earlier one. */
static int group_seen(const char *const *written, int i, const char *group, size_t len) {
  for (int j = 0; j < i; j++)
    if (strncmp(written[j], group, len) == 0 && written[j][len] == '/') return 1;
  return 0;
}

/* Collective, without a copy of the input: the attributes of the root and of every group on the
 * path of a written dataset that INPUT has at the same path (the groups HDF5 created for the
 * datasets have none). */
static int copy_group_attributes(h5g_run *r, const h5g_verdict *v) {
  int rc = H5G_OK, nwritten = 0;
  const char *written[H5G_MAX_WRITTEN];
  char *targets[H5G_MAX_CARRY] = {0}, *group = NULL;
  if (copies_input(r, v)) goto done;
  CHECK(h5g_options_written(r->opt, written, targets, &nwritten));
  CHECK(h5g_io_copy_group_attributes(r->in_file, r->out_file, "/"));
  for (int i = 0; i < nwritten; i++)
    for (const char *slash = strchr(written[i] + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
      size_t len = (size_t)(slash - written[i]);
      if (group_seen(written, i, written[i], len)) continue;
      free(group);
      group = strndup(written[i], len);
      CHECK_ALLOC(group, len + 1);
      CHECK(h5g_io_copy_group_attributes(r->in_file, r->out_file, group));
    }
done:
  free(group);
  for (int i = 0; i < H5G_MAX_CARRY; i++) free(targets[i]);
  return rc;
}

/* The groups' attributes (every dataset exists by now), then the collective close. */
int h5g_write_close(h5g_run *r, const h5g_verdict *v) {
  int rc = H5G_OK;
  CHECK(copy_group_attributes(r, v));
  rc = h5g_io_finish_file(r->out_file);
  r->out_file = NULL;
done:
  return rc;
}

/* Rank 0, on a new OUTPUT closed by the writers and with the input closed: the references of
 * the written datasets' attributes (dimension scales, object references) made for OUTPUT, none
 * left as bytes of INPUT (io/h5io.h: h5g_io_carry_references). A copy of INPUT keeps every
 * address: its references stay valid as they are. */
int h5g_write_references(const h5g_run *r, const h5g_verdict *v) {
  int rc = H5G_OK;
  const h5g_options *opt = r->opt;
  h5g_io_written written[H5G_MAX_CARRY + H5G_MAX_KEYS];
  char *targets[H5G_MAX_CARRY] = {0};
  int count = 0;
  if (r->rank != 0 || copies_input(r, v)) goto done;
  for (int i = 0; i < opt->ndatasets; i++)
    written[count++] = (h5g_io_written){opt->datasets[i], h5g_options_key_output(opt, i)};
  for (int i = 0; i < opt->ncarry; i++) {
    targets[i] = h5g_options_carry_target(opt, opt->carry[i]);
    CHECK_ALLOC(targets[i], strlen(opt->carry[i]) + 1);
    written[count++] = (h5g_io_written){opt->carry[i], targets[i]};
  }
  CHECK(h5g_io_carry_references(opt->input, v->tmp_path, written, count,
                                opt->quiet ? NULL : stderr));
done:
  for (int i = 0; i < H5G_MAX_CARRY; i++) free(targets[i]);
  return rc;
}

/* Rank 0, before the commit: HDF5 without SWMR cannot read a file that another process changes,
 * so a run whose input changed (size or modification time) since it was validated fails rather
 * than commit what it read. */
static int check_input_unchanged(const h5g_run *r, const h5g_verdict *v) {
  int rc = H5G_OK;
  struct stat now;
  h5g_verdict then = *v;
  if (stat(r->opt->input, &now) != 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "input changed while it was sorted: it is gone (%s)", r->opt->input);
  h5g_input_stamp(&now, &then);
  if (then.input_size != v->input_size || then.input_mtime_sec != v->input_mtime_sec ||
      then.input_mtime_nsec != v->input_mtime_nsec)
    H5G_FAIL(H5G_ERR_RUNTIME, "input changed while it was sorted (%s); no output was written",
             r->opt->input);
done:
  return rc;
}

int h5g_write_commit(h5g_run *r, const h5g_verdict *v) {
  int rc = H5G_OK;
  if (r->rank == 0) {
    CHECK(check_input_unchanged(r, v));
    CHECK(h5g_files_commit(v->tmp_path, r->opt->output, v->in_place, r->opt->force));
    h5g_interrupt_committed();
  }
  r->tmp_created = 0;
done:
  return rc;
}

void h5g_write_name_output(const h5g_options *opt, const h5g_verdict *v) {
  const char *message = h5g_error_message(), *from = message, *at;
  size_t len = strlen(v->tmp_path), used = 0;
  char named[H5G_MSG_MAX];
  if (len == 0 || !strstr(message, v->tmp_path)) return;
  for (; (at = strstr(from, v->tmp_path)) != NULL && used < sizeof named; from = at + len) {
    const char *name = at[len] == '.' ? v->tmp_path : opt->output; /* "<temp>.data.0" is not */
    used += (size_t)snprintf(named + used, sizeof named - used, "%.*s%s", (int)(at - from), from,
                             name);
  }
  if (used < sizeof named) snprintf(named + used, sizeof named - used, "%s", from);
  h5g_error_adopt(h5g_error_code(), named);
}
