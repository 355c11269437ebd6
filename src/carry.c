/* Phase "carry": datasets permuted with the keys (--carry), and with --key-field the compound
 * table itself. Each is opened at both ends, this rank's rows are read (not a table's that the
 * keys' read kept: src/read.h), put in the sorted order and written; narrow carried datasets
 * travel together. Where the keys' sort left their source indices on the GPU (one rank, its
 * slice sorted there) the rows go up, are put in order there and come back; elsewhere the rows
 * of the sorted order are fetched from their owners by source index along one route for all of
 * them (mpi/gather_rows.h). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/host_memory.h"
#include "base/parallel.h"
#include "mpi/agree.h"
#include "mpi/gather_rows.h"
#include "src/carry.h"
#include "src/plan.h"
#include "src/timeline.h"

int h5g_carry_batch(const uint64_t *row_bytes, int count, int first) {
  uint64_t bytes = row_bytes[first];
  int n = 1;
  while (first + n < count && bytes + row_bytes[first + n] <= H5G_CARRY_BATCH_BYTES)
    bytes += row_bytes[first + n++];
  return n;
}

/* What every carried dataset of the run shares: the route its rows take (made once; none on
 * the GPU) and two buffers of the widest rows moved (v->moved_row_bytes) for the most rows this
 * rank reads or writes, used by each dataset or batch in turn (carry_together). */
typedef struct {
  h5g_row_route *route;
  void *buf[2];
  size_t buf_bytes;
  int rows_kept; /* buf[0] is the table's rows the read kept (d->table_rows): not ours */
  /* on_gpu: the rows move on the GPU (moves_on_gpu). The buffers are then pinned: made ready in
   * the background (`set`: buf[0], unless the rows are kept, then buf[1]) while the first
   * dataset is read; kept rows were pinned as the keys' read filled them (src/read.h). */
  int on_gpu;
  h5g_buffer_spec specs[2]; /* the set's (h5g_buffers_start keeps them) */
  h5g_buffer_set *set;
  h5g_buffer_set *kept_set; /* the kept rows' (d->table_set), unpinned after the last move */
  uint64_t done, share; /* --progress: this rank's bytes read, moved and written; of them all */
} carrying;

uint64_t h5g_carry_row_bytes(const h5g_options *opt, const h5g_verdict *v) {
  if (opt->key_field || opt->nkey_columns) return v->moved_row_bytes; /* the table's rows */
  uint64_t bytes = 0;
  for (int i = 0; i < opt->ncarry; i++) bytes += v->carried_row_bytes[i];
  for (int i = 0; v->composed && i < v->layout.count; i++)
    if (h5g_keyset_fetched(&v->layout, i)) bytes += v->layout.key[i].width;
  return bytes;
}

uint64_t h5g_carry_buffer_bytes(const h5g_verdict *v, uint64_t n, int size) {
  uint64_t most = (v->info.n + (uint64_t)size - 1) / (uint64_t)size;
  return (n > most ? n : most) * v->moved_row_bytes;
}

int h5g_carry_rows_are_keys(const h5g_options *opt, h5g_dset *const *keys_in) {
  return (opt->key_field || opt->nkey_columns) && !keys_in[1] && h5g_io_unconverted(keys_in[0]);
}

/* --progress in the carry: one transfer's pieces counted after the carry's bytes done before.
 * A read into buf[0] while the buffer set makes it ready (ready_from: where the read's rows
 * begin in it, else -1) waits for each piece to be resident before the piece is read. */
typedef struct {
  h5g_run *r;
  const carrying *c;
  size_t width;
  long long ready_from;
} counting;

static int count_piece(void *ctx, uint64_t first, uint64_t count, int moved) {
  const counting *k = ctx;
  if (!moved)
    return k->ready_from >= 0 ? h5g_buffers_wait(k->c->set, 0, (uint64_t)k->ready_from +
                                                                   (first + count) * k->width)
                              : H5G_OK;
  h5g_progress_bytes(&k->r->progress, k->c->done + (first + count) * k->width, k->c->share);
  return H5G_OK;
}

/* After a transfer or move of `rows` rows of `width` bytes. */
static void count_done(h5g_run *r, carrying *c, uint64_t rows, size_t width) {
  c->done += rows * width;
  h5g_progress_bytes(&r->progress, c->done, c->share);
}

/* The widest row of one dataset the carry moves (on the GPU each moves alone). */
static uint64_t widest_dataset_row(const h5g_options *opt, const h5g_verdict *v) {
  if (opt->key_field || opt->nkey_columns) return v->moved_row_bytes; /* the table's rows */
  uint64_t widest = 0;
  for (int i = 0; i < opt->ncarry; i++)
    if (v->carried_row_bytes[i] > widest) widest = v->carried_row_bytes[i];
  for (int i = 0; v->composed && i < v->layout.count; i++)
    if (h5g_keyset_fetched(&v->layout, i) && v->layout.key[i].width > widest)
      widest = v->layout.key[i].width;
  return widest;
}

int h5g_carry_gpu_planned(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan) {
  return r->size == 1 && plan->sort_is_output && !plan->spills && plan->n && r->opt->top < 0 &&
         !r->opt->unique && !(v->composed && v->layout.words > 1) && v->moved_row_bytes &&
         r->be->gather_rows;
}

/* Planned, and the widest dataset's rows fit the GPU's budget beside the sorted run. */
static int moves_on_gpu(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                        const h5g_extent *e) {
  return h5g_carry_gpu_planned(r, v, plan) && e->out_n == plan->n &&
         r->be->gather_fits(r->be, plan->n, widest_dataset_row(r->opt, v));
}

/* The buffers are on huge pages where the system has them: the copies by source index are
 * random accesses, which small pages make TLB misses. Made resident by the rank's threads (on
 * the GPU, pinned in the background); the first is the table's rows where the read kept them
 * (src/read.h). */
static int carry_start(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                       const h5g_extent *e, const h5g_data *d, carrying *c) {
  int rc = H5G_OK, made = 1;
  c->buf_bytes = (plan->n > e->out_n ? plan->n : e->out_n) * v->moved_row_bytes;
  c->rows_kept = d->table_rows != NULL;
  /* one rank: nothing to agree; kept rows must be pinned, which they are where it was planned */
  c->on_gpu = moves_on_gpu(r, v, plan, e) && (!c->rows_kept || d->table_set);
  c->kept_set = d->table_set;
  if (c->rows_kept) c->buf[0] = d->table_rows;
  CHECK(h5g_agree(r->comm, c->rows_kept && d->table_rows_capacity < c->buf_bytes
                               ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                               "internal error: the table's rows kept in %zu "
                                               "bytes, not %zu",
                                               d->table_rows_capacity, c->buf_bytes)
                               : H5G_OK));
  if (c->on_gpu) {
    h5g_buffer_spec *specs = c->specs;
    specs[0] = specs[1] = (h5g_buffer_spec){.n = c->buf_bytes, .elem_bytes = 1};
    made = h5g_buffers_start(specs + c->rows_kept, 2 - c->rows_kept, h5g_io_piece_bytes(),
                             plan->ranks_on_node, h5g_plan_pin_piece, h5g_plan_unpin_piece,
                             r->be, &c->set) == H5G_OK;
    if (!c->rows_kept) c->buf[0] = specs[0].p;
    c->buf[1] = specs[1].p;
    CHECK(h5g_agree_alloc(r->comm, made, (2 - c->rows_kept) * c->buf_bytes));
    r->metrics.carried_on_gpu = 1;
    h5g_timeline_mark("carry_buffers");
    goto done;
  }
  made = (c->rows_kept ||
          h5g_resident_alloc(c->buf_bytes, plan->ranks_on_node, &c->buf[0]) == H5G_OK) &&
         h5g_resident_alloc(c->buf_bytes, plan->ranks_on_node, &c->buf[1]) == H5G_OK;
  CHECK(h5g_agree_alloc(r->comm, made, 2 * c->buf_bytes));
  h5g_timeline_mark("carry_buffers");
  if (!v->moved_row_bytes) goto done; /* only rows of no bytes: nothing to move (every rank) */
  CHECK(h5g_row_route_make(r->comm, d->sorted_values, e->out_n, v->info.n, plan->io_threads,
                           &c->route));
  h5g_timeline_mark("carry_route");
done:
  return rc;
}

/* On the GPU: each of `count` datasets read into its column of rows (as `offset` lays them out,
 * plan->n rows each) put in order into its column of `sorted`. The last move of the carry starts
 * unpinning the buffers behind its writes. */
static int move_on_gpu(h5g_run *r, const h5g_plan *plan, carrying *c, const char *rows,
                       char *sorted, const size_t *width, const size_t *offset, int count,
                       int last) {
  int rc = H5G_OK;
  CHECK(h5g_buffers_wait_all(c->set));
  if (c->rows_kept) CHECK(h5g_buffers_wait_all(c->kept_set));
  for (int j = 0; j < count; j++) /* rows of no bytes (N x 0) have nothing to move */
    CHECK(width[j] ? r->be->gather_rows(r->be, rows + offset[j] * plan->n, plan->n, width[j],
                                        plan->offset, sorted + offset[j] * plan->n)
                   : H5G_OK);
  if (last) {
    h5g_buffers_unpin_start(c->kept_set);
    h5g_buffers_unpin_start(c->set);
  }
done:
  return rc;
}

/* Collective: `count` datasets carried together, step by step (every step agreed, so the closes
 * at the end meet on every rank). One alone is read into rows (buf[0]; `kept`: they are there,
 * rows of that width, and not read again), moved into the sorted share's rows (buf[1]) and
 * written from them. Several are read into columns (buf[1]), one per
 * dataset, interleaved into rows (buf[0]), moved as one row (buf[1]), split into columns again
 * (buf[0]) and each written from its own: the interleave and the split are one pass each over
 * blocks that stay in the cache. On the GPU each is read into its column (buf[0]) and moved
 * into its column (buf[1]), with no interleave. `direct`: the sources may be read by the rank's
 * threads where their storage allows; 0 where the keys came from their rows through HDF5's
 * conversion, so that a damaged file gives the keys and the rows one view. `last`: the carry's
 * last move. */
static int carry_together(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                          const h5g_extent *e, carrying *c, const char *const *src,
                          const char *const *dst, int count, int direct, size_t kept, int last) {
  int rc = H5G_OK;
  h5g_dset *in[H5G_MAX_CARRY] = {0}, *out[H5G_MAX_CARRY] = {0};
  size_t width[H5G_MAX_CARRY] = {0}, offset[H5G_MAX_CARRY + 1] = {0};
  char *rows = c->buf[0], *other = c->buf[1];
  int batch = count > 1 && !c->on_gpu;
  for (int j = 0; j < count; j++) {
    STEP(r, H5G_PHASE_CARRY, h5g_io_open_rows(r->in_file, src[j], &in[j]));
    STEP(r, H5G_PHASE_CARRY, h5g_io_create_like(r->out_file, dst[j], in[j], e->out_total,
                                                &r->opt->storage, &out[j]));
    h5g_io_allow_direct(out[j]);
    if (direct) h5g_io_allow_direct(in[j]);
    width[j] = h5g_io_row_bytes(in[j]);
    offset[j + 1] = offset[j] + width[j];
  }
  STEP(r, H5G_PHASE_CARRY, offset[count] > v->moved_row_bytes
                               ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                               "internal error: carried rows wider than "
                                               "inspected (%s)", src[0])
                               : H5G_OK);
  STEP(r, H5G_PHASE_CARRY, kept && (batch || kept != width[0])
                               ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                               "internal error: rows kept of %zu bytes, not %zu "
                                               "(%s)", kept, (size_t)width[0], src[0])
                               : H5G_OK);
  for (int j = 0; j < count; j++) {
    char *into = batch ? other + offset[j] * plan->n : rows + offset[j] * plan->n;
    counting k = {r, c, width[j], c->set && !c->rows_kept ? (long long)(into - rows) : -1};
    STEP(r, H5G_PHASE_CARRY, kept ? H5G_OK
                                  : h5g_io_read_each(in[j], plan->offset, plan->n, into,
                                                     count_piece, &k));
    count_done(r, c, plan->n, width[j]);
  }
  if (batch) h5g_parallel_interleave(rows, other, width, count, plan->n, plan->io_threads);
  h5g_timeline_mark("carry_read");
  if (c->on_gpu)
    STEP(r, H5G_PHASE_CARRY, move_on_gpu(r, plan, c, rows, other, width, offset, count, last));
  else
    STEP(r, H5G_PHASE_CARRY, h5g_row_route_move(c->route, rows, offset[count], other));
  if (batch) h5g_parallel_split(rows, other, width, count, e->out_n, plan->io_threads);
  count_done(r, c, plan->n, offset[count]);
  h5g_fault_point(r, "carry-moved");
  h5g_timeline_mark("carry_moved");
  const char *sorted = batch ? rows : other;
  for (int j = 0; j < count; j++) {
    counting k = {r, c, width[j], -1};
    STEP(r, H5G_PHASE_CARRY, h5g_io_write_each(out[j], e->out_offset, e->out_n,
                                               sorted + offset[j] * e->out_n, count_piece, &k));
    count_done(r, c, e->out_n, width[j]);
  }
  h5g_timeline_mark("carry_written");
done:
  for (int j = 0; j < count; j++) {
    if (h5g_io_close(out[j]) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
    if (h5g_io_close(in[j]) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  }
  return rc;
}

/* A key of several -d after key i is fetched by source index too. */
static int fetched_after(const h5g_key_layout *layout, int i) {
  for (int j = i + 1; j < layout->count; j++)
    if (h5g_keyset_fetched(layout, j)) return 1;
  return 0;
}

int h5g_carry_all(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                  const h5g_extent *e, const h5g_data *d) {
  int rc = H5G_OK;
  const h5g_options *opt = r->opt;
  const h5g_key_layout *layout = &v->layout;
  char *targets[H5G_MAX_CARRY] = {0};
  carrying c = {0};
  int whole_rows = opt->key_field || opt->nkey_columns;
  if (!whole_rows && !opt->ncarry && !(v->composed && h5g_keyset_by_index(layout)))
    goto done; /* nothing moves by source index */
  int named = 1;
  size_t names = 0;
  for (int i = 0; i < opt->ncarry; i++) {
    targets[i] = h5g_options_carry_target(opt, opt->carry[i]);
    named &= targets[i] != NULL;
    names += strlen(opt->carry[i]) + strlen(opt->output_dataset) + 1;
  }
  /* --progress: the carried bytes of the job; this rank's read, moved and written */
  uint64_t row_bytes = h5g_carry_row_bytes(opt, v);
  r->phase_bytes[H5G_PHASE_CARRY] = v->info.n * row_bytes;
  c.share = (2 * plan->n + e->out_n) * row_bytes;
  STEP(r, H5G_PHASE_CARRY, h5g_agree_alloc(r->comm, named, names));
  STEP(r, H5G_PHASE_CARRY, carry_start(r, v, plan, e, d, &c));
  /* read directly where its keys came from its raw rows (src/keyset.c), or not at all where the
   * keys' read kept them */
  if (whole_rows)
    CHECK(carry_together(r, v, plan, e, &c, &opt->dataset, &opt->output_dataset, 1,
                         h5g_carry_rows_are_keys(opt, r->keys_in), d->table_row_bytes,
                         !opt->ncarry));
  for (int i = 0; v->composed && !whole_rows && i < layout->count; i++) {
    if (!h5g_keyset_fetched(layout, i)) continue; /* src/write.c writes the others */
    const char *key = h5g_options_key(opt, i).dataset, *target = h5g_options_key_output(opt, i);
    CHECK(carry_together(r, v, plan, e, &c, &key, &target, 1, h5g_io_unconverted(r->keys_in[i]),
                         0, !opt->ncarry && !fetched_after(layout, i)));
  }
  for (int i = 0, n; i < opt->ncarry; i += n) {
    n = h5g_carry_batch(v->carried_row_bytes, opt->ncarry, i);
    CHECK(carry_together(r, v, plan, e, &c, opt->carry + i, (const char *const *)targets + i, n,
                         1, 0, i + n == opt->ncarry));
  }
done:
  for (int i = 0; i < opt->ncarry; i++) free(targets[i]);
  h5g_row_route_free(c.route);
  if (c.on_gpu) {
    h5g_buffers_free(c.set);
  } else {
    if (!c.rows_kept) h5g_resident_free(c.buf[0], c.buf_bytes);
    h5g_resident_free(c.buf[1], c.buf_bytes);
  }
  return rc;
}
