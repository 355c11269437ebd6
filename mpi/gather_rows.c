#include "mpi/gather_rows.h"

#include <stdlib.h>
#include <string.h>

#include "mpi/agree.h"
#include "mpi/exchange.h"
#include "mpi/topology.h"
#include "base/error.h"
#include "base/parallel.h"

enum {
  /* Row copies a thread takes at least: fewer are not worth starting a thread for. */
  MIN_COPIES_PER_THREAD = 1 << 16,
  /* How many copies ahead the source (and a scattered destination) row is prefetched: the copies
   * are random reads of a table larger than the caches, bound by memory latency, not bandwidth. */
  PREFETCH_AHEAD = 16
};

/* Row copies dst[to[k]] = src[from[k] - first] for k < n, by several threads. `from` NULL: k;
 * `to` NULL: k. A source row outside src's `rows` is another rank's: skipped, or with
 * `outside_is_bad` an error, recorded in `bad`. */
typedef struct {
  const char *src;
  char *dst;
  size_t row_bytes;
  const uint64_t *from, *to;
  uint64_t first, rows, n;
  int outside_is_bad, bad;
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
    if (row >= c->rows) {
      if (c->outside_is_bad) __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
      continue;
    }
    memcpy(c->dst + (c->to ? c->to[k] : k) * c->row_bytes, c->src + row * c->row_bytes,
           c->row_bytes);
  }
}

/* Runs the copies on up to `threads` threads; returns whether a source row was bad. */
static int copy_rows(row_copies *c, int threads) {
  if ((uint64_t)threads > c->n / MIN_COPIES_PER_THREAD)
    threads = (int)(c->n / MIN_COPIES_PER_THREAD);
  h5g_parallel(threads > 1 ? threads : 1, copy_rows_part, c);
  return c->bad;
}

/* The rank whose share holds global row `index`. */
static int owner_of(uint64_t index, uint64_t n_total, int size) {
  int r = (int)((double)index / (double)n_total * size);
  if (r >= size) r = size - 1;
  while (r > 0 && h5g_share_begin((uint64_t)r, n_total, (uint64_t)size) > index) r--;
  while (r + 1 < size && h5g_share_begin((uint64_t)r + 1, n_total, (uint64_t)size) <= index) r++;
  return r;
}

static uint64_t n_sent_total(const uint64_t *want, int size) {
  uint64_t n = 0;
  for (int r = 0; r < size; r++) n += want[r];
  return n;
}

typedef struct {
  uint64_t *counts;    /* [4P]: requests sent to / received from each rank, and cursors */
  uint64_t *requests;  /* n_out indices, grouped by owner */
  uint64_t *positions; /* n_out: where in `out` each grouped request's row goes */
  uint64_t *asked;     /* indices other ranks ask this rank for */
  char *answer, *rows; /* rows sent back, rows received */
} gather_buffers;

static int allocate(gather_buffers *b, int size, uint64_t n_out, uint64_t n_asked, size_t row_bytes) {
  int rc = H5G_OK;
  size_t sizes[] = {4 * (size_t)size * sizeof(uint64_t), n_out * sizeof(uint64_t),
                    n_out * sizeof(uint64_t), n_asked * sizeof(uint64_t), n_asked * row_bytes,
                    n_out * row_bytes};
  void **slots[] = {(void **)&b->counts, (void **)&b->requests, (void **)&b->positions,
                    (void **)&b->asked, (void **)&b->answer, (void **)&b->rows};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    *slots[i] = malloc(sizes[i] ? sizes[i] : 1);
    CHECK_ALLOC(*slots[i], sizes[i]);
  }
done:
  return rc;
}

int h5g_gather_rows(MPI_Comm comm, const uint64_t *src_index, uint64_t n_out,
                    const void *local_rows, uint64_t n_total, size_t row_bytes, void *out,
                    int threads) {
  int rc = H5G_OK, rank, size;
  gather_buffers b;
  uint64_t *want = NULL;
  memset(&b, 0, sizeof b);
  if (row_bytes == 0) goto done; /* rows of zero elements, the same on every rank */
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  want = calloc(2 * (size_t)size, sizeof(uint64_t));
  CHECK(h5g_agree_alloc(comm, want != NULL, 2 * (size_t)size * sizeof(uint64_t)));
  uint64_t *asked_counts = want + size;
  uint64_t first = h5g_share_begin((uint64_t)rank, n_total, (uint64_t)size);
  uint64_t mine = h5g_share_begin((uint64_t)rank + 1, n_total, (uint64_t)size) - first;
  /* rows this rank holds are copied here; only the others travel */
  row_copies local = {local_rows, out, row_bytes, src_index, NULL, first, mine, n_out, 0, 0};
  copy_rows(&local, threads);
  for (uint64_t i = 0; i < n_out; i++)
    if (src_index[i] - first >= mine) want[owner_of(src_index[i], n_total, size)]++;
  CHECK(h5g_exchange_counts(comm, want, asked_counts, 1));
  uint64_t n_asked = 0;
  for (int r = 0; r < size; r++) n_asked += asked_counts[r];
  CHECK(h5g_agree(comm, allocate(&b, size, n_sent_total(want, size), n_asked, row_bytes)));
  /* group the requests by owner, keeping output order within each group */
  uint64_t *cursor = b.counts;
  for (uint64_t r = 0, at = 0; r < (uint64_t)size; at += want[r], r++) cursor[r] = at;
  uint64_t n_sent = n_sent_total(want, size);
  for (uint64_t i = 0; i < n_out && n_sent; i++) {
    if (src_index[i] - first < mine) continue; /* copied above */
    uint64_t slot = cursor[owner_of(src_index[i], n_total, size)]++;
    b.requests[slot] = src_index[i];
    b.positions[slot] = i;
  }
  CHECK(h5g_exchange(comm, b.requests, want, b.asked, asked_counts, sizeof(uint64_t)));
  row_copies answer = {local_rows, b.answer, row_bytes, b.asked, NULL, first, mine, n_asked, 1, 0};
  CHECK(h5g_agree(comm, copy_rows(&answer, threads)
                            ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                            "internal error: a row was asked of the wrong rank")
                            : H5G_OK));
  CHECK(h5g_exchange(comm, b.answer, asked_counts, b.rows, want, row_bytes));
  row_copies received = {b.rows, out, row_bytes, NULL, b.positions, 0, n_sent, n_sent, 0, 0};
  copy_rows(&received, threads);
done:
  free(want);
  free(b.counts);
  free(b.requests);
  free(b.positions);
  free(b.asked);
  free(b.answer);
  free(b.rows);
  return rc;
}
