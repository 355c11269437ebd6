/* h5g_radix_sort against qsort, for every key width, many sizes and distributions, including
 * keys that differ only in the top or only in the low byte (so digit passes get skipped).
 * h5g_radix_sort with values on the same keys against a stable reference: qsort of (key, original
 * index) pairs by key, then index; all-equal and few-unique keys prove stability. */
#include "cpu/radix_sort.h"
#include "tests/support/check.h"
#include "tests/support/keys.h"

#include <stdlib.h>
#include <string.h>

typedef enum {
  DIST_RANDOM,
  DIST_SORTED,
  DIST_REVERSED,
  DIST_ALL_EQUAL,
  DIST_FEW_UNIQUE,
  DIST_TOP_BYTE_ONLY,
  DIST_LOW_BYTE_ONLY,
  DIST_COUNT
} distribution;

static const char *const dist_names[DIST_COUNT] = {
    "random", "sorted", "reversed", "all-equal", "few-unique", "top-byte-only", "low-byte-only"};

static h5g_u128 make_key(distribution dist, size_t i, size_t n, unsigned width, uint64_t *rng,
                         h5g_u128 base) {
  const unsigned bits = 8 * width;
  const h5g_u128 mask = test_width_mask(width), r = test_rand128(rng);
  switch (dist) {
  case DIST_RANDOM: return r & mask;
  /* sorted and reversed spread over the whole range so every digit varies */
  case DIST_SORTED:
  case DIST_REVERSED: {
    const h5g_u128 position = dist == DIST_SORTED ? i : n - 1 - i, step = mask / n;
    /* 1- and 2-byte keys: step may be 0, and (mask + 1) * position then fits */
    return step ? position * step : position * (mask + 1) / n;
  }
  case DIST_ALL_EQUAL: return base;
  case DIST_FEW_UNIQUE: return (base * (r % 5 + 1)) & mask;
  case DIST_TOP_BYTE_ONLY:
    return ((base & (mask >> 8)) | (r << (bits - 8))) & mask; /* same low bytes for all keys */
  default: return ((base & ~(h5g_u128)0xff) | (r & 0xff)) & mask; /* same high bytes */
  }
}

static int compare_u8(const void *a, const void *b) {
  return (int)*(const uint8_t *)a - (int)*(const uint8_t *)b;
}
static int compare_u16(const void *a, const void *b) {
  return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}
static int compare_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}


/* Sorts a copy of `input` with h5g_radix_sort and values (test_value_of(i) riding with key i)
 * and compares keys and values with the stable reference. */
static void check_pairs(const uint8_t *input, size_t n, unsigned width, const char *dist_name) {
  test_pairs t;
  if (!test_pairs_setup(&t, input, n, width)) {
    EXPECT(0, "out of memory for n = %zu", n);
    return;
  }
  h5g_radix_sort(t.keys, t.values, t.scratch, t.scratch_values, n, width);
  size_t first_diff = test_pairs_first_diff(&t, n, width);
  EXPECT(first_diff == n, "pairs width %u n %zu %s: differs from the stable reference at %zu",
         width, n, dist_name, first_diff);
  test_pairs_free(&t);
}

static void check_case(unsigned width, size_t n, distribution dist, uint64_t *rng) {
  const size_t bytes = n * width;
  /* malloc(0) may return NULL; the sort must accept any pointers when n == 0 */
  uint8_t *keys = malloc(bytes + 1), *scratch = malloc(bytes + 1), *expected = malloc(bytes + 1);
  if (!keys || !scratch || !expected) {
    EXPECT(0, "out of memory for n = %zu", n);
    goto done;
  }
  const h5g_u128 base = test_rand128(rng) & test_width_mask(width);
  for (size_t i = 0; i < n; i++) test_store(keys, i, width, make_key(dist, i, n, width, rng, base));
  memcpy(expected, keys, bytes);
  check_pairs(keys, n, width, dist_names[dist]);
  int (*const compare[5])(const void *, const void *) = {compare_u8, compare_u16, compare_u32,
                                                         test_compare_u64, test_compare_u128};
  qsort(expected, n, width, compare[width == 1 ? 0 : width == 2 ? 1 : width == 4 ? 2 : width == 8 ? 3 : 4]);

  h5g_radix_sort(keys, NULL, scratch, NULL, n, width);
  size_t first_diff = 0;
  while (first_diff < bytes && keys[first_diff] == expected[first_diff]) first_diff++;
  EXPECT(first_diff == bytes, "width %u n %zu %s: result differs from qsort at key %zu", width, n,
         dist_names[dist], first_diff / width);
done:
  free(keys);
  free(scratch);
  free(expected);
}

int main(void) {
  uint64_t rng = 42;
  const unsigned widths[] = {1, 2, 4, 8, 16};
  const size_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 1000, 65537, 1000000};
  for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int d = 0; d < DIST_COUNT; d++) check_case(widths[w], sizes[s], (distribution)d, &rng);
  /* n == 0 with no buffers at all */
  h5g_radix_sort(NULL, NULL, NULL, NULL, 0, 4);
  return test_summary("test_radix_sort");
}
