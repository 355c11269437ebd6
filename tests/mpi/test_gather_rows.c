/* Multi-rank test of mpi/gather_rows.h (run at 1..4 ranks): a table of rows whose bytes name
 * their global row and byte, spread over the ranks as h5g_share_begin says, moved by a random
 * permutation and by indices with repeats, in rows of 1, 3, 8, 12 and 20 bytes. Every byte of
 * every output row is checked against the row its index names, after each of two moves along
 * one route (the carry moves several tables). Sizes 0, 1, fewer rows than ranks, 70001, and
 * 2^19 (a moving buffer of megabytes: huge pages). An index past the table fails on every rank.
 * Also the order of a stable sort by keys with many ties, as the carry's route follows it. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "mpi/gather_rows.h"
#include "mpi/topology.h"
#include "tests/support/check_mpi.h"

static int rank, size;

/* Byte b of global row g: a pattern of both, so that a row or byte out of place shows. */
static unsigned char row_byte(uint64_t g, size_t b) {
  return (unsigned char)(g * 131 + b * 7 + (g >> 8) * 17 + 1);
}

enum { PERMUTATION, REPEATS, SORTED_BY_KEYS, MODES };

/* Key of global row g for SORTED_BY_KEYS: few values, so that ties abound. */
static unsigned row_key(uint64_t g) { return (unsigned)((g * 2654435761u) >> 7) % 7; }

/* The same indices on every rank: a shuffle seeded alike, a draw with repeats, or the stable
 * order of the rows by their keys (a counting sort). */
static void global_indices(uint64_t n, int mode, uint64_t *index) {
  uint64_t state = 0x9e37 + n + (uint64_t)mode, at = 0;
  if (mode == SORTED_BY_KEYS) {
    for (unsigned key = 0; key < 7; key++)
      for (uint64_t g = 0; g < n; g++)
        if (row_key(g) == key) index[at++] = g;
    return;
  }
  for (uint64_t i = 0; i < n; i++) index[i] = mode == REPEATS ? test_rand(&state) % n : i;
  for (uint64_t i = n; mode == PERMUTATION && i > 1; i--) {
    uint64_t j = test_rand(&state) % i, t = index[i - 1];
    index[i - 1] = index[j];
    index[j] = t;
  }
}

static void check_move(uint64_t n, size_t row_bytes, int mode) {
  uint64_t first = h5g_share_begin((uint64_t)rank, n, (uint64_t)size);
  uint64_t mine = h5g_share_begin((uint64_t)rank + 1, n, (uint64_t)size) - first;
  uint64_t *all = malloc((n ? n : 1) * sizeof *all);
  unsigned char *rows = malloc(mine * row_bytes + 1), *out = malloc(mine * row_bytes + 1);
  EXPECT(all && rows && out, "out of memory");
  if (!all || !rows || !out) goto done;
  global_indices(n, mode, all);
  for (uint64_t i = 0; i < mine; i++)
    for (size_t b = 0; b < row_bytes; b++) rows[i * row_bytes + b] = row_byte(first + i, b);
  /* this rank's output rows are the same share of the indices */
  const uint64_t *src = all + first;
  int status = H5G_OK;
  h5g_row_route *route = NULL;
  status = h5g_row_route_make(MPI_COMM_WORLD, src, mine, n, 3, &route);
  for (int move = 0; move < 2; move++) {
    memset(out, 0, mine * row_bytes + 1);
    if (status == H5G_OK) status = h5g_row_route_move(route, rows, row_bytes, out);
    EXPECT(status == H5G_OK, "n %llu, %zu-byte rows, mode %d: move %d failed (%d)",
           (unsigned long long)n, row_bytes, mode, move, status);
    uint64_t wrong = 0;
    for (uint64_t i = 0; status == H5G_OK && i < mine; i++)
      for (size_t b = 0; b < row_bytes; b++) wrong += out[i * row_bytes + b] != row_byte(src[i], b);
    EXPECT(wrong == 0, "n %llu, %zu-byte rows, mode %d, move %d: %llu bytes of %llu rows wrong",
           (unsigned long long)n, row_bytes, mode, move, (unsigned long long)wrong,
           (unsigned long long)mine);
  }
  h5g_row_route_free(route);
done:
  free(all);
  free(rows);
  free(out);
}

/* An index past the table (an internal error) fails the route or its move on every rank. */
static void check_index_past_table(void) {
  uint64_t n = 1000, first = h5g_share_begin((uint64_t)rank, n, (uint64_t)size);
  uint64_t mine = h5g_share_begin((uint64_t)rank + 1, n, (uint64_t)size) - first;
  uint64_t *src = malloc(mine * sizeof *src + 1);
  unsigned char *rows = malloc(mine * 4 + 1), *out = malloc(mine * 4 + 1);
  EXPECT(src && rows && out, "out of memory");
  if (!src || !rows || !out) goto done;
  for (uint64_t i = 0; i < mine; i++) src[i] = (first + i * 7) % n;
  if (rank == size - 1 && mine) src[mine - 1] = n; /* one past the last row */
  h5g_row_route *route = NULL;
  int status = h5g_row_route_make(MPI_COMM_WORLD, src, mine, n, 2, &route);
  if (status == H5G_OK) status = h5g_row_route_move(route, rows, 4, out);
  h5g_row_route_free(route);
  EXPECT(status != H5G_OK, "an index past the table was moved without an error");
done:
  free(src);
  free(rows);
  free(out);
}

int main(int argc, char **argv) {
  MUST_MPI(MPI_Init(&argc, &argv));
  MUST_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MUST_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  static const size_t widths[] = {1, 3, 8, 12, 20};
  static const uint64_t sizes[] = {0, 1, 3, 70001, 1 << 19};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (int mode = 0; mode < MODES; mode++)
      for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
        check_move(sizes[s], widths[w], mode);
  check_index_past_table();
  int failed = test_summary_mpi(MPI_COMM_WORLD, "test_gather_rows");
  MPI_Finalize();
  return failed;
}
