/* h5g_merge_runs against qsort: run counts 1, 2, 3, 17 and random ones, empty runs, n = 0, and
 * few distinct values (many ties across runs), for every key width (1 to 16 bytes). h5g_merge_runs with values
 * on the same runs against a stable reference: qsort of (key, position) pairs by key, then
 * position, so equal keys of an earlier run come first; few-unique and all-equal keys prove
 * stability. */
#include "cpu/merge.h"
#include "tests/support/check.h"
#include "tests/support/keys.h"

#include <stdlib.h>
#include <string.h>

/* Byte-wise key order for the sorted runs: little-endian host, so compare keys as integers. */
static unsigned g_width;
static int compare_keys(const void *a, const void *b) {
  h5g_u128 x = test_load_key(a, 0, g_width), y = test_load_key(b, 0, g_width);
  return (x > y) - (x < y);
}

static void sort_keys(void *keys, size_t n, unsigned width) {
  g_width = width;
  qsort(keys, n, width, compare_keys);
}


/* Merges a copy of the sorted runs `runs` with h5g_merge_runs and values (test_value_of(p) riding
 * with the key at position p) and compares keys and values with the stable reference. */
static void check_pairs(const uint8_t *runs, size_t n, unsigned width, const uint64_t *offsets,
                        size_t nruns, const char *what) {
  test_pairs t;
  if (!test_pairs_setup(&t, runs, n, width)) {
    EXPECT(0, "out of memory for n = %zu", n);
    return;
  }
  h5g_merge_runs(t.keys, t.values, t.scratch, t.scratch_values, n, width, offsets, nruns);
  size_t first_diff = test_pairs_first_diff(&t, n, width);
  EXPECT(first_diff == n, "pairs width %u n %zu nruns %zu%s: differs from the stable reference "
         "at %zu", width, n, nruns, what, first_diff);
  test_pairs_free(&t);
}

/* Splits n keys into nruns runs of random lengths (some empty when `with_empty`). */
static void random_offsets(uint64_t *offsets, size_t n, size_t nruns, int with_empty,
                           uint64_t *rng) {
  offsets[0] = 0;
  offsets[nruns] = n;
  for (size_t r = 1; r < nruns; r++) offsets[r] = n ? test_rand(rng) % (n + 1) : 0;
  qsort(offsets + 1, nruns > 1 ? nruns - 1 : 0, sizeof *offsets, test_compare_u64);
  if (with_empty && nruns >= 3) offsets[2] = offsets[1]; /* run 1 empty */
  if (with_empty && nruns >= 2) offsets[nruns - 1] = n;  /* last run empty */
}

typedef enum { KEYS_RANDOM, KEYS_FEW_UNIQUE, KEYS_ALL_EQUAL, KEYS_COUNT } key_distribution;

static const char *const key_distribution_names[KEYS_COUNT] = {"", " few-unique", " all-equal"};

static void check_case(unsigned width, size_t n, size_t nruns, int with_empty,
                       key_distribution dist, uint64_t *rng) {
  const size_t bytes = n * width;
  uint8_t *keys = malloc(bytes + 1), *scratch = malloc(bytes + 1), *expected = malloc(bytes + 1);
  uint64_t *offsets = malloc((nruns + 1) * sizeof *offsets);
  if (!keys || !scratch || !expected || !offsets) {
    EXPECT(0, "out of memory for n = %zu", n);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    /* few unique: three values spread over the whole width (16 bytes: they differ in the high half) */
    const h5g_u128 r = test_rand128(rng);
    test_store(keys, i, width,
               dist == KEYS_RANDOM ? r : dist == KEYS_FEW_UNIQUE ? r % 3 * (test_width_mask(width) / 3) : 5);
  }
  random_offsets(offsets, n, nruns, with_empty, rng);
  for (size_t r = 0; r < nruns; r++)
    sort_keys(keys + offsets[r] * width, (size_t)(offsets[r + 1] - offsets[r]), width);
  memcpy(expected, keys, bytes);
  sort_keys(expected, n, width);
  char what[64];
  snprintf(what, sizeof what, "%s%s", with_empty ? " with empty runs" : "",
           key_distribution_names[dist]);
  check_pairs(keys, n, width, offsets, nruns, what);

  h5g_merge_runs(keys, NULL, scratch, NULL, n, width, offsets, nruns);
  size_t first_diff = 0;
  while (first_diff < bytes && keys[first_diff] == expected[first_diff]) first_diff++;
  EXPECT(first_diff == bytes, "width %u n %zu nruns %zu%s: differs from qsort at key %zu", width,
         n, nruns, what, first_diff / width);
done:
  free(keys);
  free(scratch);
  free(expected);
  free(offsets);
}

int main(void) {
  uint64_t rng = 7;
  const unsigned widths[] = {1, 2, 4, 8, 16};
  const size_t sizes[] = {0, 1, 2, 5, 100, 4099, 50000};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      size_t run_counts[] = {1, 2, 3, 4, 17, 64, 1 + (size_t)(test_rand(&rng) % 40)};
      for (size_t c = 0; c < sizeof run_counts / sizeof run_counts[0]; c++)
        for (int with_empty = 0; with_empty <= 1; with_empty++)
          for (int dist = 0; dist < KEYS_COUNT; dist++)
            check_case(widths[w], sizes[s], run_counts[c], with_empty, (key_distribution)dist,
                       &rng);
    }
  }
  /* n == 0: no runs at all, and several empty runs, with no buffers */
  const uint64_t zero_offsets[4] = {0, 0, 0, 0};
  h5g_merge_runs(NULL, NULL, NULL, NULL, 0, 8, zero_offsets, 0);
  h5g_merge_runs(NULL, NULL, NULL, NULL, 0, 8, zero_offsets, 3);
  return test_summary("test_merge");
}
