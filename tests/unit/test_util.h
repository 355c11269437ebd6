/* Shared helpers for the plain-C unit tests: failure reporting and a seeded random generator.
 * A test calls EXPECT for every check and ends with `return test_summary("name");`, which
 * prints the totals and returns nonzero if anything failed. */
#ifndef H5G_TEST_UTIL_H
#define H5G_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long test_checks, test_failures;

/* Prints the first few failures in full; the count of the rest appears in the summary. */
#define EXPECT(cond, ...)                                                                         \
  do {                                                                                            \
    test_checks++;                                                                                \
    if (!(cond)) {                                                                                \
      if (++test_failures <= 25) {                                                                \
        fprintf(stderr, "%s:%d: FAILED (%s): ", __FILE__, __LINE__, #cond);                      \
        fprintf(stderr, __VA_ARGS__);                                                             \
        fputc('\n', stderr);                                                                      \
      }                                                                                           \
    }                                                                                             \
  } while (0)

static inline int test_summary(const char *name) {
  printf("%s: %ld checks, %ld failed\n", name, test_checks, test_failures);
  return test_failures == 0 ? 0 : 1;
}

/* splitmix64: small, seedable, good enough for test data. */
static inline uint64_t test_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Keys of `width` bytes stored as raw bits widened to 64 (the tests' neutral representation). */
static inline void test_store(void *keys, size_t i, unsigned width, uint64_t bits) {
  switch (width) {
  case 1: ((uint8_t *)keys)[i] = (uint8_t)bits; break;
  case 2: ((uint16_t *)keys)[i] = (uint16_t)bits; break;
  case 4: ((uint32_t *)keys)[i] = (uint32_t)bits; break;
  default: ((uint64_t *)keys)[i] = bits; break;
  }
}

static inline uint64_t test_width_mask(unsigned width) {
  return width == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;
}

static inline int test_compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}


/* The stable reference of the key+value tests: (key, source position) pairs sorted by key, then
 * position. The value riding with source position p is test_value_of(p): distinct and using all
 * 64 bits (an odd multiplier is a bijection mod 2^64), so a truncated or misplaced value cannot
 * match by chance. */
static inline uint64_t test_value_of(size_t p) { return (uint64_t)p * UINT64_C(0x9e3779b97f4a7c15); }

typedef struct {
  uint64_t key, position;
} test_keyed;

static inline int test_compare_key_then_position(const void *a, const void *b) {
  const test_keyed *x = a, *y = b;
  if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
  return (x->position > y->position) - (x->position < y->position);
}

/* Key i of an array of `width`-byte keys (little-endian host). */
static inline uint64_t test_load_key(const void *keys, size_t i, unsigned width) {
  uint64_t bits = 0;
  memcpy(&bits, (const uint8_t *)keys + i * width, width);
  return bits;
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
  t->keys = malloc(n * width + 1);
  t->scratch = malloc(n * width + 1);
  t->values = malloc(n * sizeof *t->values + 1);
  t->scratch_values = malloc(n * sizeof *t->values + 1);
  t->expected = malloc(n * sizeof *t->expected + 1);
  if (!t->keys || !t->scratch || !t->values || !t->scratch_values || !t->expected) {
    test_pairs_free(t);
    return 0;
  }
  memcpy(t->keys, input, n * width);
  for (size_t p = 0; p < n; p++) {
    t->values[p] = test_value_of(p);
    t->expected[p] = (test_keyed){test_load_key(input, p, width), p};
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
