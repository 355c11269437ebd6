/* CPU local sort benchmark: h5g_radix_sort against the C library's qsort on the same uniform
 * random data, one core. float64 goes through the ordered-bits transform (and back) for ours, and
 * through a float comparator for qsort; both costs are inside the timed region.
 * Pair rows (record sorts): h5g_radix_sort with values, a uint64 (the source index) moving with
 * each key, stable, against qsort of (key, index) records compared by key then index (the same
 * stable order); filling the values and building the records is outside the timed region.
 *
 *   bench_cpu_sort [--large] [--repeats R]
 *
 * Sizes 10^6 and 10^7; --large adds 10^8 (about 6.4 GB of memory). Each measurement is one
 * untimed warm-up then the median of R runs (default 5); qsort at 10^8 runs once, without a
 * warm-up, because one run takes tens of seconds. Every result is checked against qsort's. */
#include "base/keys.h"
#include "cpu/radix_sort.h"
#include "tests/support/check.h"
#include "tests/support/keys.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_REPEATS = 101, QSORT_SINGLE_RUN_FROM = 100000000 };

typedef enum { TYPE_U32, TYPE_U64, TYPE_F64, TYPE_U32_PAIRS, TYPE_U64_PAIRS } bench_type;

static const struct {
  const char *name;
  unsigned width;
  h5g_key_class cls;
  int pairs; /* a uint64 value moves with each key */
} bench_types[] = {{"uint32", 4, H5G_KEY_UNSIGNED, 0},
                   {"uint64", 8, H5G_KEY_UNSIGNED, 0},
                   {"float64", 8, H5G_KEY_FLOAT, 0},
                   {"uint32 + uint64 value", 4, H5G_KEY_UNSIGNED, 1},
                   {"uint64 + uint64 value", 8, H5G_KEY_UNSIGNED, 1}};

/* qsort's input for the pair rows: a 4-byte key pads its record to 16 bytes anyway */
typedef struct {
  uint64_t key, value;
} record;

/* Every buffer holds the largest n; the value and record buffers are used by pair rows only. */
typedef struct {
  void *input, *ours, *reference, *scratch;
  uint64_t *values, *scratch_values;
  record *records;
} buffers;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}
static int compare_f64(const void *a, const void *b) { /* the data holds no NaN */
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static int compare_records(const void *a, const void *b) { /* key, then value: stable */
  const record *x = a, *y = b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  return (x->value > y->value) - (x->value < y->value);
}

/* Uniform random keys; float64 keys are uniform in (-1e6, 1e6) with full mantissas. */
static void fill(void *keys, size_t n, bench_type type, uint64_t seed) {
  for (size_t i = 0; i < n; i++) {
    uint64_t r = test_rand(&seed);
    switch (type) {
    case TYPE_U32:
    case TYPE_U32_PAIRS: ((uint32_t *)keys)[i] = (uint32_t)r; break;
    case TYPE_U64:
    case TYPE_U64_PAIRS: ((uint64_t *)keys)[i] = r; break;
    case TYPE_F64: ((double *)keys)[i] = ((double)(r >> 11) * 0x1p-53 - 0.5) * 2e6; break;
    }
  }
}

static uint64_t load_key(const void *keys, size_t i, unsigned width) {
  return width == 4 ? ((const uint32_t *)keys)[i] : ((const uint64_t *)keys)[i];
}

/* Sorts a fresh copy of b->input (values: the source index) into b->ours and b->values. */
static double sort_ours(buffers *b, size_t n, bench_type type) {
  const h5g_keyspec ks = {bench_types[type].cls, bench_types[type].width, 0, H5G_NA_DEFAULT};
  memcpy(b->ours, b->input, n * ks.width);
  if (bench_types[type].pairs)
    for (size_t i = 0; i < n; i++) b->values[i] = i;
  const double start = now_seconds();
  if (type == TYPE_F64) h5g_keys_to_ordered(b->ours, n, &ks);
  if (bench_types[type].pairs)
    h5g_radix_sort(b->ours, b->values, b->scratch, b->scratch_values, n, ks.width);
  else
    h5g_radix_sort(b->ours, NULL, b->scratch, NULL, n, ks.width);
  if (type == TYPE_F64) h5g_keys_from_ordered(b->ours, n, &ks);
  return now_seconds() - start;
}

/* Sorts a fresh copy of b->input into b->reference, or for pair rows into b->records. */
static double sort_qsort(buffers *b, size_t n, bench_type type) {
  int (*const compare[])(const void *, const void *) = {compare_u32, test_compare_u64, compare_f64};
  const unsigned width = bench_types[type].width;
  if (bench_types[type].pairs) {
    for (size_t i = 0; i < n; i++) b->records[i] = (record){load_key(b->input, i, width), i};
    const double start = now_seconds();
    qsort(b->records, n, sizeof *b->records, compare_records);
    return now_seconds() - start;
  }
  memcpy(b->reference, b->input, n * width);
  const double start = now_seconds();
  qsort(b->reference, n, width, compare[type]);
  return now_seconds() - start;
}

/* Whether ours equals qsort's result, keys and (pair rows) values. */
static int same_result(const buffers *b, size_t n, bench_type type) {
  const unsigned width = bench_types[type].width;
  if (!bench_types[type].pairs) return memcmp(b->ours, b->reference, n * width) == 0;
  for (size_t i = 0; i < n; i++)
    if (load_key(b->ours, i, width) != b->records[i].key || b->values[i] != b->records[i].value)
      return 0;
  return 1;
}

static double median(double *v, int count) {
  qsort(v, (size_t)count, sizeof *v, compare_f64);
  return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

/* Median seconds of `repeats` sorts of a fresh copy of the input (after `warmups` untimed ones);
 * the buffers keep the last result. */
static double time_sort(int use_qsort, buffers *b, size_t n, bench_type type, int warmups,
                        int repeats) {
  double seconds[MAX_REPEATS];
  for (int run = -warmups; run < repeats; run++) {
    const double t = use_qsort ? sort_qsort(b, n, type) : sort_ours(b, n, type);
    if (run >= 0) seconds[run] = t;
  }
  return median(seconds, repeats);
}

int main(int argc, char **argv) {
  int large = 0, repeats = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--large") == 0) {
      large = 1;
    } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = atoi(argv[++i]);
      if (repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "bench_cpu_sort: --repeats must be 1..%d\n", MAX_REPEATS);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: bench_cpu_sort [--large] [--repeats R]\n");
      return 2;
    }
  }
  const size_t sizes[] = {1000000, 10000000, 100000000};
  const size_t nsizes = large ? 3 : 2, max_n = sizes[nsizes - 1], max_bytes = max_n * 8;
  buffers b = {.input = malloc(max_bytes),
               .ours = malloc(max_bytes),
               .reference = malloc(max_bytes),
               .scratch = malloc(max_bytes),
               .values = malloc(max_n * sizeof(uint64_t)),
               .scratch_values = malloc(max_n * sizeof(uint64_t)),
               .records = malloc(max_n * sizeof(record))};
  int status = 0;
  if (!b.input || !b.ours || !b.reference || !b.scratch || !b.values || !b.scratch_values ||
      !b.records) {
    fprintf(stderr, "bench_cpu_sort: out of memory (%zu bytes per buffer)\n", max_bytes);
    status = 1;
    goto done;
  }

  printf("| type | n | ours M keys/s | qsort M keys/s | speedup |\n");
  printf("|---|---:|---:|---:|---:|\n");
  for (size_t t = 0; t < sizeof bench_types / sizeof bench_types[0]; t++) {
    for (size_t s = 0; s < nsizes; s++) {
      const size_t n = sizes[s];
      const int qsort_once = n >= QSORT_SINGLE_RUN_FROM;
      fill(b.input, n, (bench_type)t, 1234 + t);
      const double ours_s = time_sort(0, &b, n, (bench_type)t, 1, repeats);
      const double qsort_s =
          time_sort(1, &b, n, (bench_type)t, qsort_once ? 0 : 1, qsort_once ? 1 : repeats);
      const int same = same_result(&b, n, (bench_type)t);
      printf("| %s | %zu | %.1f | %.1f%s | %.1fx |%s\n", bench_types[t].name, n, 1e-6 * n / ours_s,
             1e-6 * n / qsort_s, qsort_once ? " (1 run)" : "", qsort_s / ours_s,
             same ? "" : " RESULT DIFFERS FROM QSORT");
      fflush(stdout);
      if (!same) status = 1;
    }
  }
done:
  free(b.input);
  free(b.ours);
  free(b.reference);
  free(b.scratch);
  free(b.values);
  free(b.scratch_values);
  free(b.records);
  return status;
}
