/* Phase "read": this rank's slice, run by run, into the slice buffer. On the device paths each
 * piece goes on to the GPU as soon as it is read, once its buffer is pinned and the runs before
 * it were handed over, so the copies (and the sort of the previous run) run behind the read. */
#include "base/error.h"
#include "base/host_memory.h"
#include "mpi/agree.h"
#include "src/carry.h"
#include "src/plan.h"
#include "src/read.h"

#include "src/local_sort.h"

int h5g_read_open_file(h5g_run *r) {
  return h5g_io_open_file(r->comm, r->opt->input, 0, &r->in_file);
}

int h5g_read_open_keys(h5g_run *r, const h5g_verdict *v) {
  int rc = H5G_OK;
  if (v->composed)
    CHECK(h5g_keyset_open(r->comm, r->opt, r->in_file, 0, r->keys_in));
  else
    CHECK(h5g_io_open_keys(r->in_file, r->opt->dataset, r->opt->key_field, &r->keys_in[0]));
  for (int i = 0; i < H5G_MAX_KEYS && r->keys_in[i]; i++) h5g_io_allow_direct(r->keys_in[i]);
done:
  return rc;
}

int h5g_read_keep_rows(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, h5g_data *d) {
  int rc = H5G_OK;
  /* on every rank or none: the carry then reads the table on none (its reads are collective);
   * not rows wider than inspected (a file replaced since): the buffer is made for those */
  int keep = h5g_carry_rows_are_keys(r->opt, r->keys_in) && !plan->spills &&
             h5g_io_row_bytes(r->keys_in[0]) <= v->moved_row_bytes;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &keep, 1, MPI_INT, MPI_MIN, r->comm));
  size_t bytes = keep && plan->n ? h5g_carry_buffer_bytes(v, plan->n, r->size) : 0;
  int made = 1;
  if (bytes && h5g_carry_gpu_planned(r, v, plan)) { /* pinned behind the read, for the GPU */
    d->table_spec = (h5g_buffer_spec){.n = bytes, .elem_bytes = 1};
    made = h5g_buffers_start(&d->table_spec, 1, h5g_io_piece_bytes(), plan->ranks_on_node,
                             h5g_plan_pin_piece, h5g_plan_unpin_piece, r->be,
                             &d->table_set) == H5G_OK;
    d->table_rows = d->table_spec.p;
  } else if (bytes) { /* untouched: the read's threads make it resident as they fill it */
    made = h5g_untouched_alloc(bytes, &d->table_rows) == H5G_OK;
  }
  if (made) d->table_rows_capacity = bytes; /* h5g_data_free frees it, should another rank fail */
  CHECK(h5g_agree_alloc(r->comm, made, bytes));
  d->table_row_bytes = keep ? h5g_io_row_bytes(r->keys_in[0]) : 0;
done:
  return rc;
}

/* The read phase's own state, the pieces' callback context: which run the read is in and how
 * far the runs went to the backend. */
typedef struct {
  h5g_run *r;
  const h5g_verdict *v;
  const h5g_plan *plan;
  const h5g_data *d;  /* the slice buffer's contents change */
  size_t reading_run; /* the run whose pieces the read delivers */
  size_t handed_runs; /* device paths: runs [0, handed_runs) loaded and their sorts started */
  uint64_t loaded;    /* keys of run handed_runs handed to the backend so far */
  int device_sums;    /* --verify's checksum of the keys read taken on the device as they load */
  const h5g_sorted_runs *kept; /* the runs not read again, and each run's record */
} read_state;

/* Hands keys [first, first + count) of run j, in `piece`, to the backend (which copies them to
 * the GPU while the host reads on), checksummed there with device_sums. */
static int load_keys(read_state *s, const void *piece, uint64_t first, uint64_t count,
                     uint64_t len) {
  int rc = H5G_OK;
  h5g_backend *be = s->r->be;
  CHECK(be->load(be, piece, first, count, len, s->plan->ks.width, s->plan->records));
  if (s->device_sums) CHECK(be->checksum_loaded(be, first, count));
done:
  return rc;
}

/* Collective, several keys: run j's keys of word `word` composed into the slice buffer
 * (src/keyset.h). */
static int read_composed(read_state *s, int word, uint64_t begin, uint64_t len) {
  int rc = H5G_OK;
  h5g_run *r = s->r;
  const h5g_plan *plan = s->plan;
  const h5g_data *d = s->d;
  unsigned w = plan->ks.width;
  void *keys = (char *)d->keys + begin * w;
  /* the table's rows kept: the rows, which fit, are read there (h5g_read_keep_rows); else the
   * merge's other side, free until the merge: each key is read there */
  size_t row_bytes = d->table_row_bytes ? d->table_row_bytes : w;
  void *scratch = d->table_row_bytes ? (d->table_rows ? (char *)d->table_rows + begin * row_bytes
                                                      : NULL)
                  : d->spare         ? (char *)d->spare + begin * w
                                     : NULL;
  CHECK(h5g_agree(r->comm, h5g_buffers_wait(d->set, H5G_BUFFER_KEYS, begin + len)));
  /* kept rows pinned for the GPU: resident before the read fills them */
  CHECK(h5g_agree(r->comm, d->table_set
                               ? h5g_buffers_wait(d->table_set, 0, (begin + len) * row_bytes)
                               : H5G_OK));
  /* a rank without rows has no spare buffer, but agrees all the same */
  CHECK(h5g_agree(r->comm, scratch && !d->table_row_bytes
                               ? h5g_buffers_wait(d->set, H5G_BUFFER_SPARE, begin + len)
                               : H5G_OK));
  CHECK(h5g_keyset_read(r->comm, r->opt, &s->v->layout, r->keys_in, word, plan->offset + begin,
                        len, w, keys, plan->io_threads, scratch, len * row_bytes));
  if (r->opt->verify)
    r->metrics.checksum_in += h5g_keys_checksum_parallel(keys, len, w, plan->io_threads);
  h5g_progress_bytes(&r->progress, (begin + len) * w, plan->n * w);
done:
  return rc;
}

/* Hands keys [loaded, upto) of run `handed_runs` to the backend. */
static int load_read_keys(read_state *s, uint64_t upto) {
  int rc = H5G_OK;
  const h5g_plan *plan = s->plan;
  unsigned w = plan->ks.width;
  uint64_t begin = plan->run_offsets[s->handed_runs];
  uint64_t len = plan->run_offsets[s->handed_runs + 1] - begin;
  if (upto > s->loaded)
    CHECK(load_keys(s, (char *)s->d->keys + (begin + s->loaded) * w, s->loaded, upto - s->loaded,
                    len));
  s->loaded = upto;
done:
  return rc;
}

/* Called around each piece of run `reading_run` the file delivers: before it, its buffer must be
 * resident; after it, its checksum for --verify and, once the buffer is pinned that far (a copy
 * from it can then run in the background), its copy to the GPU. */
static int read_piece(void *ctx, uint64_t first, uint64_t count, int moved) {
  read_state *s = ctx;
  h5g_run *r = s->r;
  const h5g_plan *plan = s->plan;
  const h5g_data *d = s->d;
  uint64_t run_begin = plan->run_offsets[s->reading_run];
  unsigned w = plan->ks.width;
  if (!moved) return h5g_buffers_wait(d->set, H5G_BUFFER_KEYS, run_begin + first + count);
  if (r->opt->verify && !s->device_sums)
    r->metrics.checksum_in +=
        h5g_keys_checksum_parallel((const char *)d->keys + (run_begin + first) * w, count, w,
                                   plan->io_threads);
  h5g_progress_bytes(&r->progress, (run_begin + first + count) * w, plan->n * w);
  /* only the oldest run not yet handed over may load: the GPU takes runs in order */
  if (plan->path == H5G_PATH_HOST || s->handed_runs != s->reading_run ||
      !h5g_buffers_pinned(d->set, H5G_BUFFER_KEYS, run_begin + first + count))
    return H5G_OK;
  return load_read_keys(s, first + count);
}

/* plan.streamed (one run, the slice): read slot by slot into the ring of pinned slots, each
 * slot checksummed for --verify and sent to the GPU once read, and read into again once its
 * copy up is done. */
static int read_streamed(read_state *s, uint64_t len) {
  int rc = H5G_OK;
  h5g_run *r = s->r;
  const h5g_plan *plan = s->plan;
  unsigned w = plan->ks.width;
  uint64_t slot = plan->slot_elems;
  for (uint64_t first = 0; first < len; first += slot) {
    uint64_t count = h5g_slot_keys(plan, first, len);
    char *dst = h5g_ring_slot(plan, s->d->keys, first);
    /* the slot's last piece, H5G_RING_SLOTS back, is on the GPU */
    if (first >= h5g_ring_elems(plan))
      CHECK(r->be->wait_loaded(r->be, first - (H5G_RING_SLOTS - 1) * slot));
    CHECK(h5g_buffers_wait_pinned(s->d->set, H5G_BUFFER_KEYS, first % h5g_ring_elems(plan) + slot));
    CHECK(h5g_io_read_each(r->keys_in[0], plan->offset + first, count, dst, NULL, NULL));
    if (r->opt->verify && !s->device_sums)
      r->metrics.checksum_in += h5g_keys_checksum_parallel(dst, count, w, plan->io_threads);
    h5g_progress_bytes(&r->progress, (first + count) * w, plan->n * w);
    CHECK(load_keys(s, dst, first, count, len));
    s->loaded = first + count;
  }
done:
  return rc;
}

/* Collective: reads run j of the slice (from_file; else its keys are in the slice buffer: a
 * later pass of src/passes.c). On the host path the values (source indices, or positions in the
 * order of the pass before) are made here; on the device paths the GPU makes them. */
static int read_run(read_state *s, size_t j, int word, int from_file) {
  int rc = H5G_OK;
  h5g_run *r = s->r;
  const h5g_plan *plan = s->plan;
  const h5g_data *d = s->d;
  uint64_t begin = plan->run_offsets[j], len = plan->run_offsets[j + 1] - begin;
  s->reading_run = j;
  /* sorted already (a resume): its read's collective calls all the same, with no rows (another
   * rank may read its run j) */
  if (j < s->kept->first) len = 0;
  else d->run_checksums[j] = r->metrics.checksum_in;
  if (from_file && s->v->composed)
    CHECK(read_composed(s, word, begin, len));
  else if (from_file && plan->streamed)
    CHECK(read_streamed(s, len));
  else if (from_file)
    CHECK(h5g_io_read_each(r->keys_in[0], plan->offset + begin, len,
                           (char *)d->keys + begin * plan->ks.width, read_piece, s));
  if (plan->path == H5G_PATH_HOST && plan->records) {
    uint64_t *values = d->values;
    CHECK(h5g_buffers_wait(d->set, H5G_BUFFER_VALUES, begin + len));
    for (uint64_t i = begin; i < begin + len; i++) values[i] = plan->offset + i;
  }
done:
  return rc;
}

/* The device paths: runs [handed_runs, upto), read, go to the GPU in order, each loaded (what its
 * read did not load yet) and its sort started. A copy from or into a host buffer needs it pinned
 * that far: without `wait` a run not yet pinned is left for later, and the next runs are read
 * meanwhile (out of core, run 0 would wait for the whole slice buffer to be pinned, and every
 * later run's read behind it). */
static int hand_runs(read_state *s, size_t upto, int wait) {
  int rc = H5G_OK;
  const h5g_plan *plan = s->plan;
  for (; s->handed_runs < upto; s->handed_runs++) {
    size_t j = s->handed_runs;
    uint64_t end = plan->run_offsets[j + 1];
    if (!wait && !h5g_sort_ready(s->r, plan, s->d, end)) break;
    CHECK(h5g_sort_wait_ready(s->r, plan, s->d, end)); /* at once, unless `wait` */
    CHECK(load_read_keys(s, end - plan->run_offsets[j])); /* what its read did not load */
    CHECK(h5g_sort_loaded_run(s->r, plan, s->d, j, s->kept));
    s->loaded = 0;
  }
done:
  return rc;
}

int h5g_read_runs(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, const h5g_data *d,
                  int word, int from_file, const h5g_sorted_runs *kept) {
  int rc = H5G_OK;
  /* every key read from the file goes to the GPU once, by a load of its own (not so of keys
   * composed on the host: read_composed); not where each run is recorded with the checksum of
   * its keys alone, which the device's sum, behind the read, does not tell */
  int device_sums = r->opt->verify && from_file && !v->composed &&
                    plan->path != H5G_PATH_HOST && r->be->checksum_loaded && !kept->sorted;
  read_state s = {r, v, plan, d, 0, kept->first, 0, device_sums, kept};
  for (size_t j = 0; j < plan->nruns; j++) {
    STEP(r, H5G_PHASE_READ, read_run(&s, j, word, from_file));
    if (plan->path == H5G_PATH_HOST) continue;
    int last = j + 1 == plan->nruns;
    /* what the read did not hide of the pinning the runs still to hand over wait for */
    if (last) STEP(r, H5G_PHASE_BUFFERS, h5g_sort_wait_ready(r, plan, d, plan->n));
    STEP(r, H5G_PHASE_SORT, hand_runs(&s, j + 1, last));
  }
  d->run_checksums[plan->nruns] = r->metrics.checksum_in;
done:
  return rc;
}

/* Collective: the input checksum for --verify, from the pieces as they were read (and loaded:
 * device_sums). */
int h5g_read_checksum(h5g_run *r) {
  int rc = H5G_OK;
  uint64_t mine = r->metrics.checksum_in, loaded = 0;
  if (r->be && r->be->loaded_checksum)
    CHECK(h5g_agree(r->comm, r->be->loaded_checksum(r->be, &loaded)));
  mine += loaded;
  CHECK_MPI(MPI_Allreduce(&mine, &r->metrics.checksum_in, 1, MPI_UINT64_T, MPI_SUM, r->comm));
done:
  return rc;
}
