#include "mpi/gather_rows.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/host_memory.h"
#include "base/mix.h"
#include "base/parallel.h"
#include "mpi/agree.h"
#include "mpi/exchange.h"
#include "mpi/topology.h"

enum {
  /* Row copies (or indices grouped) a thread takes at least: fewer are not worth a thread. */
  MIN_COPIES_PER_THREAD = 1 << 16,
  /* How many copies ahead the source (and a scattered destination) row is prefetched: the copies
   * are random reads of a table larger than the caches, bound by memory latency, not bandwidth. */
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
  /* n_fetch: the output row of each row fetched, grouped by owner */
  uint64_t *fetch_positions;
  /* n_serve + own_count: the table rows served, grouped by the rank served, in rank order; the
   * [own_first, own_first + own_count) of them are this rank's own output's (not served) */
  const uint64_t *serve_rows;
  uint64_t own_first, own_count;
  uint64_t *requested; /* serve_rows when they came as requests (owned) */
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

/* Row copies dst[to[k]] = src[from[k] - first] for k < n. `from` NULL: k; `to` NULL: k. A
 * source row outside src's `rows` is another rank's: skipped, and counted. */
typedef struct {
  const char *src;
  char *dst;
  size_t row_bytes;
  const uint64_t *from, *to;
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
      uint64_t ahead = c->from ? c->from[k + PREFETCH_AHEAD] - c->first : k + PREFETCH_AHEAD;
      if (ahead < c->rows) __builtin_prefetch(c->src + ahead * c->row_bytes);
      if (c->to) __builtin_prefetch(c->dst + c->to[k + PREFETCH_AHEAD] * c->row_bytes, 1);
    }
    uint64_t row = c->from ? c->from[k] - c->first : k; /* below first: wraps, so outside */
    if (row >= c->rows) {
      skipped++;
      continue;
    }
    memcpy(c->dst + (c->to ? c->to[k] : k) * c->row_bytes, c->src + row * c->row_bytes,
           c->row_bytes);
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

/* The output rows grouped by the rank that holds their source row, in output order within a
 * group, by several parts: a first pass counts each part's rows of each group (`filling` 0), a
 * second one, from each part's cursors, fills in their positions (and with `requests` their
 * source rows). Rows of this rank's own share are skipped (copied in place). */
typedef struct {
  const h5g_row_route *route;
  const groups *groups;
  uint64_t *counts; /* [parts][stride]: each part's rows of each group, then its cursors */
  size_t stride;    /* groups rounded up to whole cache lines: no two parts write one line */
  int filling;
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
    if (index - rt->first < rt->mine) continue;
    uint64_t slot = mine[group_of(g->groups, index)]++;
    if (g->filling) {
      if (g->requests) g->requests[slot] = index;
      g->positions[slot] = i;
    }
  }
}

/* Counts the rows of each part in each group, then makes the counts cursors; totals[k]: the
 * rows of group k. */
static void count_groups(grouping *g, int parts, uint64_t *totals) {
  h5g_parallel(parts, group_part, g);
  for (size_t k = 0, at = 0; k < g->groups->count; k++) {
    totals[k] = 0;
    for (int p = 0; p < parts; p++) {
      uint64_t count = g->counts[(size_t)p * g->stride + k];
      g->counts[(size_t)p * g->stride + k] = at;
      at += count;
      totals[k] += count;
    }
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
  checking c = {rt->serve_rows, rt->n_serve + rt->own_count, rt->first, rt->mine, 0};
  h5g_parallel(parts_for(c.n, rt->threads), check_part, &c);
  return h5g_agree(rt->comm, c.bad ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                   "internal error: a row was asked of the "
                                                   "wrong rank")
                                   : H5G_OK);
}

/* Collective: the output rows not this rank's grouped by the rank that holds them (fetch_counts,
 * fetch_positions), the counts exchanged (serve_counts); with `requests`, their source rows too,
 * in a buffer made here. */
static int group_fetches(h5g_row_route *rt, uint64_t **requests) {
  int rc = H5G_OK, size = rt->size;
  uint64_t *counts = NULL;
  size_t stride = ((size_t)size + 7) / 8 * 8; /* 8 counts: a 64-byte line */
  int parts = grouping_parts(rt->n_out, rt->threads, stride);
  counts = calloc((size_t)parts * stride, sizeof(uint64_t));
  CHECK(h5g_agree_alloc(rt->comm, counts != NULL, (size_t)parts * stride * sizeof(uint64_t)));
  groups owners = {rt->tables, rt->tables[size] ? (double)size / (double)rt->tables[size] : 0,
                   (size_t)size};
  grouping g = {rt, &owners, counts, stride, 0, NULL, NULL};
  count_groups(&g, parts, rt->fetch_counts);
  for (int r = 0; r < size; r++) rt->n_fetch += rt->fetch_counts[r];
  CHECK(h5g_exchange_counts(rt->comm, rt->fetch_counts, rt->serve_counts, 1));
  for (int r = 0; r < size; r++) rt->n_serve += rt->serve_counts[r];
  size_t fetch_bytes = rt->n_fetch * sizeof(uint64_t);
  /* grow with the rows: they spill with the carried rows (base/host_memory.h) */
  if (requests) *requests = h5g_bulk_alloc(fetch_bytes);
  rt->fetch_positions = h5g_bulk_alloc(fetch_bytes);
  CHECK(h5g_agree_alloc(rt->comm, (!requests || *requests) && rt->fetch_positions,
                        (requests ? 2 : 1) * fetch_bytes));
  g.filling = 1;
  g.requests = requests ? *requests : NULL;
  g.positions = rt->fetch_positions;
  h5g_parallel(parts, group_part, &g);
done:
  free(counts);
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
  rt->serve_rows = rt->requested;
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

/* The order rows travel in, as a sum: term (k, index) for the k-th row of a piece, so that the
 * sums of the pieces a rank sent and of those another placed differ unless the orders agree. */
typedef struct {
  const uint64_t *index, *at; /* at NULL: row k's index is index[k], else index[at[k]] */
  uint64_t n;
  uint64_t sums[H5G_MAX_PARTS];
} order_sum;

static void order_sum_part(void *arg, int part, int parts) {
  order_sum *o = arg;
  size_t begin, end;
  uint64_t sum = 0;
  h5g_share(o->n, part, parts, &begin, &end);
  for (size_t k = begin; k < end; k++)
    sum += h5g_mix64((o->at ? o->index[o->at[k]] : o->index[k]) ^ h5g_mix64(k));
  o->sums[part] = sum;
}

static uint64_t order_sum_of(const uint64_t *index, const uint64_t *at, uint64_t n, int threads) {
  order_sum o = {index, at, n, {0}};
  int parts = parts_for(n, threads);
  h5g_parallel(parts, order_sum_part, &o);
  uint64_t sum = 0;
  for (int p = 0; p < parts; p++) sum += o.sums[p];
  return sum;
}

/* Collective: the rows each rank sent this one arrive where the output wants them: the order
 * sums of the pieces sent (sent_begin) against those of the rows fetched, rank by rank. */
static int check_order(h5g_row_route *rt, const uint64_t *sent_begin) {
  int rc = H5G_OK, size = rt->size, bad = 0;
  uint64_t *sums = calloc(3 * (size_t)size, sizeof(uint64_t));
  CHECK(h5g_agree_alloc(rt->comm, sums != NULL, 3 * (size_t)size * sizeof(uint64_t)));
  uint64_t *sent = sums, *told = sums + size, *placed = sums + 2 * size;
  for (int d = 0; d < size; d++)
    if (rt->serve_counts[d])
      sent[d] = order_sum_of(rt->serve_rows + sent_begin[d], NULL, rt->serve_counts[d],
                             rt->threads);
  uint64_t first = 0;
  for (int s = 0; s < size; s++) {
    if (rt->fetch_counts[s])
      placed[s] = order_sum_of(rt->src_index, rt->fetch_positions + first, rt->fetch_counts[s],
                               rt->threads);
    first += rt->fetch_counts[s];
  }
  CHECK_MPI(MPI_Alltoall(sent, 1, MPI_UINT64_T, told, 1, MPI_UINT64_T, rt->comm));
  for (int s = 0; s < size; s++) bad |= told[s] != placed[s];
  CHECK(h5g_agree(rt->comm, bad ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                "internal error: carried rows would arrive out "
                                                "of the order they were sent in")
                                : H5G_OK));
done:
  free(sums);
  return rc;
}

int h5g_row_route_sent(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                       uint64_t n_total, const uint64_t *sent, const uint64_t *sent_begin,
                       int threads, h5g_row_route **route) {
  int rc = H5G_OK, rank = 0;
  h5g_row_route *rt = NULL;
  *route = NULL;
  int made = route_new(comm, src_index, n_out, n_total, threads, &rt);
  CHECK(h5g_agree(comm, made));
  if (rt->size == 1) goto made; /* every row is this rank's: nothing travels */
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK(group_fetches(rt, NULL));
  rt->serve_rows = sent;
  rt->own_first = sent_begin[rank];
  rt->own_count = sent_begin[rank + 1] - sent_begin[rank];
  int counts_hold = rt->serve_counts[rank] == 0;
  for (int d = 0; d < rt->size; d++)
    counts_hold &= d == rank || rt->serve_counts[d] == sent_begin[d + 1] - sent_begin[d];
  CHECK(h5g_agree(comm, counts_hold ? H5G_OK
                                    : h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                    "internal error: a rank's output holds "
                                                    "other rows than it was sent")));
  CHECK(check_order(rt, sent_begin));
  CHECK(check_served(rt));
made:
  *route = rt;
  rt = NULL;
done:
  h5g_row_route_free(rt);
  return rc;
}

int h5g_row_route_move(h5g_row_route *rt, const void *local_rows, size_t row_bytes, void *out) {
  int rc = H5G_OK;
  char *moving = NULL; /* the rows served, then those fetched */
  if (row_bytes == 0) goto done; /* rows of zero elements, the same on every rank */
  /* this rank's own rows in place */
  row_copies local = {local_rows, out, row_bytes, rt->src_index, NULL, rt->first, rt->mine,
                      rt->n_out, 0};
  copy_rows(&local, rt->threads);
  /* the rows not this rank's are the ones it fetches: any other is an index past the table */
  CHECK(h5g_agree(rt->comm, local.skipped == rt->n_fetch
                                ? H5G_OK
                                : h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                "internal error: %llu row indices past the table",
                                                (unsigned long long)(local.skipped - rt->n_fetch))));
  if (rt->size == 1) goto done; /* every row is this rank's: the route has none to move */
  /* made for each move and freed after it: the carry's writes that follow have its memory */
  size_t bytes = (rt->n_serve + rt->n_fetch) * row_bytes;
  moving = h5g_bulk_alloc(bytes);
  CHECK(h5g_agree_alloc(rt->comm, moving != NULL, bytes));
  char *served = moving, *fetched = moving + rt->n_serve * row_bytes;
  /* the rows served before this rank's own output's, then those after them */
  row_copies before = {local_rows, served, row_bytes, rt->serve_rows, NULL, rt->first, rt->mine,
                       rt->own_first, 0};
  row_copies after = {local_rows, served + rt->own_first * row_bytes, row_bytes,
                      rt->serve_rows + rt->own_first + rt->own_count, NULL, rt->first, rt->mine,
                      rt->n_serve - rt->own_first, 0};
  copy_rows(&before, rt->threads);
  copy_rows(&after, rt->threads);
  CHECK(h5g_exchange(rt->comm, served, rt->serve_counts, fetched, rt->fetch_counts, row_bytes));
  row_copies place = {fetched, out, row_bytes, NULL, rt->fetch_positions, 0, rt->n_fetch,
                      rt->n_fetch, 0};
  copy_rows(&place, rt->threads);
done:
  h5g_bulk_free(moving);
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
  h5g_bulk_free(rt->fetch_positions);
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
