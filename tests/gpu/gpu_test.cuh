/* Shared helpers of the GPU tests: device check (exit 77 = skipped when no GPU is visible),
 * key generators for every distribution, and the independent checks (CPU reference sort,
 * order + count + checksum). */
#ifndef H5G_GPU_TEST_CUH
#define H5G_GPU_TEST_CUH

#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/kernels.h"
#include "base/error.h"

static int g_failures = 0;

#define EXPECT(cond, ...)                                                                         \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                             \
      fprintf(stderr, __VA_ARGS__);                                                               \
      fprintf(stderr, "\n");                                                                      \
      ++g_failures;                                                                               \
    }                                                                                             \
  } while (0)

/* A CUDA or h5g call that must succeed for the test to go on. */
#define MUST_CUDA(call)                                                                           \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      fprintf(stderr, "FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_));  \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)
#define MUST_OK(call)                                                                             \
  do {                                                                                            \
    int s_ = (call);                                                                              \
    if (s_ != H5G_OK) {                                                                           \
      fprintf(stderr, "FATAL %s:%d: %s: status %d: %s\n", __FILE__, __LINE__, #call, s_,          \
              h5g_error_message());                                                               \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static void require_gpu(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("SKIP: no CUDA device\n");
    exit(77);
  }
}

static int finish(const char *name) {
  if (g_failures) {
    printf("%s: %d failures\n", name, g_failures);
    return 1;
  }
  printf("%s: all passed\n", name);
  return 0;
}

static inline uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

enum Dist { RANDOM, SORTED, REVERSED, ALL_EQUAL, FEW_UNIQUE, LOW_BITS, EXTREMES, NDIST };
static const char *dist_name[NDIST] = {"random", "sorted", "reversed", "all-equal",
                                       "few-unique", "low-bits", "extremes"};

/* n unsigned keys of type K (ordered bits) drawn from `dist`. */
template <typename K> std::vector<K> make_keys(size_t n, Dist dist, uint64_t seed) {
  std::vector<K> v(n);
  uint64_t s = seed * 0x2545f4914f6cdd1dull + n;
  const K max = (K)~(K)0;
  const K few[5] = {0, 3, (K)(max / 2), (K)(max - 7), max};
  const K extremes[6] = {0, 1, (K)(max / 2), (K)(max / 2 + 1), (K)(max - 1), max};
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix64(&s);
    switch (dist) {
    case RANDOM: v[i] = (K)r; break;
    case SORTED:
    case REVERSED: v[i] = (K)r; break;
    case ALL_EQUAL: v[i] = (K)0x5a5a5a5a5a5a5a5aull; break;
    case FEW_UNIQUE: v[i] = few[r % 5]; break;
    case LOW_BITS: v[i] = (K)(r & 0xfff); break; /* only the low 12 bits vary: passes skipped */
    case EXTREMES: v[i] = (r & 1) ? extremes[(r >> 1) % 6] : (K)(r >> 8); break;
    default: break;
    }
  }
  if (dist == SORTED) std::sort(v.begin(), v.end());
  if (dist == REVERSED) std::sort(v.begin(), v.end(), [](K a, K b) { return a > b; });
  return v;
}

/* Order-independent checksum of a multiset of keys. */
template <typename K> uint64_t multiset_checksum(const K *v, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t s = (uint64_t)v[i];
    sum += splitmix64(&s);
  }
  return sum;
}

/* Checks that got[] is `input` sorted: against std::sort for n <= 2^21, else by order + count +
 * checksum (std::sort of 10^8 keys would dominate the test's time). Returns 1 when right. */
template <typename K> int check_sorted(const std::vector<K> &input, const std::vector<K> &got) {
  if (got.size() != input.size()) return 0;
  if (input.size() <= ((size_t)1 << 21)) {
    std::vector<K> ref(input);
    std::sort(ref.begin(), ref.end());
    return memcmp(ref.data(), got.data(), ref.size() * sizeof(K)) == 0;
  }
  for (size_t i = 1; i < got.size(); ++i)
    if (got[i - 1] > got[i]) return 0;
  return multiset_checksum(input.data(), input.size()) == multiset_checksum(got.data(), got.size());
}

/* "small" on the command line: sizes up to 2^13 + 1 only (for compute-sanitizer runs). */
static bool g_small = false;
static void parse_args(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) g_small |= strcmp(argv[i], "small") == 0;
}

/* Sizes every kernel test covers. */
static std::vector<size_t> test_sizes(void) {
  std::vector<size_t> s = {0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1000, 4095, 4096, 4097};
  for (int k : {13, 16, 20}) {
    s.push_back(((size_t)1 << k) - 1);
    s.push_back(((size_t)1 << k) + 1);
  }
  s.push_back(10000000);
  if (g_small) s.erase(std::remove_if(s.begin(), s.end(), [](size_t n) { return n > 8193; }), s.end());
  return s;
}

#endif
