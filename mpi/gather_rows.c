#include "mpi/gather_rows.h"

#include <stdlib.h>
#include <string.h>

#include "mpi/agree.h"
#include "mpi/exchange.h"
#include "mpi/topology.h"
#include "base/error.h"

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
                    const void *local_rows, uint64_t n_total, size_t row_bytes, void *out) {
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
  for (uint64_t i = 0; i < n_out; i++) {
    int owner = owner_of(src_index[i], n_total, size);
    if (owner == rank)
      memcpy((char *)out + i * row_bytes, (const char *)local_rows + (src_index[i] - first) * row_bytes,
             row_bytes);
    else
      want[owner]++;
  }
  CHECK(h5g_exchange_counts(comm, want, asked_counts, 1));
  uint64_t n_asked = 0;
  for (int r = 0; r < size; r++) n_asked += asked_counts[r];
  CHECK(h5g_agree(comm, allocate(&b, size, n_sent_total(want, size), n_asked, row_bytes)));
  /* group the requests by owner, keeping output order within each group */
  uint64_t *cursor = b.counts;
  for (uint64_t r = 0, at = 0; r < (uint64_t)size; at += want[r], r++) cursor[r] = at;
  uint64_t n_sent = n_sent_total(want, size);
  for (uint64_t i = 0; i < n_out && n_sent; i++) {
    int owner = owner_of(src_index[i], n_total, size);
    if (owner == rank) continue;
    uint64_t slot = cursor[owner]++;
    b.requests[slot] = src_index[i];
    b.positions[slot] = i;
  }
  CHECK(h5g_exchange(comm, b.requests, want, b.asked, asked_counts, sizeof(uint64_t)));
  int bad = 0;
  for (uint64_t k = 0; k < n_asked; k++) {
    uint64_t local = b.asked[k] - first;
    if (b.asked[k] < first || local >= mine) { bad = 1; break; }
    memcpy(b.answer + k * row_bytes, (const char *)local_rows + local * row_bytes, row_bytes);
  }
  CHECK(h5g_agree(comm, bad ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                            "internal error: a row was asked of the wrong rank")
                            : H5G_OK));
  CHECK(h5g_exchange(comm, b.answer, asked_counts, b.rows, want, row_bytes));
  for (uint64_t k = 0; k < n_sent; k++)
    memcpy((char *)out + b.positions[k] * row_bytes, b.rows + k * row_bytes, row_bytes);
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
