#include "mpi/gather_rows.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/host_memory.h"
#include "base/parallel.h"
#include "mpi/agree.h"
#include "mpi/exchange.h"
#include "mpi/topology.h"

enum {
  /* Row copies (or indices grouped) a thread takes at least: fewer are not worth a thread. */
  MIN_COPIES_PER_THREAD = 1 << 16,
  /* How many copies ahead the source row is prefetched: the copies are random reads of a table
   * larger than the caches, bound by memory latency, not bandwidth. */
  PREFETCH_AHEAD = 16,
  /* What the grouping's per-part counts may take (grouping_parts). */
  GROUP_COUNTS_BYTES = 4 << 20
};

struct h5g_row_route {
  MPI_Comm comm;
  int size, threads;
  const uint64_t *src_index;
  uint64_t n_out, first, mine;           /* this rank holds table rows [first, first + mine) */
  uint64_t *tables;       /* 3 size + 1: each rank's first table row (then n_total), the counts */
  uint64_t *fetch_counts, *serve_counts; /* [size] each: rows fetched from, served to, each rank */
  uint64_t n_fetch, n_serve;
  /* the output's parts (the same for the grouping and each move), of `stride` words each: each
   * part's first fetched row of each owner; the rows fetched from one owner come in output order */
  int parts;
  size_t stride;
  uint64_t *starts;
  uint64_t *requested; /* n_serve: the table rows served, grouped by the rank served */
};

static int parts_for(uint64_t n, int threads) {
  return h5g_parts(n, MIN_COPIES_PER_THREAD, threads < H5G_MAX_PARTS ? threads : H5G_MAX_PARTS);
}

/* Parts of a grouping of n rows into groups whose counts take `stride` words a part: fewer where
 * the counts of every part would pass GROUP_COUNTS_BYTES (thousands of ranks times their runs),
 * so that they stay within the rank's fixed allowance (src/sizing.c, RANK_BASE_BYTES). */
static int grouping_parts(uint64_t n, int threads, size_t stride) {
  int parts = parts_for(n, threads);
  size_t most = GROUP_COUNTS_BYTES / (stride * sizeof(uint64_t));
  return most < 1 ? 1 : (size_t)parts > most ? (int)most : parts;
}

/* Row copies dst[k] = src[from[k] - first] for k < n. A source row outside src's `rows` is
 * another rank's: skipped, and counted. */
typedef struct {
  const char *src;
  char *dst;
  size_t row_bytes;
  const uint64_t *from;
  uint64_t first, rows, n;
  uint64_t skipped;
} row_copies;

static void copy_rows_part(void *arg, int part, int parts) {
  row_copies *c = arg;
  size_t begin, end;
  uint64_t skipped = 0;
  h5g_share(c->n, part, parts, &begin, &end);
  for (size_t k = begin; k < end; k++) {
    if (k + PREFETCH_AHEAD < end) {
      uint64_t ahead = c->from[k + PREFETCH_AHEAD] - c->first;
      if (ahead < c->rows) __builtin_prefetch(c->src + ahead * c->row_bytes);
    }
    uint64_t row = c->from[k] - c->first; /* below first: wraps, so outside */
    if (row >= c->rows) {
      skipped++;
      continue;
    }
    memcpy(c->dst + k * c->row_bytes, c->src + row * c->row_bytes, c->row_bytes);
  }
  if (skipped) __atomic_fetch_add(&c->skipped, skipped, __ATOMIC_RELAXED);
}

static void copy_rows(row_copies *c, int threads) {
  h5g_parallel(parts_for(c->n, threads), copy_rows_part, c);
}

/* The group of table row `index`, of groups that begin at begin[0 .. count) (ascending; then
 * n_total): a guess from the even spread, mended against the begins (an index past the table
 * goes to the last group, whose checks refuse it). */
typedef struct {
  const uint64_t *begin;
  double scale; /* count / n_total */
  size_t count;
} groups;

static size_t group_of(const groups *o, uint64_t index) {
  double guess = (double)index * o->scale;
  size_t g = guess < (double)o->count ? (size_t)guess : o->count - 1;
  while (g > 0 && o->begin[g] > index) g--;
  while (g + 1 < o->count && o->begin[g + 1] <= index) g++;
  return g;
}

static groups owners_of(const h5g_row_route *rt) {
  uint64_t n_total = rt->tables[rt->size];
  return (groups){rt->tables, n_total ? (double)rt->size / (double)n_total : 0, (size_t)rt->size};
}

/* The output rows of other ranks, by parts of the output (the same parts for the grouping and
 * every move): a first pass counts each part's rows of each owner; a second one, with
 * `requests`, fills in the source rows each owner is asked for, grouped by owner, in output
 * order within a group, from each part's first slot of each. */
typedef struct {
  const h5g_row_route *route;
  uint64_t *counts; /* [parts][stride], then made each part's first fetched row of each owner */
  uint64_t *requests;
} grouping;

static void group_part(void *arg, int part, int parts) {
  grouping *g = arg;
  const h5g_row_route *rt = g->route;
  groups owners = owners_of(rt);
  uint64_t *mine = g->counts + (size_t)part * rt->stride;
  size_t begin, end;
  h5g_share(rt->n_out, part, parts, &begin, &end);
  for (size_t i = begin; i < end; i++) {
    uint64_t index = rt->src_index[i];
    if (index - rt->first < rt->mine) continue;
    uint64_t k = mine[group_of(&owners, index)]++;
    if (g->requests) g->requests[k] = index;
  }
}

/* The rows a rank serves are its own: one outside its share is an internal error, counted in
 * `bad`. */
typedef struct {
  const uint64_t *rows;
  uint64_t n, first, mine;
  int bad;
} checking;

static void check_part(void *arg, int part, int parts) {
  checking *c = arg;
  size_t begin, end;
  h5g_share(c->n, part, parts, &begin, &end);
  int bad = 0;
  for (size_t k = begin; k < end; k++) bad |= c->rows[k] - c->first >= c->mine;
  if (bad) __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
}

/* The route's common part: this rank's place in the spread of n_total rows. */
static int route_new(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out, uint64_t n_total,
                     int threads, h5g_row_route **route) {
  int rc = H5G_OK, rank, size;
  h5g_row_route *rt = calloc(1, sizeof *rt);
  uint64_t *tables = NULL;
  *route = NULL;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  tables = calloc(3 * (size_t)size + 1, sizeof(uint64_t));
  CHECK_ALLOC(rt, sizeof *rt);
  CHECK_ALLOC(tables, (3 * (size_t)size + 1) * sizeof(uint64_t));
  for (int r = 0; r <= size; r++) tables[r] = h5g_share_begin((uint64_t)r, n_total, (uint64_t)size);
  rt->comm = comm;
  rt->size = size;
  rt->threads = threads;
  rt->src_index = src_index;
  rt->n_out = n_out;
  rt->first = tables[rank];
  rt->mine = tables[rank + 1] - tables[rank];
  rt->tables = tables;
  tables = NULL;
  rt->fetch_counts = rt->tables + size + 1;
  rt->serve_counts = rt->fetch_counts + size;
  *route = rt;
  rt = NULL;
done:
  free(rt);
  free(tables);
  return rc;
}

/* Collective: the route's rows served checked to be this rank's. */
static int check_served(h5g_row_route *rt) {
  checking c = {rt->requested, rt->n_serve, rt->first, rt->mine, 0};
  h5g_parallel(parts_for(rt->n_serve, rt->threads), check_part, &c);
  return h5g_agree(rt->comm, c.bad ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                   "internal error: a row was asked of the "
                                                   "wrong rank")
                                   : H5G_OK);
}

/* Collective: the output rows not this rank's counted by the rank that holds them, by parts
 * (fetch_counts; each part's first fetched row of each, `starts`), the counts exchanged
 * (serve_counts), and their source rows grouped so in `requests`, a buffer made here. */
static int group_fetches(h5g_row_route *rt, uint64_t **requests) {
  int rc = H5G_OK, size = rt->size;
  uint64_t *cursors = NULL;
  rt->stride = ((size_t)size + 7) / 8 * 8; /* 8 counts: a 64-byte line */
  rt->parts = grouping_parts(rt->n_out, rt->threads, 2 * rt->stride); /* starts and cursors */
  size_t words = (size_t)rt->parts * rt->stride;
  rt->starts = calloc(words, sizeof(uint64_t));
  cursors = malloc(words * sizeof(uint64_t));
  CHECK(h5g_agree_alloc(rt->comm, rt->starts && cursors, 2 * words * sizeof(uint64_t)));
  grouping g = {rt, rt->starts, NULL};
  h5g_parallel(rt->parts, group_part, &g);
  for (size_t k = 0, at = 0; k < (size_t)size; k++) { /* counts to starts, owner by owner */
    rt->fetch_counts[k] = 0;
    for (int p = 0; p < rt->parts; p++) {
      uint64_t *start = &rt->starts[(size_t)p * rt->stride + k], count = *start;
      *start = at;
      at += count;
      rt->fetch_counts[k] += count;
    }
  }
  for (int r = 0; r < size; r++) rt->n_fetch += rt->fetch_counts[r];
  CHECK(h5g_exchange_counts(rt->comm, rt->fetch_counts, rt->serve_counts, 1));
  for (int r = 0; r < size; r++) rt->n_serve += rt->serve_counts[r];
  size_t fetch_bytes = rt->n_fetch * sizeof(uint64_t);
  /* grows with the rows: it spills with the carried rows (base/host_memory.h) */
  *requests = h5g_bulk_alloc(fetch_bytes);
  CHECK(h5g_agree_alloc(rt->comm, *requests != NULL, fetch_bytes));
  memcpy(cursors, rt->starts, words * sizeof(uint64_t));
  g = (grouping){rt, cursors, *requests};
  h5g_parallel(rt->parts, group_part, &g);
done:
  free(cursors);
  return rc;
}

int h5g_row_route_make(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                       uint64_t n_total, int threads, h5g_row_route **route) {
  int rc = H5G_OK;
  h5g_row_route *rt = NULL;
  uint64_t *requests = NULL;
  *route = NULL;
  int made = route_new(comm, src_index, n_out, n_total, threads, &rt);
  CHECK(h5g_agree(comm, made));
  if (rt->size == 1) goto made; /* every row is this rank's: nothing to request */
  CHECK(group_fetches(rt, &requests));
  size_t serve_bytes = rt->n_serve * sizeof(uint64_t);
  rt->requested = h5g_bulk_alloc(serve_bytes);
  CHECK(h5g_agree_alloc(comm, rt->requested != NULL, serve_bytes));
  CHECK(h5g_exchange(comm, requests, rt->fetch_counts, rt->requested, rt->serve_counts,
                     sizeof(uint64_t)));
  CHECK(check_served(rt));
made:
  *route = rt;
  rt = NULL;
done:
  h5g_row_route_free(rt);
  h5g_bulk_free(requests);
  return rc;
}

/* The output rows, part by part (the grouping's parts): this rank's own from its rows, the
 * others' the next of their owner's fetched rows, which came in output order. */
typedef struct {
  const h5g_row_route *route;
  const char *local, *fetched;
  char *out;
  size_t row_bytes;
  uint64_t *cursors; /* [parts][stride]: from the route's starts */
} placing;

static void place_part(void *arg, int part, int parts) {
  placing *p = arg;
  const h5g_row_route *rt = p->route;
  groups owners = owners_of(rt);
  uint64_t *next = p->cursors + (size_t)part * rt->stride;
  size_t begin, end, w = p->row_bytes;
  h5g_share(rt->n_out, part, parts, &begin, &end);
  for (size_t i = begin; i < end; i++) {
    if (i + PREFETCH_AHEAD < end) {
      uint64_t ahead = rt->src_index[i + PREFETCH_AHEAD] - rt->first;
      if (ahead < rt->mine) __builtin_prefetch(p->local + ahead * w);
    }
    uint64_t index = rt->src_index[i], row = index - rt->first;
    const char *from = row < rt->mine ? p->local + row * w
                                      : p->fetched + next[group_of(&owners, index)]++ * w;
    memcpy(p->out + i * w, from, w);
  }
}

int h5g_row_route_move(h5g_row_route *rt, const void *local_rows, size_t row_bytes, void *out) {
  int rc = H5G_OK;
  char *moving = NULL; /* the rows served, then those fetched */
  uint64_t *cursors = NULL;
  if (row_bytes == 0) goto done; /* rows of zero elements, the same on every rank */
  if (rt->size == 1) { /* every row is this rank's: the route has none to move */
    row_copies local = {local_rows, out, row_bytes, rt->src_index, rt->first, rt->mine, rt->n_out,
                        0};
    copy_rows(&local, rt->threads);
    CHECK(local.skipped ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                        "internal error: %llu row indices past the table",
                                        (unsigned long long)local.skipped)
                        : H5G_OK);
    goto done;
  }
  /* made for each move and freed after it: the carry's writes that follow have its memory */
  size_t bytes = (rt->n_serve + rt->n_fetch) * row_bytes;
  size_t words = (size_t)rt->parts * rt->stride;
  moving = h5g_bulk_alloc(bytes);
  cursors = malloc(words * sizeof(uint64_t));
  CHECK(h5g_agree_alloc(rt->comm, moving && cursors, bytes + words * sizeof(uint64_t)));
  char *served = moving, *fetched = moving + rt->n_serve * row_bytes;
  row_copies serve = {local_rows, served, row_bytes, rt->requested, rt->first, rt->mine,
                      rt->n_serve, 0};
  copy_rows(&serve, rt->threads);
  CHECK(h5g_exchange(rt->comm, served, rt->serve_counts, fetched, rt->fetch_counts, row_bytes));
  memcpy(cursors, rt->starts, words * sizeof(uint64_t));
  placing place = {rt, local_rows, fetched, out, row_bytes, cursors};
  h5g_parallel(rt->parts, place_part, &place);
done:
  h5g_bulk_free(moving);
  free(cursors);
  return rc;
}

uint64_t h5g_row_route_bytes(uint64_t n_local, uint64_t n_out, int size, size_t row_bytes) {
  if (size == 1) return 0;
  /* the requests served, held; beside them the requests sent while it is made, then the rows */
  uint64_t requests = n_out * sizeof(uint64_t), moving = (n_local + n_out) * row_bytes;
  return n_local * sizeof(uint64_t) + (requests > moving ? requests : moving);
}

void h5g_row_route_free(h5g_row_route *rt) {
  if (!rt) return;
  free(rt->tables);
  free(rt->starts);
  h5g_bulk_free(rt->requested);
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
