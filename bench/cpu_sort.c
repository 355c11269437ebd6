/* CPU local sort benchmark: h5g_radix_sort against the C library's qsort on the same uniform
 * random data, one core. float64 goes through the ordered-bits transform (and back) for ours, and
 * through a float comparator for qsort; both costs are inside the timed region.
 *
 *   bench_cpu_sort [--large] [--repeats R]
 *
 * Sizes 10^6 and 10^7; --large adds 10^8 (about 2.4 GB of memory). Each measurement is one
 * untimed warm-up then the median of R runs (default 5); qsort at 10^8 runs once, without a
 * warm-up, because one run takes tens of seconds. Every result is checked against qsort's. */
#include "src/keys.h"
#include "src/radix_sort.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_REPEATS = 101, QSORT_SINGLE_RUN_FROM = 100000000 };

typedef enum { TYPE_U32, TYPE_U64, TYPE_F64 } bench_type;

static const struct {
  const char *name;
  unsigned width;
  h5g_key_class cls;
} bench_types[] = {
    {"uint32", 4, H5G_KEY_UNSIGNED}, {"uint64", 8, H5G_KEY_UNSIGNED}, {"float64", 8, H5G_KEY_FLOAT}};

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int compare_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}
static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}
static int compare_f64(const void *a, const void *b) { /* the data holds no NaN */
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Uniform random keys; float64 keys are uniform in (-1e6, 1e6) with full mantissas. */
static void fill(void *keys, size_t n, bench_type type, uint64_t seed) {
  for (size_t i = 0; i < n; i++) {
    uint64_t r = next_random(&seed);
    switch (type) {
    case TYPE_U32: ((uint32_t *)keys)[i] = (uint32_t)r; break;
    case TYPE_U64: ((uint64_t *)keys)[i] = r; break;
    case TYPE_F64: ((double *)keys)[i] = ((double)(r >> 11) * 0x1p-53 - 0.5) * 2e6; break;
    }
  }
}

static double sort_ours(void *keys, void *scratch, size_t n, bench_type type) {
  const h5g_keyspec ks = {bench_types[type].cls, bench_types[type].width, 0};
  const double start = now_seconds();
  if (type == TYPE_F64) h5g_keys_to_ordered(keys, n, &ks);
  h5g_radix_sort(keys, scratch, n, ks.width);
  if (type == TYPE_F64) h5g_keys_from_ordered(keys, n, &ks);
  return now_seconds() - start;
}

static double sort_qsort(void *keys, size_t n, bench_type type) {
  int (*const compare[])(const void *, const void *) = {compare_u32, compare_u64, compare_f64};
  const double start = now_seconds();
  qsort(keys, n, bench_types[type].width, compare[type]);
  return now_seconds() - start;
}

static double median(double *v, int count) {
  qsort(v, (size_t)count, sizeof *v, compare_f64);
  return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

/* Median seconds of `repeats` sorts of a fresh copy of `input` (after `warmups` untimed ones);
 * `output` keeps the last result. */
static double time_sort(int use_qsort, const void *input, void *output, void *scratch, size_t n,
                        bench_type type, int warmups, int repeats) {
  double seconds[MAX_REPEATS];
  const size_t bytes = n * bench_types[type].width;
  for (int run = -warmups; run < repeats; run++) {
    memcpy(output, input, bytes);
    double t = use_qsort ? sort_qsort(output, n, type) : sort_ours(output, scratch, n, type);
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
  const size_t nsizes = large ? 3 : 2, max_bytes = sizes[nsizes - 1] * 8;
  void *input = malloc(max_bytes), *ours = malloc(max_bytes), *reference = malloc(max_bytes),
       *scratch = malloc(max_bytes);
  if (!input || !ours || !reference || !scratch) {
    fprintf(stderr, "bench_cpu_sort: out of memory (%zu bytes per buffer)\n", max_bytes);
    return 1;
  }

  int status = 0;
  printf("| type | n | ours M keys/s | qsort M keys/s | speedup |\n");
  printf("|---|---:|---:|---:|---:|\n");
  for (size_t t = 0; t < sizeof bench_types / sizeof bench_types[0]; t++) {
    for (size_t s = 0; s < nsizes; s++) {
      const size_t n = sizes[s];
      const int qsort_once = n >= QSORT_SINGLE_RUN_FROM;
      fill(input, n, (bench_type)t, 1234 + t);
      const double ours_s = time_sort(0, input, ours, scratch, n, (bench_type)t, 1, repeats);
      const double qsort_s = time_sort(1, input, reference, NULL, n, (bench_type)t,
                                       qsort_once ? 0 : 1, qsort_once ? 1 : repeats);
      const int same = memcmp(ours, reference, n * bench_types[t].width) == 0;
      printf("| %s | %zu | %.1f | %.1f%s | %.1fx |%s\n", bench_types[t].name, n, 1e-6 * n / ours_s,
             1e-6 * n / qsort_s, qsort_once ? " (1 run)" : "", qsort_s / ours_s,
             same ? "" : " RESULT DIFFERS FROM QSORT");
      fflush(stdout);
      if (!same) status = 1;
    }
  }
  free(input);
  free(ours);
  free(reference);
  free(scratch);
  return status;
}
