#include "mpi/splitters.h"

#include <stdlib.h>
#include <string.h>

#include "mpi/agree.h"
#include "mpi/topology.h"
#include "base/error.h"
#include "base/keys.h"

typedef struct {
  const void *keys;
  unsigned width;
  const uint64_t *run_offsets;
  size_t nruns;
} local_runs;

/* Number of local keys <= x (upper) or < x (!upper), summed over runs. */
static uint64_t count_keys(const local_runs *lr, uint64_t x, int upper) {
  uint64_t total = 0;
  for (size_t j = 0; j < lr->nruns; j++) {
    const char *run = (const char *)lr->keys + lr->run_offsets[j] * lr->width;
    size_t len = lr->run_offsets[j + 1] - lr->run_offsets[j];
    total += upper ? h5g_keys_upper_bound(run, len, lr->width, x)
                   : h5g_keys_lower_bound(run, len, lr->width, x);
  }
  return total;
}

static uint64_t local_min_key(const local_runs *lr) {
  uint64_t best = UINT64_MAX;
  for (size_t j = 0; j < lr->nruns; j++)
    if (lr->run_offsets[j + 1] > lr->run_offsets[j]) {
      uint64_t first = h5g_key_load(lr->keys, lr->run_offsets[j], lr->width);
      if (first < best) best = first;
    }
  return best;
}

static uint64_t local_max_key(const local_runs *lr) {
  uint64_t best = 0;
  for (size_t j = 0; j < lr->nruns; j++)
    if (lr->run_offsets[j + 1] > lr->run_offsets[j]) {
      uint64_t last = h5g_key_load(lr->keys, lr->run_offsets[j + 1] - 1, lr->width);
      if (last > best) best = last;
    }
  return best;
}

/* values[k] := the key of global rank targets[k], for m targets at once. */
static int select_values(MPI_Comm comm, const local_runs *lr, const uint64_t *targets, int m,
                         uint64_t *values) {
  int rc = H5G_OK;
  uint64_t *local = malloc(sizeof(uint64_t) * (size_t)m * 2);
  uint64_t *global = local + m;
  CHECK(h5g_agree_alloc(comm, local != NULL, sizeof(uint64_t) * (size_t)m * 2));
  uint64_t lo = local_min_key(lr), hi = local_max_key(lr), glo, ghi;
  CHECK_MPI(MPI_Allreduce(&lo, &glo, 1, MPI_UINT64_T, MPI_MIN, comm));
  CHECK_MPI(MPI_Allreduce(&hi, &ghi, 1, MPI_UINT64_T, MPI_MAX, comm));
  memset(values, 0, sizeof(uint64_t) * (size_t)m);
  if (glo > ghi) goto done; /* no keys on any rank: every cut is at the run starts */
  int bits = 0;
  for (uint64_t span = ghi - glo; span; span >>= 1) bits++;
  /* Binary lifting: values[k] - glo is the least x with count(<= glo + x) > targets[k]. */
  for (int b = bits - 1; b >= 0; b--) {
    uint64_t step = (uint64_t)1 << b;
    for (int k = 0; k < m; k++) {
      uint64_t offset = values[k] + step - 1; /* may pass ghi - glo; then every key is <= */
      local[k] = count_keys(lr, offset < ghi - glo ? glo + offset : ghi, 1);
    }
    CHECK_MPI(MPI_Allreduce(local, global, m, MPI_UINT64_T, MPI_SUM, comm));
    for (int k = 0; k < m; k++)
      if (global[k] <= targets[k]) values[k] += step;
  }
  /* a target of every key (or more) lifts past the span: its value is the largest key, and
   * glo + x would wrap for 64-bit keys */
  for (int k = 0; k < m; k++) values[k] = values[k] > ghi - glo ? ghi : glo + values[k];
done:
  free(local);
  return rc;
}

int h5g_cuts_at(MPI_Comm comm, const void *keys, unsigned width, const uint64_t *run_offsets,
                size_t nruns, const uint64_t *targets, int m, uint64_t *cuts) {
  int rc = H5G_OK, rank;
  uint64_t *work = NULL;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  for (size_t j = 0; j < nruns; j++) {
    cuts[j] = run_offsets[j];
    cuts[((size_t)m + 1) * nruns + j] = run_offsets[j + 1];
  }
  if (m == 0) goto done;
  local_runs lr = {keys, width, run_offsets, nruns};
  size_t work_len = (size_t)m * 5;
  work = calloc(work_len, sizeof(uint64_t));
  CHECK(h5g_agree_alloc(comm, work != NULL, work_len * sizeof(uint64_t)));
  uint64_t *values = work, *lt_local = work + (size_t)m, *lt_global = work + 2 * (size_t)m,
           *eq_local = work + 3 * (size_t)m, *eq_before = work + 4 * (size_t)m;
  CHECK(select_values(comm, &lr, targets, m, values));
  for (int k = 0; k < m; k++) {
    lt_local[k] = count_keys(&lr, values[k], 0);
    eq_local[k] = count_keys(&lr, values[k], 1) - lt_local[k];
  }
  CHECK_MPI(MPI_Allreduce(lt_local, lt_global, m, MPI_UINT64_T, MPI_SUM, comm));
  CHECK_MPI(MPI_Exscan(eq_local, eq_before, m, MPI_UINT64_T, MPI_SUM, comm));
  if (rank == 0) memset(eq_before, 0, sizeof(uint64_t) * (size_t)m);
  for (int k = 0; k < m; k++) {
    /* Keys equal to v_k that go before cut k: the first (t_k - lt) of them in rank order. */
    uint64_t wanted = targets[k] - lt_global[k];
    uint64_t take = wanted > eq_before[k] ? wanted - eq_before[k] : 0;
    if (take > eq_local[k]) take = eq_local[k];
    for (size_t j = 0; j < nruns; j++) {
      const char *run = (const char *)keys + run_offsets[j] * width;
      size_t len = run_offsets[j + 1] - run_offsets[j];
      uint64_t lower = h5g_keys_lower_bound(run, len, width, values[k]);
      uint64_t equal = h5g_keys_upper_bound(run, len, width, values[k]) - lower;
      uint64_t here = take < equal ? take : equal;
      take -= here;
      cuts[(size_t)(k + 1) * nruns + j] = run_offsets[j] + lower + here;
    }
  }
done:
  free(work);
  return rc;
}

int h5g_exact_cuts(MPI_Comm comm, const void *keys, unsigned width, const uint64_t *run_offsets,
                   size_t nruns, uint64_t n_global, uint64_t *cuts) {
  int rc = H5G_OK, size;
  uint64_t *targets = NULL;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  targets = malloc(sizeof(uint64_t) * (size_t)size);
  CHECK(h5g_agree_alloc(comm, targets != NULL, sizeof(uint64_t) * (size_t)size));
  for (int k = 0; k < size - 1; k++) targets[k] = h5g_share_begin((uint64_t)k + 1, n_global, size);
  CHECK(h5g_cuts_at(comm, keys, width, run_offsets, nruns, targets, size - 1, cuts));
done:
  free(targets);
  return rc;
}
