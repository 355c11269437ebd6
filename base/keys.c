/* Ordered-bits transform, checksum and binary search for keys of 1, 2, 4, 8 or 16 bytes.
 *
 * Each operation is written once as a macro and instantiated per unsigned type, so the width is
 * dispatched once per call and the inner loops are plain typed loops the compiler vectorises. */
#include "base/keys.h"
#include "base/mix.h"
#include "base/parallel.h"

/* Float transform (ascending). The classic trick -- negative: flip every bit; positive: flip the
 * sign bit -- orders [neg NaNs][-inf ... -0][+0 ... +inf][pos NaNs]. The negative NaNs are the
 * 2^mant - 1 smallest results, so subtracting that count (mod 2^width) moves them above the
 * positive NaNs: [-inf ... +inf][pos NaNs][neg NaNs], i.e. every NaN last. Adding it instead
 * (nan_low: the rotation by the 2 (2^mant - 1) NaNs the other way) gives
 * [pos NaNs][neg NaNs][-inf ... +inf]: every NaN first, in the same order among themselves. All
 * three steps are bijections, so the inverse restores the exact bits. */
#define DEFINE_KEY_OPS(T, BITS, MANT_BITS)                                                        \
  static void to_ordered_##BITS(T *keys, size_t n, h5g_key_class cls, int descending,             \
                                int nan_low) {                                                    \
    const T sign = (T)((T)1 << (BITS - 1));                                                       \
    const T flip = descending ? (T)~(T)0 : (T)0;                                                  \
    if (cls == H5G_KEY_FLOAT) {                                                                   \
      const T neg_nans = (T)(((T)1 << MANT_BITS) - 1);                                            \
      const T bias = nan_low ? (T)((T)0 - neg_nans) : neg_nans;                                   \
      for (size_t i = 0; i < n; i++) {                                                            \
        T u = keys[i];                                                                            \
        T negative_mask = (T)((T)0 - (T)(u >> (BITS - 1)));                                       \
        u = (T)(u ^ (negative_mask | sign));                                                      \
        keys[i] = (T)((T)(u - bias) ^ flip);                                                      \
      }                                                                                           \
    } else {                                                                                      \
      const T mask = (T)((cls == H5G_KEY_SIGNED ? sign : (T)0) ^ flip);                           \
      for (size_t i = 0; i < n; i++) keys[i] = (T)(keys[i] ^ mask);                               \
    }                                                                                             \
  }                                                                                               \
                                                                                                  \
  static void from_ordered_##BITS(T *keys, size_t n, h5g_key_class cls, int descending,           \
                                  int nan_low) {                                                  \
    const T sign = (T)((T)1 << (BITS - 1));                                                       \
    const T flip = descending ? (T)~(T)0 : (T)0;                                                  \
    if (cls == H5G_KEY_FLOAT) {                                                                   \
      const T neg_nans = (T)(((T)1 << MANT_BITS) - 1);                                            \
      const T bias = nan_low ? (T)((T)0 - neg_nans) : neg_nans;                                   \
      for (size_t i = 0; i < n; i++) {                                                            \
        T u = (T)((T)(keys[i] ^ flip) + bias);                                                    \
        /* top bit set: the key was positive (only the sign bit was flipped) */                   \
        T was_negative_mask = (T)((T)(u >> (BITS - 1)) - (T)1);                                   \
        keys[i] = (T)(u ^ (was_negative_mask | sign));                                            \
      }                                                                                           \
    } else {                                                                                      \
      const T mask = (T)((cls == H5G_KEY_SIGNED ? sign : (T)0) ^ flip);                           \
      for (size_t i = 0; i < n; i++) keys[i] = (T)(keys[i] ^ mask);                               \
    }                                                                                             \
  }                                                                                               \
                                                                                                  \
  static uint64_t checksum_##BITS(const T *keys, size_t n) {                                      \
    const uint64_t salt = h5g_checksum_salt(BITS);                                                \
    uint64_t sum = 0;                                                                             \
    for (size_t i = 0; i < n; i++) sum += checksum_term(keys[i], salt);                           \
    return sum;                                                                                   \
  }                                                                                               \
                                                                                                  \
  /* First index in [0, n) whose key is >= x (or > x when `strict`). */                          \
  static size_t partition_point_##BITS(const T *keys, size_t n, h5g_u128 x, int strict) {         \
    size_t lo = 0, hi = n;                                                                        \
    while (lo < hi) {                                                                             \
      size_t mid = lo + (hi - lo) / 2;                                                            \
      const T k = keys[mid];                                                                      \
      if (k < x || (strict && k == x))                                                            \
        lo = mid + 1;                                                                             \
      else                                                                                        \
        hi = mid;                                                                                 \
    }                                                                                             \
    return lo;                                                                                    \
  }                                                                                               \
                                                                                                  \
  /* Pairs (i - 1, i), i in [1, n), out of order (keys[i - 1] > keys[i], or >= when `strict`);   \
   * *first: the first such i (n when none). */                                                   \
  static size_t out_of_order_##BITS(const T *keys, size_t n, int strict, size_t *first) {         \
    size_t bad = 0;                                                                               \
    *first = n;                                                                                   \
    for (size_t i = 1; i < n; i++)                                                                \
      bad += keys[i - 1] > keys[i] || (strict && keys[i - 1] == keys[i]);                         \
    for (size_t i = 1; bad && i < n; i++)                                                         \
      if (keys[i - 1] > keys[i] || (strict && keys[i - 1] == keys[i])) {                          \
        *first = i;                                                                               \
        break;                                                                                    \
      }                                                                                           \
    return bad;                                                                                   \
  }

/* The checksum sums splitmix64's finaliser (base/mix.h) of every key: a bijection on 64 bits
 * with full avalanche, so distinct keys give distinct, well-spread hashes and the sum detects
 * any changed, lost or duplicated key (h5g_checksum_term). */
static inline uint64_t checksum_term(h5g_u128 k, uint64_t salt) {
  return h5g_checksum_term((uint64_t)k, (uint64_t)(k >> 64), salt);
}

/* Mantissa bits are only used for the float widths (4 and 8 bytes). */
DEFINE_KEY_OPS(uint8_t, 8, 0)
DEFINE_KEY_OPS(uint16_t, 16, 0)
DEFINE_KEY_OPS(uint32_t, 32, 23)
DEFINE_KEY_OPS(uint64_t, 64, 52)
DEFINE_KEY_OPS(h5g_u128, 128, 0)

#define DISPATCH_WIDTH(width, CALL)                                                               \
  switch (width) {                                                                                \
  case 1: CALL(uint8_t, 8); break;                                                                \
  case 2: CALL(uint16_t, 16); break;                                                              \
  case 4: CALL(uint32_t, 32); break;                                                              \
  case 16: CALL(h5g_u128, 128); break;                                                            \
  default: CALL(uint64_t, 64); break;                                                             \
  }

void h5g_keys_to_ordered(void *keys, size_t n, const h5g_keyspec *ks) {
  const int nan_low = h5g_keyspec_nan_low(ks);
#define CALL_TO(T, BITS) to_ordered_##BITS((T *)keys, n, ks->cls, ks->descending, nan_low)
  DISPATCH_WIDTH(ks->width, CALL_TO)
#undef CALL_TO
}

void h5g_keys_from_ordered(void *keys, size_t n, const h5g_keyspec *ks) {
  const int nan_low = h5g_keyspec_nan_low(ks);
#define CALL_FROM(T, BITS) from_ordered_##BITS((T *)keys, n, ks->cls, ks->descending, nan_low)
  DISPATCH_WIDTH(ks->width, CALL_FROM)
#undef CALL_FROM
}

uint64_t h5g_keys_checksum(const void *keys, size_t n, unsigned width) {
  uint64_t sum = 0;
#define CALL_SUM(T, BITS) sum = checksum_##BITS((const T *)keys, n)
  DISPATCH_WIDTH(width, CALL_SUM)
#undef CALL_SUM
  return sum;
}

typedef struct {
  const char *keys;
  size_t n;
  unsigned width;
  uint64_t sum[H5G_MAX_PARTS];
} checksum_job;

static void checksum_part(void *arg, int part, int parts) {
  checksum_job *job = arg;
  size_t begin, end;
  h5g_share(job->n, part, parts, &begin, &end);
  job->sum[part] = h5g_keys_checksum(job->keys + begin * job->width, end - begin, job->width);
}

/* Keys a part takes at least: fewer are summed faster than a thread is woken. */
enum { CHECKSUM_PART_LEAST = 1 << 16 };

uint64_t h5g_keys_checksum_parallel(const void *keys, size_t n, unsigned width, int threads) {
  checksum_job job = {keys, n, width, {0}};
  int parts =
      h5g_parts(n, CHECKSUM_PART_LEAST, threads < H5G_MAX_PARTS ? threads : H5G_MAX_PARTS);
  uint64_t sum = 0;
  h5g_parallel(parts, checksum_part, &job);
  for (int i = 0; i < parts; i++) sum += job.sum[i];
  return sum;
}

static size_t partition_point(const void *keys, size_t n, unsigned width, h5g_u128 x, int strict) {
  size_t index = 0;
#define CALL_PP(T, BITS) index = partition_point_##BITS((const T *)keys, n, x, strict)
  DISPATCH_WIDTH(width, CALL_PP)
#undef CALL_PP
  return index;
}

size_t h5g_keys_lower_bound(const void *keys, size_t n, unsigned width, h5g_u128 x) {
  return partition_point(keys, n, width, x, 0);
}

size_t h5g_keys_upper_bound(const void *keys, size_t n, unsigned width, h5g_u128 x) {
  return partition_point(keys, n, width, x, 1);
}

size_t h5g_keys_out_of_order(const void *keys, size_t n, unsigned width, int strict,
                             size_t *first) {
  size_t bad = 0;
#define CALL_OOO(T, BITS) bad = out_of_order_##BITS((const T *)keys, n, strict, first)
  DISPATCH_WIDTH(width, CALL_OOO)
#undef CALL_OOO
  return bad;
}
