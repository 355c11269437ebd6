#include "mpi/gather_rows.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/parallel.h"
#include "mpi/agree.h"
#include "mpi/exchange.h"
#include "mpi/topology.h"

enum {
  /* Row copies (or indices grouped) a thread takes at least: fewer are not worth a thread. */
  MIN_COPIES_PER_THREAD = 1 << 16,
  /* How many copies ahead the source (and a scattered destination) row is prefetched: the copies
   * are random reads of a table larger than the caches, bound by memory latency, not bandwidth. */
  PREFETCH_AHEAD = 16
};

struct h5g_row_route {
  MPI_Comm comm;
  int size, threads;
  const uint64_t *src_index;
  uint64_t n_out, first, mine;           /* this rank holds table rows [first, first + mine) */
  uint64_t *tables;       /* 3 size + 1: each rank's first table row (then n_total), the counts */
  uint64_t *fetch_counts, *serve_counts; /* [size] each: rows fetched from, served to, each rank */
  uint64_t n_fetch, n_serve;
  uint64_t *fetch_positions; /* n_fetch: the output row of each row fetched, grouped by owner */
  uint64_t *serve_rows;      /* n_serve: the local rows served, grouped by the rank served */
  char *moving;              /* a move's rows served, then those fetched */
  size_t moving_bytes;
};

static int parts_for(uint64_t n, int threads) {
  return h5g_parts(n, MIN_COPIES_PER_THREAD, threads < H5G_MAX_PARTS ? threads : H5G_MAX_PARTS);
}

/* Row copies dst[to[k]] = src[from[k] - first] for k < n. `from` NULL: k; `to` NULL: k. A
 * source row outside src's `rows` is another rank's: skipped. */
typedef struct {
  const char *src;
  char *dst;
  size_t row_bytes;
  const uint64_t *from, *to;
  uint64_t first, rows, n;
} row_copies;

static void copy_rows_part(void *arg, int part, int parts) {
  row_copies *c = arg;
  size_t begin, end;
  h5g_share(c->n, part, parts, &begin, &end);
  for (size_t k = begin; k < end; k++) {
    if (k + PREFETCH_AHEAD < end) {
      uint64_t ahead = c->from ? c->from[k + PREFETCH_AHEAD] - c->first : k + PREFETCH_AHEAD;
      if (ahead < c->rows) __builtin_prefetch(c->src + ahead * c->row_bytes);
      if (c->to) __builtin_prefetch(c->dst + c->to[k + PREFETCH_AHEAD] * c->row_bytes, 1);
    }
    uint64_t row = c->from ? c->from[k] - c->first : k; /* below first: wraps, so outside */
    if (row >= c->rows) continue;
    memcpy(c->dst + (c->to ? c->to[k] : k) * c->row_bytes, c->src + row * c->row_bytes,
           c->row_bytes);
  }
}

static void copy_rows(row_copies *c, int threads) {
  h5g_parallel(parts_for(c->n, threads), copy_rows_part, c);
}

/* The rank whose share holds global row `index`: a guess from the even spread, mended against
 * the shares' first rows (an index past the table goes to the last rank, which refuses it). */
typedef struct {
  const uint64_t *begin; /* size + 1: each rank's first table row, then n_total */
  double scale;          /* size / n_total */
  int size;
} owners;

static int owner_of(const owners *o, uint64_t index) {
  double guess = (double)index * o->scale;
  int r = guess < (double)o->size ? (int)guess : o->size - 1;
  while (r > 0 && o->begin[r] > index) r--;
  while (r + 1 < o->size && o->begin[r + 1] <= index) r++;
  return r;
}

/* The requests to other ranks grouped by owner, in output order within a group, by several
 * parts: a first pass counts each part's requests to each rank (`requests` NULL), a second one,
 * from each part's cursors, fills them in. */
typedef struct {
  const h5g_row_route *route;
  const owners *owners;
  uint64_t *counts; /* [parts][stride]: each part's requests to each rank, then its cursors */
  size_t stride;    /* size rounded up to whole cache lines: no two parts write one line */
  uint64_t *requests, *positions;
} grouping;

static void group_part(void *arg, int part, int parts) {
  grouping *g = arg;
  const h5g_row_route *rt = g->route;
  uint64_t *mine = g->counts + (size_t)part * g->stride;
  size_t begin, end;
  h5g_share(rt->n_out, part, parts, &begin, &end);
  for (size_t i = begin; i < end; i++) {
    uint64_t index = rt->src_index[i];
    if (index - rt->first < rt->mine) continue; /* copied in place */
    uint64_t slot = mine[owner_of(g->owners, index)]++;
    if (g->requests) {
      g->requests[slot] = index;
      g->positions[slot] = i;
    }
  }
}

/* The requests received made rows of this rank's share (from `first`); a row outside it is an
 * internal error, counted in `bad`. */
typedef struct {
  uint64_t *rows, n, first, mine;
  int bad;
} localizing;

static void localize_part(void *arg, int part, int parts) {
  localizing *l = arg;
  size_t begin, end;
  h5g_share(l->n, part, parts, &begin, &end);
  for (size_t k = begin; k < end; k++) {
    l->rows[k] -= l->first;
    if (l->rows[k] >= l->mine) __atomic_store_n(&l->bad, 1, __ATOMIC_RELAXED);
  }
}

/* Counts the requests of each part to each rank, then makes the counts cursors. */
static void count_requests(h5g_row_route *rt, grouping *g, int parts) {
  size_t size = (size_t)rt->size;
  h5g_parallel(parts, group_part, g);
  for (size_t owner = 0, at = 0; owner < size; owner++) {
    for (int p = 0; p < parts; p++) {
      uint64_t count = g->counts[(size_t)p * g->stride + owner];
      g->counts[(size_t)p * g->stride + owner] = at;
      at += count;
      rt->fetch_counts[owner] += count;
    }
  }
  for (size_t owner = 0; owner < size; owner++) rt->n_fetch += rt->fetch_counts[owner];
}

int h5g_row_route_make(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                       uint64_t n_total, int threads, h5g_row_route **route) {
  int rc = H5G_OK, rank, size;
  h5g_row_route *rt = calloc(1, sizeof *rt);
  uint64_t *begin = NULL, *counts = NULL, *requests = NULL;
  size_t fetch_bytes = 0;
  *route = NULL;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  int parts = parts_for(n_out, threads);
  size_t table_bytes = (3 * (size_t)size + 1) * sizeof(uint64_t);
  begin = calloc(3 * (size_t)size + 1, sizeof(uint64_t));
  size_t stride = ((size_t)size + 7) / 8 * 8; /* 8 counts: a 64-byte line */
  counts = calloc((size_t)parts * stride, sizeof(uint64_t));
  CHECK(h5g_agree_alloc(comm, rt && begin && counts,
                        table_bytes + (size_t)parts * stride * sizeof(uint64_t)));
  for (int r = 0; r <= size; r++)
    begin[r] = h5g_share_begin((uint64_t)r, n_total, (uint64_t)size);
  rt->comm = comm;
  rt->size = size;
  rt->threads = threads;
  rt->src_index = src_index;
  rt->n_out = n_out;
  rt->first = begin[rank];
  rt->mine = begin[rank + 1] - begin[rank];
  rt->tables = begin;
  begin = NULL;
  rt->fetch_counts = rt->tables + size + 1;
  rt->serve_counts = rt->fetch_counts + size;
  owners own = {rt->tables, n_total ? (double)size / (double)n_total : 0, size};
  grouping g = {rt, &own, counts, stride, NULL, NULL};
  count_requests(rt, &g, parts);
  CHECK(h5g_exchange_counts(comm, rt->fetch_counts, rt->serve_counts, 1));
  for (int r = 0; r < size; r++) rt->n_serve += rt->serve_counts[r];
  fetch_bytes = rt->n_fetch * sizeof(uint64_t);
  size_t serve_bytes = rt->n_serve * sizeof(uint64_t);
  requests = malloc(fetch_bytes ? fetch_bytes : 1);
  rt->fetch_positions = malloc(fetch_bytes ? fetch_bytes : 1);
  rt->serve_rows = malloc(serve_bytes ? serve_bytes : 1);
  CHECK(h5g_agree_alloc(comm, requests && rt->fetch_positions && rt->serve_rows,
                        2 * fetch_bytes + serve_bytes));
  g.requests = requests;
  g.positions = rt->fetch_positions;
  h5g_parallel(parts, group_part, &g);
  CHECK(h5g_exchange(comm, requests, rt->fetch_counts, rt->serve_rows, rt->serve_counts,
                     sizeof(uint64_t)));
  localizing l = {rt->serve_rows, rt->n_serve, rt->first, rt->mine, 0};
  h5g_parallel(parts_for(rt->n_serve, threads), localize_part, &l);
  CHECK(h5g_agree(comm, l.bad ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                              "internal error: a row was asked of the wrong rank")
                              : H5G_OK));
  *route = rt;
  rt = NULL;
done:
  h5g_row_route_free(rt);
  free(begin);
  free(counts);
  free(requests);
  return rc;
}

int h5g_row_route_move(h5g_row_route *rt, const void *local_rows, size_t row_bytes, void *out) {
  int rc = H5G_OK;
  if (row_bytes == 0) goto done; /* rows of zero elements, the same on every rank */
  row_copies local = {local_rows, out, row_bytes, rt->src_index, NULL, rt->first, rt->mine,
                      rt->n_out};
  copy_rows(&local, rt->threads);
  if (rt->size == 1) goto done; /* every row is this rank's: the route has none to move */
  size_t bytes = (rt->n_serve + rt->n_fetch) * row_bytes;
  if (!rt->moving || bytes > rt->moving_bytes) {
    free(rt->moving);
    rt->moving = malloc(bytes ? bytes : 1);
    rt->moving_bytes = rt->moving ? bytes : 0;
  }
  CHECK(h5g_agree_alloc(rt->comm, rt->moving != NULL, bytes));
  char *served = rt->moving, *fetched = rt->moving + rt->n_serve * row_bytes;
  row_copies serve = {local_rows, served, row_bytes, rt->serve_rows, NULL, 0, rt->mine,
                      rt->n_serve};
  copy_rows(&serve, rt->threads);
  CHECK(h5g_exchange(rt->comm, served, rt->serve_counts, fetched, rt->fetch_counts, row_bytes));
  row_copies place = {fetched, out, row_bytes, NULL, rt->fetch_positions, 0, rt->n_fetch,
                      rt->n_fetch};
  copy_rows(&place, rt->threads);
done:
  return rc;
}

uint64_t h5g_row_route_bytes(uint64_t n_local, uint64_t n_out, int size, size_t row_bytes) {
  if (size == 1) return 0;
  uint64_t requests = n_out * sizeof(uint64_t), moving = (n_local + n_out) * row_bytes;
  return (n_local + n_out) * sizeof(uint64_t) + (requests > moving ? requests : moving);
}

void h5g_row_route_free(h5g_row_route *rt) {
  if (!rt) return;
  free(rt->tables);
  free(rt->fetch_positions);
  free(rt->serve_rows);
  free(rt->moving);
  free(rt);
}

int h5g_gather_rows(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                    const void *local_rows, uint64_t n_total, size_t row_bytes, void *out,
                    int threads) {
  int rc = H5G_OK;
  h5g_row_route *route = NULL;
  CHECK(h5g_row_route_make(comm, src_index, n_out, n_total, threads, &route));
  CHECK(h5g_row_route_move(route, local_rows, row_bytes, out));
done:
  h5g_row_route_free(route);
  return rc;
}
