/* CPU backend: our LSD radix sort and merge tree on host memory, scratch capped by the budget. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/backend.h"
#include "base/error.h"
#include "cpu/merge.h"
#include "cpu/radix_sort.h"

typedef struct {
  void *scratch;         /* keys */
  uint64_t *scratch_values;
  size_t scratch_bytes, scratch_values_bytes;
} cpu_state;

static size_t cpu_capacity(h5g_backend *be, unsigned width, int with_values) {
  /* keys + one scratch buffer of the same size, and the same for values */
  const uint64_t element = (uint64_t)width + (with_values ? sizeof(uint64_t) : 0);
  if (be->mem_budget == 0) return SIZE_MAX / (2 * (size_t)element);
  uint64_t n = be->mem_budget / (2 * element);
  return n ? (size_t)n : 1;
}

static int cpu_transform(h5g_backend *be, void *keys, size_t n, const h5g_keyspec *ks,
                         int inverse) {
  (void)be;
  if (inverse) h5g_keys_from_ordered(keys, n, ks);
  else h5g_keys_to_ordered(keys, n, ks);
  return H5G_OK;
}

/* Grows a scratch buffer to `bytes` (kept across calls; within budget by capacity()). */
static int ensure_scratch(void **buf, size_t *have, size_t bytes) {
  int rc = H5G_OK;
  if (bytes <= *have) goto done;
  free(*buf);
  *have = 0;
  *buf = malloc(bytes);
  CHECK_ALLOC(*buf, bytes);
  *have = bytes;
done:
  return rc;
}

static int ensure_scratch_for(cpu_state *st, size_t n, unsigned width, int with_values) {
  int rc = H5G_OK;
  CHECK(ensure_scratch(&st->scratch, &st->scratch_bytes, n * width));
  if (with_values)
    CHECK(ensure_scratch((void **)&st->scratch_values, &st->scratch_values_bytes,
                         n * sizeof(uint64_t)));
done:
  return rc;
}

static int cpu_sort(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width) {
  int rc = H5G_OK;
  cpu_state *st = be->impl;
  CHECK(ensure_scratch_for(st, n, width, values != NULL));
  h5g_radix_sort(keys, values, st->scratch, st->scratch_values, n, width);
done:
  return rc;
}

static int cpu_merge(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width,
                     const uint64_t *run_offsets, size_t nruns) {
  int rc = H5G_OK;
  cpu_state *st = be->impl;
  CHECK(ensure_scratch_for(st, n, width, values != NULL));
  h5g_merge_runs(keys, values, st->scratch, st->scratch_values, n, width, run_offsets, nruns);
done:
  return rc;
}

static void cpu_destroy(h5g_backend *be) {
  if (!be) return;
  cpu_state *st = be->impl;
  if (st) {
    free(st->scratch);
    free(st->scratch_values);
  }
  free(st);
  free(be);
}

int h5g_backend_cpu_create(h5g_backend **out, uint64_t mem_budget) {
  int rc = H5G_OK;
  h5g_backend *be = calloc(1, sizeof *be);
  CHECK_ALLOC(be, sizeof *be);
  be->impl = calloc(1, sizeof(cpu_state));
  CHECK_ALLOC(be->impl, sizeof(cpu_state));
  be->name = "cpu";
  snprintf(be->device_name, sizeof be->device_name, "host CPU");
  be->mem_budget = mem_budget;
  be->capacity = cpu_capacity;
  be->transform = cpu_transform;
  be->sort = cpu_sort;
  be->merge = cpu_merge;
  be->destroy = cpu_destroy;
  *out = be;
  be = NULL;
done:
  cpu_destroy(be);
  return rc;
}
