/* Typed keys of the GPU tests (C++): keys of a class (signed, float, unsigned) and direction as
 * their raw bits, the independent numpy-order comparison (no code of base/keys.c), the special
 * values (NaN payloads, -0.0, infinities, extremes) and the distributions that tell whether a
 * sort decides its skipped passes on the ordered bits rather than the raw ones. */
#ifndef H5G_TESTS_SUPPORT_TYPED_KEYS_HPP
#define H5G_TESTS_SUPPORT_TYPED_KEYS_HPP

#include <math.h>

#include "tests/support/keys.hpp"

/* A float key's value (4 or 8 bytes of bits), NaN for NaN. */
static inline double float_value(uint64_t bits, const h5g_keyspec *ks) {
  if (ks->width == 4) {
    float f;
    uint32_t b = (uint32_t)bits;
    memcpy(&f, &b, 4);
    return f;
  }
  double d;
  memcpy(&d, &bits, 8);
  return d;
}

/* A signed integer key's value, sign-extended to 128 bits (exact at every width). */
template <typename K> static __int128 signed_value(K bits) {
  const u128 wide = bits;
  if constexpr (sizeof(K) < 16) {
    if ((wide >> (8 * sizeof(K) - 1)) & 1) return (__int128)(wide | ~(u128)0 << (8 * sizeof(K)));
  }
  return (__int128)wide;
}

/* numpy order: a strictly after b? NaN after everything but NaN; -0.0 before +0.0. */
static inline int after(double a, double b) {
  if (isnan(b)) return 0;
  if (isnan(a)) return 1;
  if (a == 0 && b == 0) return !signbit(a) && signbit(b);
  return a > b;
}

/* The same for two keys of class ks->cls given by their bits: integers compared exactly. NaNs
 * sort below -inf instead where --na-position puts them first ascending or last descending. */
template <typename K> static int key_after(K a, K b, const h5g_keyspec *ks) {
  if (ks->cls == H5G_KEY_FLOAT) {
    const double x = float_value((uint64_t)a, ks), y = float_value((uint64_t)b, ks);
    const bool nan_below = ks->na == (ks->descending ? H5G_NA_LAST : H5G_NA_FIRST);
    if (nan_below && (isnan(x) || isnan(y))) return isnan(y) && !isnan(x);
    return after(x, y);
  }
  if (ks->cls == H5G_KEY_SIGNED) return signed_value(a) > signed_value(b);
  return a > b;
}

/* Keys of every edge a transform has: zero, one, the sign boundary, all ones; for floats the
 * infinities, NaNs of both signs with payloads, the largest finite and the smallest denormals. */
template <typename K> std::vector<K> special_keys(const h5g_keyspec *ks) {
  std::vector<K> v;
  const K max = (K)~(K)0, sign = (K)((K)1 << (8 * sizeof(K) - 1));
  for (K k : {(K)0, (K)1, (K)(sign - 1), sign, (K)(sign + 1), (K)(max - 1), max}) v.push_back(k);
  if (ks->cls == H5G_KEY_FLOAT) {
    const int mant = sizeof(K) == 4 ? 23 : 52; /* 64-bit arithmetic: K may be narrower */
    const int ebits = sizeof(K) == 4 ? 8 : 11;
    const uint64_t inf = ((1ull << ebits) - 1) << mant, quiet = 1ull << (mant - 1);
    const uint64_t s = (uint64_t)sign; /* floats are 4 or 8 bytes: no bits lost */
    for (uint64_t k : {inf, inf | s, inf + 1, inf | s | 1, inf | quiet, inf | s | quiet,
                       (uint64_t)(K)(max ^ sign), (uint64_t)1, s | 1})
      v.push_back((K)k);
  }
  return v;
}

/* Distributions beyond gpu_keys' (whose bit patterns make floats of every kind, NaNs included):
 * - OCTAVE: floats in [2, 4) (their raw top byte is constant, not so their ordered bits: the
 *   bias subtraction borrows across it), integers that are multiples of 256 (the low byte, pass
 *   0, constant: the first pass that runs is another);
 * - SPAN: floats in [3.99, 16) (the raw top byte varies, the ordered one is constant), integers
 *   in [-2^20, 2^20);
 * - SMALL: the integers -100 .. 100 as keys of the class (floats: their low bytes constant). */
enum TypedDist { OCTAVE = NDIST_GPU, SPAN, SMALL, NDIST_TYPED };

static inline const char *typed_dist_name(int dist) {
  if (dist < NDIST_GPU) return gpu_dist_name(dist);
  return dist == OCTAVE ? "octave" : dist == SPAN ? "span" : "small";
}

/* The raw bits of the value x as a key of K's width and class cls (x an integer for integers). */
template <typename K> K typed_bits(double x, h5g_key_class cls) {
  if (cls == H5G_KEY_FLOAT && sizeof(K) == 4) {
    const float f = (float)x;
    uint32_t b;
    memcpy(&b, &f, 4);
    return (K)b;
  }
  if (cls == H5G_KEY_FLOAT) {
    uint64_t b;
    memcpy(&b, &x, 8);
    return (K)b;
  }
  return (K)(__int128)x; /* two's complement at K's width */
}

/* n raw keys of class ks from `dist`; special keys in every distribution but all-equal. */
template <typename K> std::vector<K> typed_keys(size_t n, int dist, const h5g_keyspec *ks,
                                                uint64_t seed) {
  const bool fl = ks->cls == H5G_KEY_FLOAT;
  std::vector<K> v;
  if (dist < NDIST_GPU) {
    v = gpu_keys<K>(n, dist, seed);
  } else {
    uint64_t s = seed * 0x2545f4914f6cdd1dull + n;
    v.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const double u = (double)(test_rand(&s) >> 11) * 0x1p-53; /* [0, 1) */
      double x;
      if (dist == OCTAVE) x = fl ? 2 + 2 * u : 256 * floor((u - 0.5) * 65536);
      else if (dist == SPAN) x = fl ? 3.99 + 12 * u : floor((u - 0.5) * 2097152);
      else x = floor(u * 201) - 100;
      if (!fl && ks->cls == H5G_KEY_UNSIGNED && x < 0) x = -x;
      v[i] = typed_bits<K>(x, ks->cls);
    }
  }
  if (dist == ALL_EQUAL) return v;
  const std::vector<K> special = special_keys<K>(ks);
  for (size_t i = 0; i < n && i < 2 * special.size(); ++i)
    v[i * 7 % n] = special[i % special.size()];
  return v;
}

/* Pairs of the numpy order (or its exact reverse, descending) that raw keys break: 0 when sorted
 * as h5gsort promises, told without base/keys.c. */
template <typename K> size_t out_of_order(const K *keys, size_t n, const h5g_keyspec *ks) {
  size_t wrong = 0;
  for (size_t i = 1; i < n; ++i)
    wrong += ks->descending ? key_after(keys[i], keys[i - 1], ks)
                            : key_after(keys[i - 1], keys[i], ks);
  return wrong;
}

#endif
