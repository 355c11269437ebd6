/* Filtered outputs written by several ranks (io/gathered.h): each rank keeps its encoded chunks;
 * after the collective close rank 0 stores them all in order. */
#include "io/gathered.h"

#include <errno.h>
#include <hdf5.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"
#include "io/h5io_pkg.h"
#include "mpi/agree.h"
#include "mpi/exchange.h"

/* Bytes a sender puts in one message (consecutive kept entries, or one larger entry): large
 * enough that a message costs its bytes, small enough that rank 0 writes one while it receives
 * the next. */
#define GROUP_BYTES ((uint64_t)64 << 20)
enum { TAG = 2947 };

/* One kept piece of a dataset, as sent to rank 0. */
typedef struct {
  uint64_t first, rows; /* rows [first, first + rows), all in one chunk */
  uint64_t bytes;       /* bytes kept: the encoded chunk, or the raw rows */
  uint32_t mask;        /* encoded: the filters skipped */
  uint32_t encoded;     /* 1: a whole chunk, encoded; 0: raw rows of a chunk */
} kept;

typedef struct {
  char *path, *where;
  uint64_t rows_total, chunk_rows;
  size_t row_bytes;
  h5g_filter_pipeline pipeline;
  kept *entries;
  size_t n, cap;
  char *data; /* the entries' bytes, one after another */
  size_t bytes, data_cap;
} dataset_store;

struct h5g_gathered {
  dataset_store *sets;
  int n;
};

void h5g_gathered_free(h5g_gathered *g) {
  for (int i = 0; g && i < g->n; i++) {
    free(g->sets[i].path);
    free(g->sets[i].where);
    free(g->sets[i].entries);
    free(g->sets[i].data);
  }
  if (g) free(g->sets);
  free(g);
}

/* The store of dataset `path`, made on its first use. */
static int find_store(h5g_gathered **g, const char *path, const h5g_chunked_source *src,
                      dataset_store **out) {
  int rc = H5G_OK;
  if (!*g) CHECK_ALLOC(*g = calloc(1, sizeof **g), sizeof **g);
  for (int i = 0; i < (*g)->n; i++)
    if (strcmp((*g)->sets[i].path, path) == 0) {
      *out = &(*g)->sets[i];
      goto done;
    }
  dataset_store *sets = realloc((*g)->sets, ((size_t)(*g)->n + 1) * sizeof *sets);
  CHECK_ALLOC(sets, ((size_t)(*g)->n + 1) * sizeof *sets);
  (*g)->sets = sets;
  dataset_store *s = &sets[(*g)->n++];
  *s = (dataset_store){.rows_total = src->rows_total, .chunk_rows = src->chunk_rows,
                       .row_bytes = src->row_bytes, .pipeline = src->pipeline};
  s->path = strdup(path);
  s->where = strdup(src->where);
  CHECK_ALLOC(s->path, strlen(path) + 1);
  CHECK_ALLOC(s->where, strlen(src->where) + 1);
  *out = s;
done:
  return rc;
}

/* Appends entry e and its bytes. Growth by doubling: glibc moves large blocks with mremap. */
static int append(dataset_store *s, kept e, const void *data) {
  int rc = H5G_OK;
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    kept *entries = realloc(s->entries, cap * sizeof *entries);
    CHECK_ALLOC(entries, cap * sizeof *entries);
    s->entries = entries;
    s->cap = cap;
  }
  if (s->bytes + e.bytes > s->data_cap) {
    size_t cap = s->data_cap ? s->data_cap : (size_t)GROUP_BYTES;
    while (cap < s->bytes + e.bytes) cap *= 2;
    char *data = realloc(s->data, cap);
    CHECK_ALLOC(data, cap);
    s->data = data;
    s->data_cap = cap;
  }
  memcpy(s->data + s->bytes, data, e.bytes);
  s->bytes += e.bytes;
  s->entries[s->n++] = e;
done:
  return rc;
}

static uint64_t rows_of_chunk(const dataset_store *s, uint64_t first) {
  return s->rows_total - first < s->chunk_rows ? s->rows_total - first : s->chunk_rows;
}

static int keep_encoded(void *ctx, uint64_t first, unsigned mask, size_t bytes,
                        const void *data) {
  dataset_store *s = ctx;
  return append(s, (kept){first, rows_of_chunk(s, first), bytes, mask, 1}, data);
}

/* Rows [first, first + rows) of one chunk at `rows_at`, kept raw; `each` around them with the
 * rows counted from `call_row`. */
static int keep_raw(dataset_store *s, uint64_t first, uint64_t rows, const char *rows_at,
                    uint64_t call_row, h5g_io_piece_fn each, void *ctx) {
  int rc = H5G_OK;
  if (rows == 0) goto done;
  if (each) CHECK(each(ctx, first - call_row, rows, 0));
  CHECK(append(s, (kept){first, rows, rows * s->row_bytes, 0, 0}, rows_at));
  if (each) CHECK(each(ctx, first - call_row, rows, 1));
done:
  return rc;
}

/* The caller's piece callback, its rows counted from `shift` rows later. */
typedef struct {
  h5g_io_piece_fn each;
  void *ctx;
  uint64_t shift;
} shifted_fn;

static int shifted_each(void *arg, uint64_t first, uint64_t count, int moved) {
  shifted_fn *f = arg;
  return f->each ? f->each(f->ctx, first + f->shift, count, moved) : H5G_OK;
}

int h5g_gathered_add(h5g_gathered **g, const char *path, const h5g_chunked_source *src,
                     uint64_t row, uint64_t rows, const char *buf, int threads,
                     h5g_io_piece_fn each, void *ctx) {
  int rc = H5G_OK;
  dataset_store *s = NULL;
  CHECK(find_store(g, path, src, &s));
  /* [row, lo): the end of a chunk begun before; [lo, hi): whole chunks (the last one may end
   * the dataset); [hi, end): the start of a chunk ended after. Each of the two ends lies in one
   * chunk. */
  uint64_t cr = s->chunk_rows, end = row + rows;
  uint64_t lo = (row + cr - 1) / cr * cr < end ? (row + cr - 1) / cr * cr : end;
  uint64_t hi = end == s->rows_total ? end : end / cr * cr;
  if (hi < lo) hi = lo;
  CHECK(keep_raw(s, row, lo - row, buf, row, each, ctx));
  if (hi > lo) {
    h5g_chunk_sink sink = {keep_encoded, s};
    shifted_fn shifted = {each, ctx, lo - row};
    CHECK(h5g_chunked_write(src, lo, hi - lo, buf + (lo - row) * s->row_bytes, threads, &sink,
                            shifted_each, &shifted));
  }
  CHECK(keep_raw(s, hi, end - hi, buf + (hi - row) * s->row_bytes, row, each, ctx));
done:
  return rc;
}

/* ---- the writer --------------------------------------------------------------------------- */

/* A message: entries [begin, end) of one rank, `bytes` of its data from `at`. */
typedef struct {
  uint64_t first; /* the first row of its first entry: messages are stored in this order */
  int rank;
  size_t begin, end;
  uint64_t at, bytes;
} message;

/* The messages of a rank's entries, in order: entries of consecutive rows up to GROUP_BYTES
 * (or one larger entry). Senders and rank 0 cut them alike. Appends to *list (capacity: one
 * message per entry suffices). */
static void cut_messages(const kept *entries, size_t n, int rank, message *list, size_t *count) {
  uint64_t at = 0;
  for (size_t i = 0; i < n;) {
    message m = {entries[i].first, rank, i, i, at, 0};
    while (m.end < n && (m.end == m.begin || (m.bytes + entries[m.end].bytes <= GROUP_BYTES &&
                                              entries[m.end].first == entries[m.end - 1].first +
                                                                         entries[m.end - 1].rows)))
      m.bytes += entries[m.end++].bytes;
    list[(*count)++] = m;
    at += m.bytes;
    i = m.end;
  }
}

static int by_first_row(const void *a, const void *b) {
  const message *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* Rank 0's state for one dataset: its HDF5 handle, where the rows written so far end, and the
 * chunk being put together from raw rows. */
typedef struct {
  const dataset_store *s;
  hid_t dset;
  const char *file;
  int status;          /* the first failure; later messages are still received, not written */
  uint64_t next_row;   /* rows [0, next_row) are written or being put together */
  char *raw;           /* the chunk put together (raw_bytes), its rows [raw_first, next_row) */
  uint64_t raw_first;
  char *encoded;       /* its encoding */
  size_t raw_bytes, encoded_cap;
  h5g_filter_ctx *ctx;
} writer;

/* One entry, at `data`: an encoded chunk is written; raw rows join the chunk being put
 * together, which is encoded (zeros past the dataset's end, as HDF5 stores edge chunks) and
 * written once its rows are all there. Entries come in row order, without gaps. */
static int take_entry(writer *w, const kept *e, const char *data) {
  int rc = H5G_OK;
  const dataset_store *s = w->s;
  const char *why = NULL;
  if (e->first != w->next_row || e->rows == 0 || e->first / s->chunk_rows !=
                                                     (e->first + e->rows - 1) / s->chunk_rows)
    H5G_FAIL(H5G_ERR_RUNTIME, "rows %llu to %llu do not follow row %llu (%s)",
             (unsigned long long)e->first, (unsigned long long)(e->first + e->rows),
             (unsigned long long)w->next_row, s->where);
  w->next_row += e->rows;
  if (e->encoded) {
    CHECK(h5g_chunked_store(w->dset, e->first, e->mask, e->bytes, data, s->where));
    goto done;
  }
  if (e->first % s->chunk_rows == 0) w->raw_first = e->first;
  memcpy(w->raw + (e->first - w->raw_first) * s->row_bytes, data, e->bytes);
  uint64_t chunk_rows = rows_of_chunk(s, w->raw_first);
  if (w->next_row - w->raw_first < chunk_rows) goto done;
  memset(w->raw + chunk_rows * s->row_bytes, 0, w->raw_bytes - chunk_rows * s->row_bytes);
  size_t bytes = 0;
  unsigned mask = 0;
  if (h5g_filters_encode(w->ctx, w->raw, w->raw_bytes, w->encoded, w->encoded_cap, &bytes, &mask,
                         &why) != 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot encode the chunk at row %llu: %s (%s)",
             (unsigned long long)w->raw_first, why ? why : "?", s->where);
  CHECK(h5g_chunked_store(w->dset, w->raw_first, mask, bytes, w->encoded, s->where));
done:
  return rc;
}

/* Rank 0: one message's entries (all[m->begin, m->end) of its rank) at `data`. */
static void take_message(writer *w, const kept *entries, const message *m, const char *data) {
  if (w->status != H5G_OK) return;
  w->status = h5g_files_check_growth(w->file, m->bytes + (1ull << 20));
  for (size_t i = m->begin; i < m->end && w->status == H5G_OK; data += entries[i++].bytes)
    w->status = take_entry(w, &entries[i], data);
}

/* Rank 0, for one dataset: every rank's entries (counts[r] of them from displs[r] of `all`) cut
 * into messages in row order, two buffers to receive them in, and the writer's own buffers. A
 * buffer of the writer that is missing only fails the dataset (w->status); the messages still
 * come, so those to receive them in are agreed on before any rank sends. */
typedef struct {
  const kept *all;
  const int *displs;
  message *list;
  size_t n;
  char *staging[2];
} plan;

static int prepare(writer *w, plan *p, const kept *all, const int *counts, const int *displs,
                   int size) {
  const dataset_store *s = w->s;
  size_t total = (size_t)displs[size - 1] + (size_t)counts[size - 1];
  uint64_t most = 0;
  *p = (plan){.all = all, .displs = displs};
  w->raw_bytes = (size_t)s->chunk_rows * s->row_bytes;
  w->encoded_cap = h5g_filters_bound(&s->pipeline, w->raw_bytes);
  w->raw = malloc(w->raw_bytes);
  w->encoded = malloc(w->encoded_cap);
  w->ctx = h5g_filter_ctx_new(&s->pipeline, w->raw_bytes);
  if (w->status == H5G_OK && (!w->raw || !w->encoded || !w->ctx))
    w->status = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "out of host memory (%s)",
                              s->where);
  if (!(p->list = malloc((total ? total : 1) * sizeof *p->list))) return 0;
  for (int r = 0; r < size; r++)
    cut_messages(all + displs[r], (size_t)counts[r], r, p->list, &p->n);
  qsort(p->list, p->n, sizeof *p->list, by_first_row);
  for (size_t i = 0; i < p->n; i++)
    if (p->list[i].rank != 0 && p->list[i].bytes > most) most = p->list[i].bytes;
  for (int b = 0; b < 2 && most; b++)
    if (!(p->staging[b] = malloc(most))) return 0;
  return 1;
}

static void release(writer *w, plan *p) {
  h5g_filter_ctx_free(w->ctx);
  free(w->encoded);
  free(w->raw);
  free(p->staging[0]);
  free(p->staging[1]);
  free(p->list);
}

/* Rank 0: the messages in row order, those of other ranks received into the two buffers (the
 * next one arrives while one is written), every entry stored. */
static int store_all(writer *w, MPI_Comm comm, plan *p) {
  int rc = H5G_OK, buffer = 0;
  MPI_Request pending = MPI_REQUEST_NULL;
  for (size_t i = 0; i < p->n; i++) {
    const message *m = &p->list[i];
    const kept *entries = p->all + p->displs[m->rank];
    if (m->rank == 0) {
      take_message(w, entries, m, w->s->data + m->at);
      continue;
    }
    if (pending == MPI_REQUEST_NULL) /* the first message from another rank */
      CHECK_MPI(MPI_Irecv(p->staging[buffer], (int)m->bytes, MPI_BYTE, m->rank, TAG, comm,
                          &pending));
    CHECK_MPI(MPI_Wait(&pending, MPI_STATUS_IGNORE));
    char *data = p->staging[buffer];
    size_t next = i + 1;
    while (next < p->n && p->list[next].rank == 0) next++;
    if (next < p->n) {
      buffer ^= 1;
      CHECK_MPI(MPI_Irecv(p->staging[buffer], (int)p->list[next].bytes, MPI_BYTE,
                          p->list[next].rank, TAG, comm, &pending));
    }
    take_message(w, entries, m, data);
  }
  if (w->status == H5G_OK && w->next_row != w->s->rows_total)
    w->status = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                              "rows %llu to %llu were not written (%s)",
                              (unsigned long long)w->next_row,
                              (unsigned long long)w->s->rows_total, w->s->where);
done:
  return rc;
}

/* Collective, one dataset: the entries reach rank 0 (MPI_Gatherv), then every other rank sends
 * its bytes message by message and rank 0 stores them (`status`: rank 0's first failure). */
static int gather_dataset(MPI_Comm comm, hid_t file_id, const char *file, const dataset_store *s,
                          int *status) {
  int rc = H5G_OK, size, rank;
  MPI_Datatype entry_type = MPI_DATATYPE_NULL;
  kept *all = NULL;
  int *counts = NULL, *displs = NULL;
  message *list = NULL;
  MPI_Request *sends = NULL;
  writer w = {.s = s, .dset = H5I_INVALID_HID, .file = file, .status = *status};
  plan p = {0};
  size_t n = 0;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  long long mine = (long long)s->n, total = 0;
  CHECK_MPI(MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, comm));
  if (total > INT_MAX)
    H5G_FAIL(H5G_ERR_RUNTIME, "%lld chunks: too many to gather (%s)", total, s->where);
  int my_count = (int)s->n;
  if (rank == 0) {
    counts = malloc((size_t)size * sizeof *counts);
    displs = malloc((size_t)size * sizeof *displs);
    all = malloc((size_t)(total ? total : 1) * sizeof *all);
  } else {
    list = malloc((s->n ? s->n : 1) * sizeof *list);
    sends = malloc((s->n ? s->n : 1) * sizeof *sends);
  }
  CHECK(h5g_agree_alloc(comm, rank == 0 ? counts && displs && all : list && sends,
                        (size_t)total * sizeof *all));
  CHECK_MPI(MPI_Type_contiguous((int)sizeof(kept), MPI_BYTE, &entry_type));
  CHECK_MPI(MPI_Type_commit(&entry_type));
  CHECK_MPI(MPI_Gather(&my_count, 1, MPI_INT, counts, 1, MPI_INT, 0, comm));
  for (int r = 0; rank == 0 && r < size; r++) displs[r] = r ? displs[r - 1] + counts[r - 1] : 0;
  CHECK_MPI(MPI_Gatherv(s->entries, my_count, entry_type, all, counts, displs, entry_type, 0,
                        comm));
  int ready = rank != 0 || prepare(&w, &p, all, counts, displs, size);
  CHECK(h5g_agree_alloc(comm, ready, (size_t)s->chunk_rows * s->row_bytes));
  if (rank == 0) {
    if (w.status == H5G_OK && (w.dset = H5Dopen2(file_id, s->path, H5P_DEFAULT)) < 0)
      w.status = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                               "cannot open the dataset to write its chunks (%s)", s->where);
    CHECK(store_all(&w, comm, &p));
    goto done;
  }
  cut_messages(s->entries, s->n, rank, list, &n);
  for (size_t i = 0; i < n; i++)
    CHECK_MPI(MPI_Isend(s->data + list[i].at, (int)list[i].bytes, MPI_BYTE, 0, TAG, comm,
                        &sends[i]));
  CHECK_MPI(h5g_wait_all((int)n, sends));
done:
  *status = w.status;
  CLOSE_ID(H5Dclose, w.dset);
  release(&w, &p);
  if (entry_type != MPI_DATATYPE_NULL) MPI_Type_free(&entry_type);
  free(sends);
  free(list);
  free(all);
  free(displs);
  free(counts);
  return rc;
}

int h5g_gathered_write(MPI_Comm comm, h5g_gathered *g, const char *file) {
  int rc = H5G_OK, rank, sets = g ? g->n : 0, most = 0, least = 0, status = H5G_OK;
  hid_t file_id = H5I_INVALID_HID;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Allreduce(&sets, &most, 1, MPI_INT, MPI_MAX, comm));
  CHECK_MPI(MPI_Allreduce(&sets, &least, 1, MPI_INT, MPI_MIN, comm));
  if (most == 0) goto done;
  if (least != most)
    status = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                           "ranks kept chunks of different datasets (%s)", file);
  if (status == H5G_OK && rank == 0 && (file_id = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT)) < 0)
    status = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                           "cannot open the file to write its chunks (%s)", file);
  CHECK(h5g_agree(comm, status));
  for (int i = 0; i < sets; i++) CHECK(gather_dataset(comm, file_id, file, &g->sets[i], &status));
  if (file_id >= 0 && H5Fclose(file_id) < 0 && status == H5G_OK)
    status = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                           "cannot flush and close the file%s (%s)",
                           h5g_io_write_reason_internal(file, errno), file);
  file_id = H5I_INVALID_HID;
  CHECK(h5g_agree(comm, status));
done:
  CLOSE_ID(H5Fclose, file_id);
  h5g_gathered_free(g);
  return rc;
}
