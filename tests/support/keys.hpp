/* Keys of the GPU tests (C++): generators for every distribution, the sizes every kernel test
 * covers, and the independent checks (CPU reference sort, or order + count + checksum). */
#ifndef H5G_TESTS_SUPPORT_KEYS_HPP
#define H5G_TESTS_SUPPORT_KEYS_HPP

#include <algorithm>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <vector>

#include "base/keys.h" /* h5g_u128 */
#include "tests/support/check.h"

/* The older GPU header's name for test_rand, still used by test_gpu_pairs.cu. */
static inline uint64_t splitmix64(uint64_t *state) { return test_rand(state); }

enum Dist { RANDOM, SORTED, REVERSED, ALL_EQUAL, FEW_UNIQUE, LOW_BITS, EXTREMES, NDIST };
static const char *const dist_name[NDIST] = {"random", "sorted", "reversed", "all-equal",
                                             "few-unique", "low-bits", "extremes"};

/* n unsigned keys of type K (ordered bits) drawn from `dist`. */
template <typename K> std::vector<K> make_keys(size_t n, Dist dist, uint64_t seed) {
  std::vector<K> v(n);
  uint64_t s = seed * 0x2545f4914f6cdd1dull + n;
  const K max = (K)~(K)0;
  const K few[5] = {0, 3, (K)(max / 2), (K)(max - 7), max};
  const K extremes[6] = {0, 1, (K)(max / 2), (K)(max / 2 + 1), (K)(max - 1), max};
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = test_rand(&s);
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
    sum += test_rand(&s);
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
static inline void parse_args(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) g_small |= strcmp(argv[i], "small") == 0;
}

/* Sizes every kernel test covers. */
static inline std::vector<size_t> test_sizes(void) {
  std::vector<size_t> s = {0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1000, 4095, 4096, 4097};
  for (int k : {13, 16, 20}) {
    s.push_back(((size_t)1 << k) - 1);
    s.push_back(((size_t)1 << k) + 1);
  }
  s.push_back(10000000);
  if (g_small) s.erase(std::remove_if(s.begin(), s.end(), [](size_t n) { return n > 8193; }), s.end());
  return s;
}

/* 16-byte keys (several keys composed into one, issue #17) in the GPU tests:
 * - make_keys and multiset_checksum for u128, with every bit drawn (two 64-bit draws) and hashed;
 * - two distributions more, for every width (gpu_keys): FEW_BYTES, keys that differ only in their
 *   two highest and two lowest bytes (the radix passes of the bytes between are trivial and
 *   skipped), and ALL_ONES, mostly all-ones keys (the value the sorts pad tiles with) among
 *   random ones. */
typedef h5g_u128 u128;

/* keys.hpp's distributions at 128 bits: RANDOM, SORTED, REVERSED and the plain keys of EXTREMES
 * use all the bits; LOW_BITS still varies the low 12 bits only. */
template <> inline std::vector<u128> make_keys<u128>(size_t n, Dist dist, uint64_t seed) {
  std::vector<u128> v(n);
  uint64_t s = seed * 0x2545f4914f6cdd1dull + n;
  const u128 max = ~(u128)0, pattern = (u128)0x5a5a5a5a5a5a5a5aull << 64 | 0x5a5a5a5a5a5a5a5aull;
  const u128 few[5] = {0, 3, max / 2, max - 7, max};
  const u128 extremes[6] = {0, 1, max / 2, max / 2 + 1, max - 1, max};
  for (size_t i = 0; i < n; ++i) {
    const u128 r = test_rand128(&s);
    switch (dist) {
    case RANDOM:
    case SORTED:
    case REVERSED: v[i] = r; break;
    case ALL_EQUAL: v[i] = pattern; break;
    case FEW_UNIQUE: v[i] = few[(uint64_t)r % 5]; break;
    case LOW_BITS: v[i] = r & 0xfff; break;
    case EXTREMES: v[i] = (r & 1) ? extremes[(uint64_t)(r >> 1) % 6] : r >> 8; break;
    default: break;
    }
  }
  if (dist == SORTED) std::sort(v.begin(), v.end());
  if (dist == REVERSED) std::sort(v.begin(), v.end(), [](u128 a, u128 b) { return a > b; });
  return v;
}

/* Each key hashed whole (its low half mixed with its high half's hash), so that keys which trade
 * halves, or differ only in the high half, sum differently. */
template <> inline uint64_t multiset_checksum<u128>(const u128 *v, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t high = (uint64_t)(v[i] >> 64);
    uint64_t s = (uint64_t)v[i] ^ test_rand(&high);
    sum += test_rand(&s);
  }
  return sum;
}

/* Beyond keys.hpp's: FEW_BYTES (keys that differ in a few high and low bytes only), ALL_ONES
 * (three keys in four all ones); for the radix sort's top digits first (radix_sort.cuh):
 * TIED_TOPS, 4096 random top halves with random bottom halves (every top byte takes most values,
 * yet runs of equal top halves are long and out of order: every pass after the top ones),
 * FILLED, one fill value in every fourth key (one long run, in order) among random keys, and
 * LATE_TIE, random keys but 40 spread over the input that share one top half, their bottom
 * halves 0..39 in input order with 20 and 21 swapped (from n = 80: a long run whose first 17
 * keys are in order, so that only the check of its later pairs finds it out of order). */
enum GpuDist { FEW_BYTES = NDIST, ALL_ONES, TIED_TOPS, FILLED, LATE_TIE, NDIST_GPU };

static inline const char *gpu_dist_name(int dist) {
  static const char *const names[] = {"few-bytes", "all-ones", "tied-tops", "filled",
                                      "late-tie"};
  return dist < NDIST ? dist_name[dist] : names[dist - NDIST];
}

/* n keys of type K from keys.hpp's distributions (dist < NDIST) or from GpuDist's. */
template <typename K> std::vector<K> gpu_keys(size_t n, int dist, uint64_t seed) {
  if (dist < NDIST) return make_keys<K>(n, (Dist)dist, seed);
  std::vector<K> v = make_keys<K>(n, RANDOM, seed);
  const K max = (K)~(K)0;
  const int half = 4 * (int)sizeof(K);
  if (dist == ALL_ONES) {
    for (K &k : v)
      if ((uint64_t)k % 4 != 0) k = max;
  } else if (dist == TIED_TOPS) {
    for (K &k : v) {
      uint64_t group = (uint64_t)k % 4096;
      K top;
      if constexpr (sizeof(K) == 16) top = (K)test_rand128(&group);
      else top = (K)test_rand(&group);
      k = (K)((K)(top >> half << half) | (K)(k >> half));
    }
  } else if (dist == LATE_TIE && v.size() >= 80) {
    const K top = (K)((K)(max / 7) >> half << half);
    for (size_t j = 0; j < 40; ++j)
      v[j * (v.size() / 40)] = (K)(top | (K)(j == 20 ? 21 : j == 21 ? 20 : j));
  } else if (dist == FILLED) {
    for (size_t i = 0; i < v.size(); i += 4) v[i] = (K)(max / 3);
  } else if constexpr (sizeof(K) > 4) { /* FEW_BYTES; keys of up to 4 bytes have no bytes between */
    const K ends = (K)((K)0xffff << (8 * sizeof(K) - 16) | (K)0xffff), between = (K)(max / 3);
    for (K &k : v) k = (K)((k & ends) | (between & ~ends));
  }
  return v;
}

/* Keys with the values they carry (a record sort's result). */
template <typename K> struct Records {
  std::vector<K> keys;
  std::vector<uint64_t> values;
};

/* The CPU reference with values: keys[begin, end) (unsigned, ordered bits) stably sorted, each
 * with its value; std::stable_sort shares no code with the kernels. */
template <typename K>
Records<K> stable_sorted(const std::vector<K> &keys, const std::vector<uint64_t> &values,
                         size_t begin, size_t end) {
  std::vector<size_t> order(end - begin);
  for (size_t i = 0; i < order.size(); ++i) order[i] = begin + i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  Records<K> r{std::vector<K>(order.size()), std::vector<uint64_t>(order.size())};
  for (size_t i = 0; i < order.size(); ++i) {
    r.keys[i] = keys[order[i]];
    r.values[i] = values[order[i]];
  }
  return r;
}

/* A key as text, for failure messages: hexadecimal, all its bytes. */
template <typename K> const char *key_text(K key, char (&buf)[40]) {
  if constexpr (sizeof(K) > 8)
    snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)((u128)key >> 64),
             (unsigned long long)key);
  else
    snprintf(buf, sizeof buf, "%llx", (unsigned long long)key);
  return buf;
}

#endif
