/* Key buffers of the CPU tests (C, usable from C++): keys of 1, 2, 4, 8 or 16 bytes held as raw
 * bits widened to 128 (the tests' neutral representation), and the stable reference of the
 * key+value sorts and merges. */
#ifndef H5G_TESTS_SUPPORT_KEYS_H
#define H5G_TESTS_SUPPORT_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/keys.h" /* h5g_u128 */
#include "tests/support/check.h"

static inline h5g_u128 test_width_mask(unsigned width) {
  return width >= 16 ? ~(h5g_u128)0 : ((h5g_u128)1 << (8 * width)) - 1;
}

/* Key i of an array of `width`-byte keys (little-endian host). */
static inline void test_store(void *keys, size_t i, unsigned width, h5g_u128 bits) {
  memcpy((uint8_t *)keys + i * width, &bits, width);
}
static inline h5g_u128 test_load_key(const void *keys, size_t i, unsigned width) {
  h5g_u128 bits = 0;
  memcpy(&bits, (const uint8_t *)keys + i * width, width);
  return bits;
}

static inline int test_compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}
static inline int test_compare_u128(const void *a, const void *b) {
  h5g_u128 x, y;
  memcpy(&x, a, sizeof x);
  memcpy(&y, b, sizeof y);
  return (x > y) - (x < y);
}

/* The stable reference of the key+value tests: (key, source position) pairs sorted by key, then
 * position. The value riding with source position p is test_value_of(p): distinct and using all
 * 64 bits (an odd multiplier is a bijection mod 2^64), so a truncated or misplaced value cannot
 * match by chance. */
static inline uint64_t test_value_of(size_t p) { return (uint64_t)p * UINT64_C(0x9e3779b97f4a7c15); }

typedef struct {
  h5g_u128 key;
  uint64_t position;
} test_keyed;

static inline int test_compare_key_then_position(const void *a, const void *b) {
  const test_keyed *x = (const test_keyed *)a, *y = (const test_keyed *)b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  return (x->position > y->position) - (x->position < y->position);
}

/* Buffers of one key+value test: the keys to sort (a copy of the input), their values
 * (test_value_of(position)), scratch for both, and the stable reference. */
typedef struct {
  uint8_t *keys, *scratch;
  uint64_t *values, *scratch_values;
  test_keyed *expected;
} test_pairs;

static inline void test_pairs_free(test_pairs *t) {
  free(t->keys);
  free(t->scratch);
  free(t->values);
  free(t->scratch_values);
  free(t->expected);
}

/* Fills t from n keys of `width` bytes; 0 when out of memory (t is then freed). */
static inline int test_pairs_setup(test_pairs *t, const uint8_t *input, size_t n, unsigned width) {
  t->keys = (uint8_t *)malloc(n * width + 1);
  t->scratch = (uint8_t *)malloc(n * width + 1);
  t->values = (uint64_t *)malloc(n * sizeof *t->values + 1);
  t->scratch_values = (uint64_t *)malloc(n * sizeof *t->values + 1);
  t->expected = (test_keyed *)malloc(n * sizeof *t->expected + 1);
  if (!t->keys || !t->scratch || !t->values || !t->scratch_values || !t->expected) {
    test_pairs_free(t);
    return 0;
  }
  memcpy(t->keys, input, n * width);
  for (size_t p = 0; p < n; p++) {
    t->values[p] = test_value_of(p);
    t->expected[p].key = test_load_key(input, p, width);
    t->expected[p].position = p;
  }
  qsort(t->expected, n, sizeof *t->expected, test_compare_key_then_position);
  return 1;
}

/* The first position where keys or values differ from the stable reference (n if none). */
static inline size_t test_pairs_first_diff(const test_pairs *t, size_t n, unsigned width) {
  size_t i = 0;
  while (i < n && test_load_key(t->keys, i, width) == t->expected[i].key &&
         t->values[i] == test_value_of(t->expected[i].position))
    i++;
  return i;
}

#endif
