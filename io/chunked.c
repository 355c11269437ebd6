#include "io/chunked.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/direct.h"
#include "io/h5io_pkg.h"

enum { MAX_THREADS = 256 };
/* Per-thread buffers stay below this in all (a chunk of 1 GiB, which h5py allows, gets fewer
 * threads rather than 16 GiB of buffers). */
#define THREAD_BUFFERS_MAX ((size_t)1 << 30)

typedef struct {
  uint64_t first; /* the chunk's first row */
  size_t bytes;   /* stored bytes; reading, 0: never written, read through HDF5 */
  unsigned mask;  /* filters skipped for this chunk */
  size_t at;      /* reading: where its stored bytes lie in the piece's buffer */
  int in_place;   /* reading: an unfiltered chunk read straight into the slice buffer */
} chunk;

struct h5g_chunk_index {
  size_t n;
  chunk chunks[];
};

/* One piece: its chunks and the rows of them that are wanted, shared by the threads. Reading,
 * the calling thread fetches the chunks' stored bytes through HDF5 (H5Dread_chunk: one index
 * look-up each) into `stored` in order while the threads decode those already fetched. */
typedef struct {
  const h5g_chunked_source *src;
  char *stored;
  chunk *chunks;
  size_t nchunks, next; /* next: the next chunk to take (atomic) */
  size_t fetched;       /* reading: chunks [0, fetched) are in `stored` (under lock) */
  pthread_cond_t more;  /* fetched grew, or a failure */
  uint64_t row, rows;   /* rows wanted (or written), and where row `row` lies: buf */
  char *buf;
  int writing;
  char *encoded;        /* writing: chunk i's encoded bytes at encoded + i * encoded_cap */
  size_t encoded_cap;
  const h5g_chunk_sink *sink; /* writing: where the encoded chunks go, in order */
  pthread_mutex_t lock;
  const char *why;     /* the first failure: its reason, chunk (NULL: none) and errno */
  const chunk *failed;
  int error;
} piece;

static size_t raw_chunk_bytes(const h5g_chunked_source *src) {
  return (size_t)src->chunk_rows * src->row_bytes;
}

static void fail(piece *p, const chunk *c, const char *why, int error) {
  pthread_mutex_lock(&p->lock);
  if (!p->why) {
    p->failed = c;
    p->why = why;
    p->error = error;
  }
  pthread_cond_broadcast(&p->more);
  pthread_mutex_unlock(&p->lock);
}

/* Reading: waits until chunk i is fetched; 0 when a failure came first. */
static int wait_fetched(piece *p, size_t i) {
  pthread_mutex_lock(&p->lock);
  while (p->fetched <= i && !p->why) pthread_cond_wait(&p->more, &p->lock);
  int ready = p->fetched > i;
  pthread_mutex_unlock(&p->lock);
  return ready;
}

/* The wanted rows [*lo, *hi) of chunk c, and where they go in p->buf. */
static char *wanted_rows(const piece *p, const chunk *c, uint64_t *lo, uint64_t *hi) {
  uint64_t end = c->first + p->src->chunk_rows, wanted_end = p->row + p->rows;
  *lo = c->first > p->row ? c->first : p->row;
  *hi = end < wanted_end ? end : wanted_end;
  return p->buf + (*lo - p->row) * p->src->row_bytes;
}

/* One fetched chunk: the rows of it that are wanted land at their place in p->buf, copied from
 * an unfiltered chunk (one read in place needs nothing), decoded there from a filtered one when
 * it lies wholly inside the wanted rows, else into `raw` and the wanted rows copied; then
 * converted there to the memory type. */
static void read_chunk(piece *p, const chunk *c, h5g_filter_ctx *ctx, char *raw) {
  const h5g_chunked_source *src = p->src;
  size_t row_bytes = src->row_bytes, raw_bytes = raw_chunk_bytes(src);
  uint64_t lo, hi;
  char *to = wanted_rows(p, c, &lo, &hi), *stored = p->stored + c->at;
  const char *why = NULL;
  int whole = c->first >= p->row && c->first + src->chunk_rows <= p->row + p->rows;
  if (!c->in_place && src->pipeline.count == 0) { /* its size checked when it was fetched */
    memcpy(to, stored + (lo - c->first) * row_bytes, (hi - lo) * row_bytes);
  } else if (!c->in_place) {
    if (h5g_filters_decode(ctx, c->mask, stored, c->bytes, whole ? to : raw, raw_bytes, &why)) {
      fail(p, c, why ? why : "it does not decode", 0);
      return;
    }
    if (!whole) memcpy(to, raw + (lo - c->first) * row_bytes, (hi - lo) * row_bytes);
  }
  h5g_convert_apply(&src->convert, to, (hi - lo) * row_bytes);
}

/* One chunk to write: its rows (the dataset's last chunk padded with zeros to the chunk's size,
 * as HDF5 stores edge chunks whole) encoded into its place in p->encoded. */
static void encode_chunk(piece *p, chunk *c, h5g_filter_ctx *ctx, char *raw) {
  const h5g_chunked_source *src = p->src;
  size_t row_bytes = src->row_bytes, raw_bytes = raw_chunk_bytes(src);
  uint64_t rows = src->rows_total - c->first < src->chunk_rows ? src->rows_total - c->first
                                                                : src->chunk_rows;
  const char *from = p->buf + (c->first - p->row) * row_bytes, *why = NULL;
  if (rows < src->chunk_rows) {
    memcpy(raw, from, rows * row_bytes);
    memset(raw + rows * row_bytes, 0, raw_bytes - rows * row_bytes);
    from = raw;
  }
  char *to = p->encoded + (size_t)(c - p->chunks) * p->encoded_cap;
  if (h5g_filters_encode(ctx, from, raw_bytes, to, p->encoded_cap, &c->bytes, &c->mask, &why) != 0)
    fail(p, c, why ? why : "it does not encode", 0);
}

static size_t stored_max(const h5g_chunked_source *src) { return 2 * raw_chunk_bytes(src) + 65536; }

static void *move_chunks(void *arg) {
  piece *p = arg;
  size_t raw_bytes = raw_chunk_bytes(p->src);
  h5g_filter_ctx *ctx = NULL;
  char *raw = NULL;
  if (p->src->pipeline.count > 0 &&
      (!(ctx = h5g_filter_ctx_new(&p->src->pipeline, raw_bytes)) || !(raw = malloc(raw_bytes)))) {
    fail(p, NULL, "out of host memory", ENOMEM);
    goto done;
  }
  for (;;) {
    size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
    if (i >= p->nchunks) break;
    if (p->writing) encode_chunk(p, &p->chunks[i], ctx, raw);
    else if (!wait_fetched(p, i)) break;
    else if (p->chunks[i].bytes) read_chunk(p, &p->chunks[i], ctx, raw);
  }
done:
  free(raw);
  h5g_filter_ctx_free(ctx);
  return NULL;
}

/* Reading, on the calling thread (HDF5 is not thread-safe): the stored bytes of each written
 * chunk of the piece, in order, through H5Dread_chunk, whose look-up by coordinate costs one
 * index search (H5Dget_chunk_info_by_coord walks the whole index in HDF5 1.10). */
static void fetch_chunks(piece *p) {
  const h5g_chunked_source *src = p->src;
  hsize_t offset[H5S_MAX_RANK] = {0};
  for (size_t i = 0; i < p->nchunks; i++) {
    chunk *c = &p->chunks[i];
    uint64_t lo, hi;
    char *to = wanted_rows(p, c, &lo, &hi);
    uint32_t mask = 0;
    if (c->bytes && src->pipeline.count == 0 && c->bytes != raw_chunk_bytes(src)) {
      fail(p, c, "its stored size is not the chunk's size", 0);
      return;
    }
    c->in_place = src->pipeline.count == 0 && hi - lo == src->chunk_rows;
    offset[0] = c->first;
    if (c->bytes && H5Dread_chunk(src->dset, H5P_DEFAULT, offset, &mask,
                                  c->in_place ? to : p->stored + c->at) < 0) {
      fail(p, c, "HDF5 cannot read its stored bytes", 0);
      return;
    }
    c->mask = mask;
    pthread_mutex_lock(&p->lock);
    p->fetched = i + 1;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
  }
}

/* The chunks overlapping rows [row, row + rows), their first rows set, nothing looked up. */
static int new_index(const h5g_chunked_source *src, uint64_t row, uint64_t rows,
                     h5g_chunk_index **index) {
  int rc = H5G_OK;
  uint64_t first_chunk = row / src->chunk_rows;
  size_t n = rows ? (size_t)((row + rows - 1) / src->chunk_rows - first_chunk + 1) : 0;
  h5g_chunk_index *made = calloc(1, sizeof *made + n * sizeof(chunk));
  CHECK_ALLOC(made, sizeof *made + n * sizeof(chunk));
  made->n = n;
  for (size_t i = 0; i < n; i++) made->chunks[i].first = (first_chunk + i) * src->chunk_rows;
  *index = made;
done:
  return rc;
}

/* One look-up per chunk (H5Dget_chunk_storage_size: one index search, where HDF5 1.10's
 * H5Dget_chunk_info_by_coord walks the index up to the chunk, so that finding every chunk grows
 * with the square of their count). Where a chunk lies is HDF5's to know: it reads the chunk
 * (H5Dread_chunk), and refuses a place past its end of file. */
int h5g_chunked_index(const h5g_chunked_source *src, uint64_t row, uint64_t rows,
                      h5g_chunk_index **index, uint64_t *counted) {
  int rc = H5G_OK;
  hsize_t offset[H5S_MAX_RANK] = {0};
  h5g_chunk_index *made = NULL;
  CHECK(new_index(src, row, rows, &made));
  *counted = 0;
  for (size_t i = 0; i < made->n; i++) {
    chunk *c = &made->chunks[i];
    hsize_t bytes = 0;
    offset[0] = c->first;
    if (H5Dget_chunk_storage_size(src->dset, offset, &bytes) < 0)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot read the chunk index at row %llu: file corrupt? (%s)",
               (unsigned long long)c->first, src->where);
    c->bytes = (size_t)bytes;
    if (bytes == 0) continue;
    if (bytes > stored_max(src))
      H5G_FAIL(H5G_ERR_RUNTIME, "corrupt chunk at row %llu: %llu stored bytes (%s)",
               (unsigned long long)c->first, (unsigned long long)bytes, src->where);
    if (c->first >= row) (*counted)++;
  }
  *index = made;
  made = NULL;
done:
  free(made);
  return rc;
}

int64_t h5g_chunked_allocated(const h5g_chunked_source *src) {
  hsize_t n = 0;
  hid_t space = H5Dget_space(src->dset); /* HDF5 1.10.8 takes no H5S_ALL here */
  herr_t status = space < 0 ? -1 : H5Dget_num_chunks(src->dset, space, &n);
  if (space >= 0) H5Sclose(space);
  return status < 0 ? -1 : (int64_t)n;
}

void h5g_chunked_index_free(h5g_chunk_index *index) { free(index); }

/* The threads over the chunks of one piece; the first failure, if any, as an error. */
static int run_threads(piece *p, int threads) {
  int rc = H5G_OK;
  pthread_t ids[MAX_THREADS];
  int started[MAX_THREADS] = {0};
  const char *verb = p->writing ? "write" : "read";
  if ((size_t)threads > p->nchunks) threads = (int)p->nchunks;
  for (int t = 1; t < threads; t++) started[t] = pthread_create(&ids[t], NULL, move_chunks, p) == 0;
  if (!p->writing) fetch_chunks(p);
  move_chunks(p);
  for (int t = 1; t < threads; t++)
    if (started[t]) pthread_join(ids[t], NULL);
  if (p->why && !p->failed)
    H5G_FAIL(H5G_ERR_RUNTIME, "%s: cannot %s chunks (%s)", p->why, verb, p->src->where);
  if (p->why)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot %s the chunk at row %llu: %s%s%s (%s)", verb,
             (unsigned long long)p->failed->first, p->why, p->error ? ": " : "",
             p->error ? strerror(p->error) : "", p->src->where);
done:
  return rc;
}

/* After the threads, on the calling thread (HDF5 is not thread-safe): reading, the chunks never
 * written, through HDF5; writing, every chunk of the piece, in order. */
static int finish_piece(piece *p) {
  int rc = H5G_OK;
  const h5g_chunked_source *src = p->src;
  for (size_t i = 0; i < p->nchunks; i++) {
    const chunk *c = &p->chunks[i];
    if (p->writing)
      CHECK(p->sink->store(p->sink->ctx, c->first, c->mask, c->bytes,
                           p->encoded + i * p->encoded_cap));
    if (p->writing || c->bytes) continue;
    size_t last = i; /* one HDF5 read for a run of chunks never written (a sparse dataset) */
    while (last + 1 < p->nchunks && p->chunks[last + 1].bytes == 0) last++;
    uint64_t lo = c->first > p->row ? c->first : p->row;
    uint64_t end = p->chunks[last].first + src->chunk_rows;
    uint64_t hi = end < p->row + p->rows ? end : p->row + p->rows;
    CHECK(src->fallback(src->fallback_ctx, lo, hi - lo, p->buf + (lo - p->row) * src->row_bytes));
    i = last;
  }
done:
  return rc;
}

/* The chunks of the piece that starts at chunk `at`: at most `most`, and reading, as many as fit
 * `stored_cap` stored bytes (at least one: none holds more than stored_max), each given its
 * place there. */
static size_t piece_chunks_at(h5g_chunk_index *index, size_t at, size_t most, int writing,
                              size_t stored_cap) {
  size_t n = index->n - at < most ? index->n - at : most, used = 0;
  for (size_t i = 0; !writing && i < n; i++) {
    chunk *c = &index->chunks[at + i];
    if (i > 0 && c->bytes > stored_cap - used) return i;
    c->at = used;
    used += c->bytes;
  }
  return n;
}

/* Rows [row, row + rows) of the chunks of `index`, piece by piece (whole chunks, about
 * H5G_DIRECT_PIECE_BYTES each), `each` called around each piece. */
static int move_pieces(const h5g_chunked_source *src, h5g_chunk_index *index, uint64_t row,
                       uint64_t rows, char *buf, const h5g_chunk_sink *sink, int threads,
                       h5g_io_piece_fn each, void *ctx) {
  int rc = H5G_OK, writing = sink != NULL;
  size_t raw_bytes = raw_chunk_bytes(src);
  size_t encoded_cap = h5g_filters_bound(&src->pipeline, raw_bytes);
  uint64_t piece_bytes = src->max_piece_bytes < H5G_DIRECT_PIECE_BYTES ? src->max_piece_bytes
                                                                     : H5G_DIRECT_PIECE_BYTES;
  size_t piece_chunks = piece_bytes / raw_bytes ? (size_t)(piece_bytes / raw_bytes) : 1;
  size_t per_thread = 3 * raw_bytes, stored_cap = (size_t)piece_bytes + stored_max(src);
  char *encoded = NULL, *stored = NULL;
  if (threads < 1) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if ((size_t)threads * per_thread > THREAD_BUFFERS_MAX)
    threads = per_thread >= THREAD_BUFFERS_MAX ? 1 : (int)(THREAD_BUFFERS_MAX / per_thread);
  if (rows == 0) goto done;
  if (writing) {
    if (piece_chunks > index->n) piece_chunks = index->n;
    encoded = malloc(piece_chunks * encoded_cap);
    CHECK_ALLOC(encoded, piece_chunks * encoded_cap);
  } else {
    stored = malloc(stored_cap);
    CHECK_ALLOC(stored, stored_cap);
  }
  for (size_t at = 0, n; at < index->n; at += n) {
    /* chunks [at, at + n) of the index, and of their rows those wanted */
    n = piece_chunks_at(index, at, piece_chunks, writing, stored_cap);
    uint64_t first = index->chunks[at].first > row ? index->chunks[at].first : row;
    uint64_t end = index->chunks[at + n - 1].first + src->chunk_rows;
    if (end > row + rows) end = row + rows;
    piece p = {.src = src, .stored = stored, .chunks = index->chunks + at, .nchunks = n,
               .row = first, .rows = end - first, .buf = buf + (first - row) * src->row_bytes,
               .writing = writing, .encoded = encoded, .encoded_cap = encoded_cap,
               .sink = sink};
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.more, NULL);
    if (each) rc = each(ctx, first - row, end - first, 0);
    if (rc == H5G_OK) rc = run_threads(&p, threads);
    if (rc == H5G_OK) rc = finish_piece(&p);
    if (rc == H5G_OK && each) rc = each(ctx, first - row, end - first, 1);
    pthread_cond_destroy(&p.more);
    pthread_mutex_destroy(&p.lock);
    if (rc != H5G_OK) goto done;
  }
done:
  free(stored);
  free(encoded);
  return rc;
}

int h5g_chunked_read(const h5g_chunked_source *src, h5g_chunk_index *index, uint64_t row,
                     uint64_t rows, char *buf, int threads, h5g_io_piece_fn each, void *ctx) {
  return move_pieces(src, index, row, rows, buf, NULL, threads, each, ctx);
}

int h5g_chunked_store(hid_t dset, uint64_t first, unsigned mask, size_t bytes, const void *data,
                      const char *where) {
  int rc = H5G_OK;
  hsize_t offset[H5S_MAX_RANK] = {0};
  char file[PATH_MAX] = "";
  offset[0] = first;
  if (H5Dwrite_chunk(dset, H5P_DEFAULT, mask, offset, bytes, data) < 0) {
    int error = errno;
    H5Fget_name(dset, file, sizeof file);
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot write the chunk at row %llu%s (%s)",
             (unsigned long long)first, h5g_io_write_reason_internal(file, error), where);
  }
done:
  return rc;
}

static int store_through_hdf5(void *ctx, uint64_t first, unsigned mask, size_t bytes,
                              const void *data) {
  const h5g_chunked_source *src = ctx;
  return h5g_chunked_store(src->dset, first, mask, bytes, data, src->where);
}

int h5g_chunked_write(const h5g_chunked_source *src, uint64_t row, uint64_t rows, const char *buf,
                      int threads, const h5g_chunk_sink *sink, h5g_io_piece_fn each, void *ctx) {
  int rc = H5G_OK;
  h5g_chunk_index *index = NULL;
  if (row % src->chunk_rows || (row + rows != src->rows_total && (row + rows) % src->chunk_rows))
    H5G_FAIL(H5G_ERR_RUNTIME, "rows %llu to %llu are not whole chunks (%s)",
             (unsigned long long)row, (unsigned long long)(row + rows), src->where);
  CHECK(new_index(src, row, rows, &index));
  h5g_chunk_sink to_hdf5 = {store_through_hdf5, (void *)src};
  CHECK(move_pieces(src, index, row, rows, (char *)buf, sink ? sink : &to_hdf5, threads, each,
                    ctx));
done:
  free(index);
  return rc;
}
