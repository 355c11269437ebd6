/* Phase "carry": datasets permuted with the keys (--carry), and with --key-field the compound
 * table itself. Each is opened at both ends, this rank's rows are read (not a table's that the
 * keys' read kept: src/read.h), put in the sorted order and written; narrow carried datasets
 * travel together. Where the keys' sort left their source indices on the GPU (one rank, its
 * slice sorted there) the rows go up, are put in order there and come back, through a ring of
 * pinned slots; elsewhere the rows of the sorted order are fetched from their owners by source
 * index along one route for all of them (mpi/gather_rows.h). */
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
 * the GPU) and, on the host route, two buffers of the widest rows moved (v->moved_row_bytes) for
 * the most rows this rank reads or writes, used by each dataset or batch in turn
 * (carry_together). */
typedef struct {
  h5g_row_route *route;
  void *buf[2];
  size_t buf_bytes;
  int rows_kept; /* buf[0] is the table's rows the read kept (d->table_rows): not ours */
  /* on_gpu: the rows move on the GPU (moves_on_gpu), through `ring` (`slots` slots, at most
   * H5G_RING_SLOTS, of slot_bytes, pinned: `set`) instead of the two buffers, whose pinning
   * would bound the move (bench/RESULTS.md); kept rows were pinned as the keys' read filled
   * them (src/read.h: kept_set, unpinned once they are up). */
  int on_gpu;
  char *ring;
  size_t slot_bytes;
  int slots;
  h5g_buffer_spec spec; /* the ring's (h5g_buffers_start keeps it) */
  h5g_buffer_set *set;
  h5g_buffer_set *kept_set;
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

/* --progress in the carry: one transfer's pieces counted after the carry's bytes done before. */
typedef struct {
  h5g_run *r;
  const carrying *c;
  size_t width;
} counting;

static int count_piece(void *ctx, uint64_t first, uint64_t count, int moved) {
  const counting *k = ctx;
  if (moved)
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

/* Planned, and room for the widest dataset's rows made on the GPU beside the sorted run. */
static int moves_on_gpu(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                        const h5g_extent *e) {
  return h5g_carry_gpu_planned(r, v, plan) && e->out_n == plan->n &&
         r->be->gather_reserve(r->be, plan->n, widest_dataset_row(r->opt, v));
}

/* The ring: slots of at least `bytes` (a pin piece, or a power of two above it), no more of
 * them than `share` bytes (the rows of a dataset) take, so that it stays within the two buffers
 * the memory check counts; pinned in the background (one rank: nothing to agree on but the
 * allocation). */
static int ring_make(h5g_run *r, const h5g_plan *plan, carrying *c, size_t bytes,
                     uint64_t share) {
  int rc = H5G_OK;
  size_t slot = h5g_pin_piece_bytes();
  while (slot < bytes) slot *= 2;
  if (share < slot) slot = (share + 4095) / 4096 * 4096; /* one slot holds it all */
  c->slot_bytes = slot;
  c->slots = (share + slot - 1) / slot < H5G_RING_SLOTS ? (int)((share + slot - 1) / slot)
                                                        : H5G_RING_SLOTS;
  c->spec = (h5g_buffer_spec){.n = (uint64_t)c->slots * slot, .elem_bytes = 1};
  int made = h5g_buffers_start(&c->spec, 1, h5g_io_piece_bytes(), plan->ranks_on_node,
                               h5g_plan_pin_piece, h5g_plan_unpin_piece, r->be,
                               &c->set) == H5G_OK;
  c->ring = c->spec.p;
  CHECK(h5g_agree_alloc(r->comm, made, c->spec.n));
done:
  return rc;
}

/* Slots that hold a row, and a chunk of `chunk_rows` rows (0: not chunked) up to all n rows, of
 * `width` bytes: made anew, larger, where a slot is smaller (a piece written that ends inside a
 * filtered chunk would encode it again with the next; one read would decode it twice). Between
 * datasets, so nothing copies from or into the ring then. */
static int ring_fits(h5g_run *r, const h5g_plan *plan, carrying *c, uint64_t chunk_rows,
                     size_t width) {
  int rc = H5G_OK;
  uint64_t rows = chunk_rows < plan->n ? chunk_rows : plan->n;
  uint64_t need = (rows ? rows : 1) * width;
  if (need <= c->slot_bytes) goto done;
  CHECK(r->be->gather_done(r->be));
  h5g_buffers_free(c->set);
  c->set = NULL;
  CHECK(ring_make(r, plan, c, need, plan->n * width));
done:
  return rc;
}

/* Rows a slot takes of a dataset: in whole chunks where it is chunked and one fits. */
static uint64_t slot_rows(const carrying *c, size_t width, uint64_t chunk_rows) {
  uint64_t rows = c->slot_bytes / width;
  return chunk_rows && rows >= chunk_rows ? rows / chunk_rows * chunk_rows : rows;
}

static char *ring_slot(const carrying *c, uint64_t piece) {
  return c->ring + piece % (uint64_t)c->slots * c->slot_bytes;
}

/* On the GPU: this rank's rows of `in` read slot by slot, each slot sent up once read and read
 * into again once that copy is done. */
static int up_through_ring(h5g_run *r, const h5g_plan *plan, carrying *c, h5g_dset *in,
                           size_t width) {
  int rc = H5G_OK;
  h5g_backend *be = r->be;
  uint64_t per = slot_rows(c, width, h5g_io_chunk_rows(in));
  for (uint64_t first = 0, k = 0; first < plan->n; first += per, k++) {
    uint64_t count = plan->n - first < per ? plan->n - first : per;
    char *slot = ring_slot(c, k);
    CHECK(be->gather_wait(be, slot + 1));
    CHECK(h5g_buffers_wait_pinned(c->set, 0, (k % (uint64_t)c->slots + 1) * c->slot_bytes));
    CHECK(h5g_io_read_each(in, plan->offset + first, count, slot, NULL, NULL));
    h5g_progress_bytes(&r->progress, c->done + (first + count) * width, c->share);
    CHECK(be->gather_up(be, slot, plan->n, width, first, count));
  }
done:
  return rc;
}

/* On the GPU: the sorted rows come back slot by slot into the ring, a ring's worth ahead, each
 * slot written to `out` once it is back and then filled again. */
static int down_through_ring(h5g_run *r, const h5g_extent *e, carrying *c, h5g_dset *out,
                             size_t width) {
  int rc = H5G_OK;
  h5g_backend *be = r->be;
  uint64_t n = e->out_n, per = slot_rows(c, width, h5g_io_chunk_rows(out));
  for (uint64_t k = 0; k < (uint64_t)c->slots && k * per < n; k++)
    CHECK(be->gather_down(be, ring_slot(c, k), n, width, k * per,
                          n - k * per < per ? n - k * per : per));
  for (uint64_t first = 0, k = 0; first < n; first += per, k++) {
    uint64_t count = n - first < per ? n - first : per, next = first + (uint64_t)c->slots * per;
    char *slot = ring_slot(c, k);
    CHECK(be->gather_wait(be, slot + 1));
    CHECK(h5g_io_write_each(out, e->out_offset + first, count, slot, NULL, NULL));
    h5g_progress_bytes(&r->progress, c->done + (first + count) * width, c->share);
    if (next < n)
      CHECK(be->gather_down(be, slot, n, width, next, n - next < per ? n - next : per));
  }
done:
  return rc;
}

/* On the GPU: one dataset's rows (kept: the table's rows the keys' read kept, pinned, in
 * `kept_rows`) up, in order, back and written. */
static int move_on_gpu(h5g_run *r, const h5g_plan *plan, const h5g_extent *e, carrying *c,
                       h5g_dset *in, h5g_dset *out, size_t width, const char *kept_rows) {
  int rc = H5G_OK;
  h5g_backend *be = r->be;
  uint64_t chunk_in = h5g_io_chunk_rows(in), chunk_out = h5g_io_chunk_rows(out);
  CHECK(ring_fits(r, plan, c, chunk_in > chunk_out ? chunk_in : chunk_out, width));
  if (kept_rows) {
    CHECK(h5g_buffers_wait_all(c->kept_set));
    CHECK(be->gather_up(be, kept_rows, plan->n, width, 0, plan->n));
    h5g_buffers_unpin_start(c->kept_set); /* once that copy is done (the unpin waits for it) */
  } else {
    CHECK(up_through_ring(r, plan, c, in, width));
  }
  count_done(r, c, plan->n, width);
  h5g_timeline_mark("carry_read");
  CHECK(be->gather_rows(be, plan->n, width, plan->offset));
  count_done(r, c, plan->n, width);
  h5g_fault_point(r, "carry-moved");
  h5g_timeline_mark("carry_moved");
  CHECK(h5g_buffers_wait_all(c->set)); /* every slot pinned (and touched) before copies into it */
  CHECK(down_through_ring(r, e, c, out, width));
  CHECK(be->gather_done(be)); /* an index outside the rows: told here */
  count_done(r, c, e->out_n, width);
  h5g_timeline_mark("carry_written");
done:
  return rc;
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
  c->on_gpu = (!c->rows_kept || d->table_set) && moves_on_gpu(r, v, plan, e);
  c->kept_set = d->table_set;
  if (c->rows_kept) c->buf[0] = d->table_rows;
  CHECK(h5g_agree(r->comm, c->rows_kept && d->table_rows_capacity < c->buf_bytes
                               ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                               "internal error: the table's rows kept in %zu "
                                               "bytes, not %zu",
                                               d->table_rows_capacity, c->buf_bytes)
                               : H5G_OK));
  if (c->on_gpu) {
    CHECK(ring_make(r, plan, c, 0, plan->n * widest_dataset_row(r->opt, v)));
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

/* Collective: `count` datasets carried together, step by step (every step agreed, so the closes
 * at the end meet on every rank). One alone is read into rows (buf[0]; `kept`: they are there,
 * rows of that width, and not read again), moved into the sorted share's rows (buf[1]) and
 * written from them. Several are read into columns (buf[1]), one per
 * dataset, interleaved into rows (buf[0]), moved as one row (buf[1]), split into columns again
 * (buf[0]) and each written from its own: the interleave and the split are one pass each over
 * blocks that stay in the cache. On the GPU each moves alone, through the ring (move_on_gpu).
 * `direct`: the sources may be read by the rank's
 * threads where their storage allows; 0 where the keys came from their rows through HDF5's
 * conversion, so that a damaged file gives the keys and the rows one view. */
static int carry_together(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                          const h5g_extent *e, carrying *c, const char *const *src,
                          const char *const *dst, int count, int direct, size_t kept) {
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
  for (int j = 0; c->on_gpu && j < count; j++) /* each alone; rows of no bytes move nothing */
    STEP(r, H5G_PHASE_CARRY,
         width[j] ? move_on_gpu(r, plan, e, c, in[j], out[j], width[j], kept ? rows : NULL)
                  : h5g_io_write_each(out[j], e->out_offset, e->out_n, c->ring, NULL, NULL));
  if (c->on_gpu) goto done;
  for (int j = 0; j < count; j++) {
    char *into = batch ? other + offset[j] * plan->n : rows + offset[j] * plan->n;
    counting k = {r, c, width[j]};
    STEP(r, H5G_PHASE_CARRY, kept ? H5G_OK
                                  : h5g_io_read_each(in[j], plan->offset, plan->n, into,
                                                     count_piece, &k));
    count_done(r, c, plan->n, width[j]);
  }
  if (batch) h5g_parallel_interleave(rows, other, width, count, plan->n, plan->io_threads);
  h5g_timeline_mark("carry_read");
  STEP(r, H5G_PHASE_CARRY, h5g_row_route_move(c->route, rows, offset[count], other));
  if (batch) h5g_parallel_split(rows, other, width, count, e->out_n, plan->io_threads);
  count_done(r, c, plan->n, offset[count]);
  h5g_fault_point(r, "carry-moved");
  h5g_timeline_mark("carry_moved");
  const char *sorted = batch ? rows : other;
  for (int j = 0; j < count; j++) {
    counting k = {r, c, width[j]};
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
                         h5g_carry_rows_are_keys(opt, r->keys_in), d->table_row_bytes));
  for (int i = 0; v->composed && !whole_rows && i < layout->count; i++) {
    if (!h5g_keyset_fetched(layout, i)) continue; /* src/write.c writes the others */
    const char *key = h5g_options_key(opt, i).dataset, *target = h5g_options_key_output(opt, i);
    CHECK(carry_together(r, v, plan, e, &c, &key, &target, 1, h5g_io_unconverted(r->keys_in[i]),
                         0));
  }
  for (int i = 0, n; i < opt->ncarry; i += n) {
    n = h5g_carry_batch(v->carried_row_bytes, opt->ncarry, i);
    CHECK(carry_together(r, v, plan, e, &c, opt->carry + i, (const char *const *)targets + i, n,
                         1, 0));
  }
done:
  for (int i = 0; i < opt->ncarry; i++) free(targets[i]);
  h5g_row_route_free(c.route);
  if (c.on_gpu) {
    if (rc != H5G_OK) r->be->gather_done(r->be); /* no copy from or into the ring under way */
    h5g_buffers_free(c.set);
  } else {
    if (!c.rows_kept) h5g_resident_free(c.buf[0], c.buf_bytes);
    h5g_resident_free(c.buf[1], c.buf_bytes);
  }
  return rc;
}
