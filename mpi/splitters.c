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
static uint64_t count_keys(const local_runs *lr, h5g_u128 x, int upper) {
  uint64_t total = 0;
  for (size_t j = 0; j < lr->nruns; j++) {
    const char *run = (const char *)lr->keys + lr->run_offsets[j] * lr->width;
    size_t len = lr->run_offsets[j + 1] - lr->run_offsets[j];
    total += upper ? h5g_keys_upper_bound(run, len, lr->width, x)
                   : h5g_keys_lower_bound(run, len, lr->width, x);
  }
  return total;
}

/* A key value in MPI messages: two uint64 words, the high one first. */
enum { VALUE_WORDS = 2 };
static void put_value(uint64_t *words, h5g_u128 v) {
  words[0] = (uint64_t)(v >> 64);
  words[1] = (uint64_t)v;
}
static h5g_u128 get_value(const uint64_t *words) { return (h5g_u128)words[0] << 64 | words[1]; }

/* The least and the largest key over all ranks (glo > ghi when no rank holds a key). Keys are
 * up to 128 bits, more than an MPI integer type holds: every rank's pair is gathered. */
static int global_range(MPI_Comm comm, const local_runs *lr, h5g_u128 *glo, h5g_u128 *ghi) {
  int rc = H5G_OK, size;
  uint64_t *all = NULL, mine[1 + 2 * VALUE_WORDS] = {0};
  CHECK_MPI(MPI_Comm_size(comm, &size));
  size_t bytes = sizeof mine * (size_t)size;
  all = malloc(bytes);
  CHECK(h5g_agree_alloc(comm, all != NULL, bytes));
  for (size_t j = 0; j < lr->nruns; j++)
    if (lr->run_offsets[j + 1] > lr->run_offsets[j]) {
      h5g_u128 first = h5g_key_load(lr->keys, lr->run_offsets[j], lr->width);
      h5g_u128 last = h5g_key_load(lr->keys, lr->run_offsets[j + 1] - 1, lr->width);
      if (!mine[0] || first < get_value(mine + 1)) put_value(mine + 1, first);
      if (!mine[0] || last > get_value(mine + 1 + VALUE_WORDS))
        put_value(mine + 1 + VALUE_WORDS, last);
      mine[0] = 1;
    }
  CHECK_MPI(MPI_Allgather(mine, 1 + 2 * VALUE_WORDS, MPI_UINT64_T, all, 1 + 2 * VALUE_WORDS,
                          MPI_UINT64_T, comm));
  *glo = ~(h5g_u128)0;
  *ghi = 0;
  for (int r = 0; r < size; r++) {
    const uint64_t *e = all + (size_t)r * (1 + 2 * VALUE_WORDS);
    if (!e[0]) continue;
    if (get_value(e + 1) < *glo) *glo = get_value(e + 1);
    if (get_value(e + 1 + VALUE_WORDS) > *ghi) *ghi = get_value(e + 1 + VALUE_WORDS);
  }
done:
  free(all);
  return rc;
}

/* values[k] := the key of global rank targets[k], for m targets at once. */
static int select_values(MPI_Comm comm, const local_runs *lr, const uint64_t *targets, int m,
                         h5g_u128 *values) {
  int rc = H5G_OK;
  h5g_u128 glo = 1, ghi = 0; /* no keys until global_range says */
  uint64_t *local = malloc(sizeof(uint64_t) * (size_t)m * 2);
  uint64_t *global = local + m;
  CHECK(h5g_agree_alloc(comm, local != NULL, sizeof(uint64_t) * (size_t)m * 2));
  CHECK(global_range(comm, lr, &glo, &ghi));
  memset(values, 0, sizeof(h5g_u128) * (size_t)m);
  if (glo > ghi) goto done; /* no keys on any rank: every cut is at the run starts */
  int bits = 0;
  for (h5g_u128 span = ghi - glo; span; span >>= 1) bits++;
  /* Binary lifting: values[k] - glo is the least x with count(<= glo + x) > targets[k]. */
  for (int b = bits - 1; b >= 0; b--) {
    h5g_u128 step = (h5g_u128)1 << b;
    for (int k = 0; k < m; k++) {
      h5g_u128 offset = values[k] + step - 1; /* may pass ghi - glo; then every key is <= */
      local[k] = count_keys(lr, offset < ghi - glo ? glo + offset : ghi, 1);
    }
    CHECK_MPI(MPI_Allreduce(local, global, m, MPI_UINT64_T, MPI_SUM, comm));
    for (int k = 0; k < m; k++)
      if (global[k] <= targets[k]) values[k] += step;
  }
  /* a target of every key (or more) lifts past the span: its value is the largest key, and
   * glo + x would wrap for keys of the widest type */
  for (int k = 0; k < m; k++) values[k] = values[k] > ghi - glo ? ghi : glo + values[k];
done:
  free(local);
  return rc;
}

int h5g_cuts_at(MPI_Comm comm, const void *keys, unsigned width, const uint64_t *run_offsets,
                size_t nruns, const uint64_t *targets, int m, uint64_t *cuts) {
  int rc = H5G_OK, rank;
  uint64_t *work = NULL;
  h5g_u128 *values = NULL;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  for (size_t j = 0; j < nruns; j++) {
    cuts[j] = run_offsets[j];
    cuts[((size_t)m + 1) * nruns + j] = run_offsets[j + 1];
  }
  if (m == 0) goto done;
  local_runs lr = {keys, width, run_offsets, nruns};
  size_t work_len = (size_t)m * 4;
  work = calloc(work_len, sizeof(uint64_t));
  values = malloc(sizeof(h5g_u128) * (size_t)m);
  CHECK(h5g_agree_alloc(comm, work && values,
                        work_len * sizeof(uint64_t) + sizeof(h5g_u128) * (size_t)m));
  uint64_t *lt_local = work, *lt_global = work + (size_t)m, *eq_local = work + 2 * (size_t)m,
           *eq_before = work + 3 * (size_t)m;
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
  free(values);
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
