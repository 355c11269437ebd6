/* Multi-rank test of the exact splitters and the chunked exchange (run at 1..4 ranks).
 *
 * Splitters: every rank holds sorted runs of random keys (uneven sizes, empty ranks, N < P, all
 * equal, few distinct, globally sorted or reversed placement); after h5g_exact_cuts, rank 0
 * gathers every (destination, key) pair and checks, against a qsort of all keys, that destination
 * d gets exactly the keys of global ranks [d*N/P, (d+1)*N/P) as a multiset.
 * Exchange: each pair sends a pattern that names sender, receiver and index, with message
 * limits of 1, 3 and the default, and the receiver checks every element.
 * Unsigned reductions (mpi/reduce_u64.h): values past 2^63 beside small ones, whose minimum and
 * maximum MPICH 4.0.2's MPI_MIN and MPI_MAX get wrong. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/exchange.h"
#include "mpi/reduce_u64.h"
#include "mpi/splitters.h"
#include "mpi/topology.h"
#include "base/error.h"
#include "base/keys.h"
#include "tests/support/check_mpi.h"
#include "tests/support/keys.h"

static int rank, size;

/* (key, run, position) triples in the order of a stable merge. */
typedef struct {
  h5g_u128 key;
  uint64_t run, position;
} triple;
static int compare_triple(const void *a, const void *b) {
  const triple *x = a, *y = b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  if (x->run != y->run) return (x->run > y->run) - (x->run < y->run);
  return (x->position > y->position) - (x->position < y->position);
}

enum { DIST_RANDOM, DIST_EQUAL, DIST_FEW, DIST_RANK_SORTED, DIST_RANK_REVERSED, DIST_SKEWED, DIST_COUNT };

/* 16-byte keys: random ones use all 128 bits, and the others differ in the high half too. */
static h5g_u128 make_key(int dist, uint64_t *rng, unsigned width, uint64_t n_local) {
  h5g_u128 mask = test_width_mask(width), r = test_rand128(rng);
  switch (dist) {
  case DIST_EQUAL: return 42 & mask;
  case DIST_FEW: return (r % 3) * (mask / 3);
  case DIST_RANK_SORTED: return ((h5g_u128)rank * (mask / 4) + r % (mask / 8 + 1)) & mask;
  case DIST_RANK_REVERSED: return ((h5g_u128)(3 - rank % 4) * (mask / 4) + r % (mask / 8 + 1)) & mask;
  case DIST_SKEWED: return (r % 4 ? 7 : r % (n_local + 1)) & mask; /* one huge duplicate run */
  default: return r & mask;
  }
}

/* Local size: the even share, or an uneven one (rank r gets r-dependent count, maybe 0). */
static uint64_t local_count(uint64_t n_global, int uneven) {
  if (!uneven) return h5g_share_begin(rank + 1, n_global, size) - h5g_share_begin(rank, n_global, size);
  return (uint64_t)(rank % 2 ? 0 : (rank + 1)) * n_global / 3 + (rank == size - 1 ? n_global % 5 : 0);
}

static void check_cuts(int dist, uint64_t n_target, unsigned width, size_t nruns, int uneven) {
  uint64_t rng = 0x1234 + (uint64_t)rank * 7919 + (uint64_t)dist * 131 + n_target * 31 + width + nruns;
  uint64_t n = local_count(n_target, uneven), n_global = 0;
  MPI_Allreduce(&n, &n_global, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  void *keys = malloc(n * width + 1);
  h5g_u128 *wide = malloc((n + 1) * sizeof(h5g_u128));
  uint64_t *run_offsets = malloc((nruns + 1) * sizeof(uint64_t));
  uint64_t *cuts = malloc(((size_t)size + 1) * nruns * sizeof(uint64_t));
  for (size_t j = 0; j <= nruns; j++) run_offsets[j] = h5g_share_begin(j, n, nruns);
  for (uint64_t i = 0; i < n; i++) wide[i] = make_key(dist, &rng, width, n);
  for (size_t j = 0; j < nruns; j++)
    qsort(wide + run_offsets[j], run_offsets[j + 1] - run_offsets[j], sizeof(h5g_u128), test_compare_u128);
  for (uint64_t i = 0; i < n; i++) test_store(keys, i, width, wide[i]);

  int status = h5g_exact_cuts(MPI_COMM_WORLD, keys, width, run_offsets, nruns, n_global, cuts);
  EXPECT(status == 0, "h5g_exact_cuts failed: %s", h5g_error_message());

  /* (destination, key high half, key low half), checked on rank 0 against a sort of everything */
  enum { SENT = 3 };
  uint64_t *pairs = malloc((SENT * n + 1) * sizeof(uint64_t));
  uint64_t np = 0;
  for (size_t j = 0; j < nruns; j++)
    for (int d = 0; d < size; d++) {
      uint64_t lo = cuts[(size_t)d * nruns + j], hi = cuts[(size_t)(d + 1) * nruns + j];
      EXPECT(lo <= hi && lo >= run_offsets[j] && hi <= run_offsets[j + 1],
             "rank %d run %zu dest %d: cut [%llu, %llu) outside run", rank, j, d,
             (unsigned long long)lo, (unsigned long long)hi);
      for (uint64_t i = lo; i < hi && i < run_offsets[j + 1]; i++) {
        h5g_u128 key = h5g_key_load(keys, i, width);
        pairs[np++] = (uint64_t)d;
        pairs[np++] = (uint64_t)(key >> 64);
        pairs[np++] = (uint64_t)key;
      }
    }
  int my_len = (int)np, *lens = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
  MPI_Gather(&my_len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  uint64_t total = 0;
  if (rank == 0)
    for (int r = 0; r < size; r++) {
      displs[r] = (int)total;
      total += (uint64_t)lens[r];
    }
  uint64_t *all = malloc((total + 1) * sizeof(uint64_t));
  MPI_Gatherv(pairs, my_len, MPI_UINT64_T, all, lens, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    uint64_t keys_sent = total / SENT;
    EXPECT(total == SENT * n_global, "cuts cover %llu keys of %llu", (unsigned long long)keys_sent,
           (unsigned long long)n_global);
    h5g_u128 *sorted = malloc((n_global + 1) * sizeof(h5g_u128)), *mine = malloc((n_global + 1) * sizeof(h5g_u128));
    for (uint64_t i = 0; i < keys_sent; i++) sorted[i] = (h5g_u128)all[SENT * i + 1] << 64 | all[SENT * i + 2];
    qsort(sorted, keys_sent, sizeof(h5g_u128), test_compare_u128);
    for (int d = 0; d < size; d++) {
      uint64_t got = 0, begin = h5g_share_begin(d, n_global, size), end = h5g_share_begin(d + 1, n_global, size);
      for (uint64_t i = 0; i < keys_sent; i++)
        if (all[SENT * i] == (uint64_t)d) mine[got++] = (h5g_u128)all[SENT * i + 1] << 64 | all[SENT * i + 2];
      qsort(mine, got, sizeof(h5g_u128), test_compare_u128);
      EXPECT(got == end - begin, "dist %d N=%llu w=%u runs=%zu: dest %d gets %llu keys, not %llu",
             dist, (unsigned long long)n_global, width, nruns, d, (unsigned long long)got,
             (unsigned long long)(end - begin));
      for (uint64_t i = 0; got == end - begin && i < got; i++)
        if (mine[i] != sorted[begin + i]) {
          EXPECT(0, "dist %d N=%llu w=%u: dest %d key %llu is %llx:%llx, expected %llx:%llx", dist,
                 (unsigned long long)n_global, width, d, (unsigned long long)i,
                 (unsigned long long)(mine[i] >> 64), (unsigned long long)mine[i],
                 (unsigned long long)(sorted[begin + i] >> 64), (unsigned long long)sorted[begin + i]);
          break;
        }
    }
    free(sorted);
    free(mine);
  }
  free(all);
  free(lens);
  free(displs);
  free(pairs);
  free(cuts);
  free(run_offsets);
  free(wide);
  free(keys);
}

/* h5g_cuts_at on this rank's runs alone (MPI_COMM_SELF), as the pipeline's merge in chunks uses
 * it: for every target t, run j must give exactly its elements among the first t of the stable
 * merge (by key, then run, then position), computed here by a sort of (key, run, position). */
static void check_local_cuts(int dist, uint64_t n, unsigned width, size_t nruns, int m) {
  uint64_t rng = 0x77 + (uint64_t)rank * 17 + (uint64_t)dist * 131 + n * 31 + width + nruns + (uint64_t)m;
  void *keys = malloc(n * width + 1);
  triple *triples = malloc((n + 1) * sizeof(triple));
  h5g_u128 *wide = malloc((n + 1) * sizeof(h5g_u128));
  uint64_t *run_offsets = malloc((nruns + 1) * sizeof(uint64_t)), *targets = malloc(((size_t)m + 1) * sizeof(uint64_t));
  uint64_t *cuts = malloc(((size_t)m + 2) * nruns * sizeof(uint64_t)), *taken = calloc(nruns, sizeof(uint64_t));
  for (size_t j = 0; j <= nruns; j++) /* uneven runs, some empty */
    run_offsets[j] = j == nruns ? n : h5g_share_begin(j * j, n, nruns * nruns);
  for (uint64_t i = 0; i < n; i++) wide[i] = make_key(dist, &rng, width, n);
  for (size_t j = 0; j < nruns; j++)
    qsort(wide + run_offsets[j], run_offsets[j + 1] - run_offsets[j], sizeof(h5g_u128), test_compare_u128);
  for (size_t j = 0; j < nruns; j++)
    for (uint64_t i = run_offsets[j]; i < run_offsets[j + 1]; i++) {
      test_store(keys, i, width, wide[i]);
      triples[i] = (triple){wide[i], j, i};
    }
  qsort(triples, n, sizeof(triple), compare_triple);
  for (int k = 0; k < m; k++) targets[k] = h5g_share_begin((uint64_t)k + 1, n, (uint64_t)m); /* last: n */
  int status = h5g_cuts_at(MPI_COMM_SELF, keys, width, run_offsets, nruns, targets, m, cuts);
  EXPECT(status == 0, "h5g_cuts_at failed: %s", h5g_error_message());
  uint64_t merged = 0;
  for (int k = 0; k <= m; k++) {
    uint64_t target = k < m ? targets[k] : n;
    for (; merged < target; merged++) taken[triples[merged].run]++;
    for (size_t j = 0; j < nruns; j++) {
      uint64_t cut = cuts[(size_t)(k + 1) * nruns + j] - run_offsets[j];
      EXPECT(cut == taken[j], "local cuts dist %d n=%llu w=%u runs=%zu: cut %d of run %zu at %llu, "
             "the stable merge takes %llu", dist, (unsigned long long)n, width, nruns, k, j,
             (unsigned long long)cut, (unsigned long long)taken[j]);
    }
  }
  free(taken);
  free(cuts);
  free(targets);
  free(run_offsets);
  free(wide);
  free(triples);
  free(keys);
}

/* Every rank but the last holds UINT64_MAX - rank and 2^63 + rank, the last rank (the only one
 * at one rank) 5 and 7: the minima are 5 and 7 unless there are several ranks, when the second is
 * 7; the maxima UINT64_MAX and 2^63 + P - 2 (one rank: 5 and 7). */
static void check_reduce_u64(void) {
  const uint64_t top = (uint64_t)1 << 63;
  int last = rank == size - 1;
  uint64_t mine[2] = {last ? 5 : UINT64_MAX - (uint64_t)rank, last ? 7 : top + (uint64_t)rank};
  uint64_t least[2] = {0, 0}, most[2] = {0, 0};
  EXPECT(h5g_allreduce_u64(MPI_COMM_WORLD, mine, least, 2, H5G_REDUCE_MIN) == H5G_OK, "min");
  EXPECT(h5g_allreduce_u64(MPI_COMM_WORLD, mine, most, 2, H5G_REDUCE_MAX) == H5G_OK, "max");
  EXPECT(least[0] == 5 && least[1] == 7, "minimum %llu %llu, expected 5 7",
         (unsigned long long)least[0], (unsigned long long)least[1]);
  uint64_t max0 = size == 1 ? 5 : UINT64_MAX, max1 = size == 1 ? 7 : top + (uint64_t)(size - 2);
  EXPECT(most[0] == max0 && most[1] == max1, "maximum %llu %llu, expected %llu %llu",
         (unsigned long long)most[0], (unsigned long long)most[1], (unsigned long long)max0,
         (unsigned long long)max1);
}

/* Element i from s to d encodes (s, d, i) so every misplaced element is caught. */
static uint64_t pattern(int s, int d, uint64_t i) { return ((uint64_t)s << 56) | ((uint64_t)d << 48) | i; }
static uint64_t pair_count(int s, int d, uint64_t scale) { return ((uint64_t)(s * 3 + d * 5) % 4) * scale + (uint64_t)(s == d); }

static void check_exchange(uint64_t scale, const char *limit) {
  if (limit) setenv("H5GSORT_MAX_MESSAGE_ELEMS", limit, 1);
  else unsetenv("H5GSORT_MAX_MESSAGE_ELEMS");
  uint64_t *send_counts = malloc(sizeof(uint64_t) * size), *recv_counts = malloc(sizeof(uint64_t) * size);
  uint64_t send_total = 0, recv_total = 0;
  for (int d = 0; d < size; d++) send_total += send_counts[d] = pair_count(rank, d, scale);
  EXPECT(h5g_exchange_counts(MPI_COMM_WORLD, send_counts, recv_counts, 1) == 0, "counts exchange failed");
  for (int s = 0; s < size; s++) {
    EXPECT(recv_counts[s] == pair_count(s, rank, scale), "count from %d wrong", s);
    recv_total += recv_counts[s];
  }
  uint64_t *send = malloc((send_total + 1) * sizeof(uint64_t)), *recv = malloc((recv_total + 1) * sizeof(uint64_t));
  for (int d = 0, k = 0; d < size; d++)
    for (uint64_t i = 0; i < send_counts[d]; i++) send[k++] = pattern(rank, d, i);
  EXPECT(h5g_exchange(MPI_COMM_WORLD, send, send_counts, recv, recv_counts, sizeof(uint64_t)) == 0,
         "exchange failed: %s", h5g_error_message());
  for (int s = 0, k = 0; s < size; s++)
    for (uint64_t i = 0; i < recv_counts[s]; i++, k++)
      if (recv[k] != pattern(s, rank, i)) {
        EXPECT(0, "limit %s: element %llu from %d is %llx", limit ? limit : "default",
               (unsigned long long)i, s, (unsigned long long)recv[k]);
        break;
      }
  free(send);
  free(recv);
  free(send_counts);
  free(recv_counts);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const uint64_t sizes[] = {0, 1, 2, 3, 5, 100, 1001, 20000};
  static const unsigned widths[] = {1, 2, 4, 8, 16};
  const size_t nwidths = sizeof widths / sizeof *widths;
  for (int dist = 0; dist < DIST_COUNT; dist++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (size_t w = 0; w < nwidths; w++)
        for (size_t nruns = 1; nruns <= 3; nruns += 2)
          for (int uneven = 0; uneven <= 1; uneven++) check_cuts(dist, sizes[s], widths[w], nruns, uneven);
  static const uint64_t local_sizes[] = {0, 1, 7, 1000, 30011};
  for (int dist = 0; dist < DIST_COUNT; dist++)
    for (size_t s = 0; s < sizeof local_sizes / sizeof *local_sizes; s++)
      for (size_t w = 0; w < nwidths; w++)
        for (size_t nruns = 1; nruns <= 9; nruns += 4)
          for (int m = 0; m <= 13; m += 13) check_local_cuts(dist, local_sizes[s], widths[w], nruns, m);
  check_exchange(1000, NULL);
  check_exchange(1000, "3");
  check_exchange(7, "1");
  check_exchange(0, "1");
  check_reduce_u64();
  int rc = test_summary_mpi(MPI_COMM_WORLD, "test_splitters");
  MPI_Finalize();
  return rc;
}
