/* Ordered-bits transform, checksum and binary search, for all 10 key types and 16-byte
 * (composed) keys.
 *
 * The order is checked against an independent comparator on the typed values (numpy order:
 * -inf < ... < -0.0 == +0.0 < ... < +inf < NaN, every NaN last whatever its sign): after sorting
 * the ordered bits as unsigned integers, every neighbouring pair must be in comparator order.
 * Round trips must give back the exact input bits (NaN payloads, -0.0, denormals). */
#include "base/keys.h"
#include "tests/support/check.h"
#include "tests/support/keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  h5g_key_class cls;
  unsigned width;
} key_type;

static const key_type key_types[] = {
    {"uint8", H5G_KEY_UNSIGNED, 1}, {"uint16", H5G_KEY_UNSIGNED, 2},
    {"uint32", H5G_KEY_UNSIGNED, 4}, {"uint64", H5G_KEY_UNSIGNED, 8},
    {"int8", H5G_KEY_SIGNED, 1},     {"int16", H5G_KEY_SIGNED, 2},
    {"int32", H5G_KEY_SIGNED, 4},    {"int64", H5G_KEY_SIGNED, 8},
    {"float32", H5G_KEY_FLOAT, 4},   {"float64", H5G_KEY_FLOAT, 8},
};

/* --- independent reference order on raw bits --------------------------------------------- */

/* Two's complement value of the low `width` bytes of bits. */
static int64_t sign_extend(uint64_t bits, unsigned width) {
  const uint64_t mask = test_width_mask(width), sign = (mask >> 1) + 1;
  return bits & sign ? -(int64_t)(~bits & mask) - 1 : (int64_t)bits;
}

/* The float of 4 or 8 bytes whose bits these are. */
static double float_value(const key_type *t, uint64_t bits) {
  if (t->width == 4) {
    uint32_t u = (uint32_t)bits;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  double d;
  memcpy(&d, &bits, 8);
  return d;
}

static int reference_compare(const key_type *t, uint64_t a, uint64_t b) {
  switch (t->cls) {
  case H5G_KEY_UNSIGNED: return (a > b) - (a < b);
  case H5G_KEY_SIGNED: {
    const int64_t x = sign_extend(a, t->width), y = sign_extend(b, t->width);
    return (x > y) - (x < y);
  }
  default: {
    const double x = float_value(t, a), y = float_value(t, b);
    if (isnan(x) || isnan(y)) return !!isnan(x) - !!isnan(y);
    return (x > y) - (x < y); /* -0.0 == +0.0 */
  }
  }
}

/* --- test values ------------------------------------------------------------------------- */

/* Extremes of every integer reading of `width` bytes, plus IEEE specials for the float widths. */
static size_t special_values(const key_type *t, uint64_t *out) {
  const unsigned bits = 8 * t->width;
  const uint64_t mask = test_width_mask(t->width), sign = UINT64_C(1) << (bits - 1);
  size_t n = 0;
  const uint64_t ints[] = {0, 1, 2, mask, mask - 1, sign, sign - 1, sign + 1, sign - 2};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) out[n++] = ints[i] & mask;
  if (t->cls != H5G_KEY_FLOAT) return n;

  const unsigned mant_bits = t->width == 4 ? 23 : 52;
  const uint64_t mant = (UINT64_C(1) << mant_bits) - 1, exp = mask & ~sign & ~mant;
  const uint64_t one = exp & (exp >> 1) & ~mant; /* exponent bias: 1.0 */
  const uint64_t min_normal = mant + 1, quiet = UINT64_C(1) << (mant_bits - 1);
  const uint64_t magnitudes[] = {
      0,                 /* zero */
      1,                 /* smallest denormal */
      mant,              /* largest denormal */
      min_normal,        /* smallest normal */
      one,               /* 1.0 */
      one + 1,           /* next after 1.0 */
      exp - 1,           /* largest finite */
      exp,               /* inf */
      exp | 1,           /* signalling NaN, payload 1 */
      exp | quiet,       /* canonical quiet NaN */
      exp | quiet | 5,   /* quiet NaN with payload */
      exp | mant,        /* NaN, all payload bits */
      exp | (mant >> 1), /* signalling NaN, large payload */
  };
  for (size_t i = 0; i < sizeof magnitudes / sizeof magnitudes[0]; i++) {
    out[n++] = magnitudes[i];
    out[n++] = magnitudes[i] | sign;
  }
  return n;
}

/* Specials, the integer and float neighbourhood of each, and random bits; for 1- and 2-byte
 * keys simply every bit pattern. */
static size_t test_values(const key_type *t, uint64_t *out, size_t random_count, uint64_t *rng) {
  const uint64_t mask = test_width_mask(t->width);
  size_t n = 0;
  if (t->width <= 2) {
    for (uint64_t v = 0; v <= mask; v++) out[n++] = v;
    return n;
  }
  uint64_t specials[64];
  size_t nspecial = special_values(t, specials);
  for (size_t i = 0; i < nspecial; i++) {
    out[n++] = specials[i];
    out[n++] = (specials[i] + 1) & mask;
    out[n++] = (specials[i] - 1) & mask;
  }
  for (size_t i = 0; i < random_count; i++) {
    const uint64_t r = test_rand(rng);
    /* every 4th value is a near neighbour of an earlier one, so close values get compared */
    out[n] = (i % 4 == 3 ? out[(r >> 8) % n] + (r & 0xf) : r) & mask;
    n++;
    if (i % 8 == 7) { /* duplicates */
      out[n] = out[n - 1];
      n++;
    }
  }
  return n;
}

/* --- checks ------------------------------------------------------------------------------ */

static void pack(void *keys, const uint64_t *values, size_t n, unsigned width) {
  for (size_t i = 0; i < n; i++) test_store(keys, i, width, values[i]);
}

static void unpack(uint64_t *values, const void *keys, size_t n, unsigned width) {
  for (size_t i = 0; i < n; i++) values[i] = h5g_key_load(keys, i, width);
}

/* Raw bits paired with their ordered bits, sorted by the ordered bits. */
typedef struct {
  uint64_t ordered, raw;
} key_pair;

static int compare_pairs(const void *a, const void *b) {
  return test_compare_u64(&((const key_pair *)a)->ordered, &((const key_pair *)b)->ordered);
}

static int reference_nan(const key_type *t, uint64_t bits) {
  return t->cls == H5G_KEY_FLOAT && isnan(float_value(t, bits));
}

/* <=0: a may come before b in the order of `descending` with NaNs where `na` puts them
 * (--na-position; by default numpy's: last ascending, first descending). */
static int placed_compare(const key_type *t, uint64_t a, uint64_t b, int descending,
                          h5g_na_position na) {
  const int nan_a = reference_nan(t, a), nan_b = reference_nan(t, b);
  const int nan_last = na == H5G_NA_DEFAULT ? !descending : na == H5G_NA_LAST;
  if (nan_a || nan_b) return nan_last ? nan_a - nan_b : nan_b - nan_a;
  const int cmp = reference_compare(t, a, b);
  return descending ? -cmp : cmp;
}

static const char *const na_names[] = {"", " na first", " na last"};

/* Each direction and NaN place (6 orders, sorted[descending * 3 + na]): round trip, order, a
 * bijection; descending is the exact reverse of ascending with the NaNs at the other end; the
 * NaNs keep their order among themselves whatever their place; integers ignore the place. */
static void check_type(const key_type *t, const uint64_t *values, size_t n) {
  const size_t bytes = n * t->width;
  void *keys = malloc(bytes);
  uint64_t *back = malloc(n * sizeof *back);
  key_pair *sorted[6] = {NULL};
  int ok = keys && back;
  for (int o = 0; o < 6; o++) ok &= (sorted[o] = malloc(n * sizeof *sorted[o])) != NULL;
  if (!ok) {
    EXPECT(0, "out of memory");
    goto done;
  }

  for (int o = 0; o < 6; o++) {
    const int descending = o / 3;
    const h5g_na_position na = (h5g_na_position)(o % 3);
    const h5g_keyspec ks = {t->cls, t->width, descending, na};
    key_pair *pairs = sorted[o];
    const char *dir = descending ? " desc" : "";
    pack(keys, values, n, t->width);
    h5g_keys_to_ordered(keys, n, &ks);
    for (size_t i = 0; i < n; i++) pairs[i] = (key_pair){h5g_key_load(keys, i, t->width), values[i]};

    h5g_keys_from_ordered(keys, n, &ks);
    unpack(back, keys, n, t->width);
    for (size_t i = 0; i < n; i++)
      EXPECT(back[i] == values[i], "%s%s%s: round trip of 0x%llx gave 0x%llx", t->name, dir,
             na_names[na], (unsigned long long)values[i], (unsigned long long)back[i]);

    qsort(pairs, n, sizeof *pairs, compare_pairs);
    for (size_t i = 1; i < n; i++) {
      EXPECT(placed_compare(t, pairs[i - 1].raw, pairs[i].raw, descending, na) <= 0,
             "%s%s%s: 0x%llx ordered before 0x%llx", t->name, dir, na_names[na],
             (unsigned long long)pairs[i - 1].raw, (unsigned long long)pairs[i].raw);
      /* a bijection: distinct bit patterns never share ordered bits */
      EXPECT(pairs[i - 1].ordered != pairs[i].ordered || pairs[i - 1].raw == pairs[i].raw,
             "%s%s%s: 0x%llx and 0x%llx map to the same ordered bits", t->name, dir,
             na_names[na], (unsigned long long)pairs[i - 1].raw, (unsigned long long)pairs[i].raw);
    }
  }
  for (int descending = 0; descending <= 1; descending++) {
    const key_pair *numpy = sorted[3 * descending], *first = sorted[3 * descending + 1],
                   *last = sorted[3 * descending + 2];
    const key_pair *numpys_place = descending ? first : last, *other = descending ? last : first;
    /* the NaNs, in their order, are the tail or head of the other place's order */
    size_t nans = 0;
    for (size_t i = 0; i < n; i++) nans += reference_nan(t, values[i]);
    for (size_t i = 0; i < n; i++) {
      EXPECT(numpys_place[i].raw == numpy[i].raw && numpys_place[i].ordered == numpy[i].ordered,
             "%s%s: the default NaN place is not numpy's at position %zu", t->name,
             descending ? " desc" : "", i);
      const key_pair *o = descending ? &other[(i + n - nans) % n] : &other[(i + nans) % n];
      EXPECT(o->raw == numpy[i].raw, "%s%s: position %zu is 0x%llx with the NaNs at the other end, "
             "not 0x%llx", t->name, descending ? " desc" : "", i, (unsigned long long)o->raw,
             (unsigned long long)numpy[i].raw);
      if (t->cls != H5G_KEY_FLOAT)
        EXPECT(other[i].ordered == numpy[i].ordered, "%s: --na-position changed an integer key",
               t->name);
    }
  }
  /* descending is the exact reverse of ascending (NaNs at the other end), pattern for pattern */
  for (int na = 0; na < 3; na++) {
    const key_pair *asc = sorted[na], *desc = sorted[3 + (na == 0 ? 0 : 3 - na)];
    for (size_t i = 0; i < n; i++)
      EXPECT(desc[i].raw == asc[n - 1 - i].raw, "%s%s: descending position %zu is 0x%llx, not "
             "0x%llx", t->name, na_names[na], i, (unsigned long long)desc[i].raw,
             (unsigned long long)asc[n - 1 - i].raw);
  }
done:
  free(keys);
  free(back);
  for (int o = 0; o < 6; o++) free(sorted[o]);
}

/* Hand-picked facts that the sorted-neighbour check implies, stated directly. */
static void check_float_landmarks(void) {
  const h5g_keyspec f32 = {H5G_KEY_FLOAT, 4, 0, H5G_NA_DEFAULT};
  /* -NaN, -inf, -1, -0, +0, denormal, +inf, +NaN, -NaN(all payload) */
  uint32_t k[] = {0xffc00000u, 0xff800000u, 0xbf800000u, 0x80000000u, 0x00000000u,
                  0x00000001u, 0x7f800000u, 0x7fc00000u, 0xffffffffu};
  h5g_keys_to_ordered(k, 9, &f32);
  EXPECT(k[1] == 0, "-inf must map to the smallest ordered value, got 0x%x", k[1]);
  EXPECT(k[1] < k[2] && k[2] < k[3] && k[3] < k[4] && k[4] < k[5] && k[5] < k[6],
         "finite float32 landmarks out of order");
  EXPECT(k[6] < k[7] && k[6] < k[0] && k[6] < k[8], "a NaN is not above +inf");

  const h5g_keyspec f64_desc = {H5G_KEY_FLOAT, 8, 1, H5G_NA_DEFAULT};
  uint64_t d[] = {UINT64_C(0xfff8000000000000), UINT64_C(0x7ff0000000000000),
                  UINT64_C(0x0000000000000000)};
  h5g_keys_to_ordered(d, 3, &f64_desc);
  EXPECT(d[0] < d[1] && d[1] < d[2], "descending float64: -NaN, +inf, 0 must come in that order");
}

/* The threaded checksum is the serial one, for parts that split keys anywhere (odd counts, more
 * threads asked for than the keys make parts of, more than H5G_MAX_PARTS asked for). */
static void check_checksum_parallel(uint64_t *rng) {
  enum { N = 300007 };
  static _Alignas(16) uint8_t keys[N * 16];
  for (size_t i = 0; i < sizeof keys; i++) keys[i] = (uint8_t)test_rand(rng);
  const unsigned widths[] = {1, 2, 4, 8, 16};
  const int threads[] = {1, 2, 3, 7, 1000};
  for (size_t w = 0; w < 5; w++)
    for (size_t n = 0; n <= N; n += N / 3)
      for (size_t t = 0; t < 5; t++)
        EXPECT(h5g_keys_checksum_parallel(keys, n, widths[w], threads[t]) ==
                   h5g_keys_checksum(keys, n, widths[w]),
               "width %u, %zu keys, %d threads: the threaded checksum differs", widths[w], n,
               threads[t]);
}

static void check_checksum(uint64_t *rng) {
  enum { N = 4096 };
  static uint64_t values[N];
  static uint8_t keys[N * 8], shuffled[N * 8];
  const unsigned widths[] = {1, 2, 4, 8};
  for (size_t w = 0; w < 4; w++) {
    const unsigned width = widths[w];
    for (size_t i = 0; i < N; i++) values[i] = test_rand(rng) & test_width_mask(width);
    pack(keys, values, N, width);
    const uint64_t sum = h5g_keys_checksum(keys, N, width);

    for (size_t i = N - 1; i > 0; i--) { /* Fisher-Yates */
      size_t j = (size_t)(test_rand(rng) % (i + 1));
      uint64_t tmp = values[i];
      values[i] = values[j];
      values[j] = tmp;
    }
    pack(shuffled, values, N, width);
    EXPECT(h5g_keys_checksum(shuffled, N, width) == sum, "width %u: checksum not permutation invariant",
           width);

    for (unsigned bit = 0; bit < 8 * width; bit++) {
      const size_t at = (size_t)(test_rand(rng) % N);
      test_store(shuffled, at, width, values[at] ^ (UINT64_C(1) << bit));
      EXPECT(h5g_keys_checksum(shuffled, N, width) != sum, "width %u: flipping bit %u of key %zu "
             "went unnoticed", width, bit, at);
      test_store(shuffled, at, width, values[at]);
    }
    /* a duplicated key replacing another */
    test_store(shuffled, 0, width, values[0] == values[1] ? values[0] + 1 : values[1]);
    EXPECT(h5g_keys_checksum(shuffled, N, width) != sum, "width %u: replaced key went unnoticed",
           width);
    EXPECT(h5g_keys_checksum(keys, 0, width) == 0, "width %u: checksum of nothing is not 0", width);
  }
  /* the width is part of the hash: the same small value at two widths differs */
  const uint32_t five32 = 5;
  const uint64_t five64 = 5;
  EXPECT(h5g_keys_checksum(&five32, 1, 4) != h5g_keys_checksum(&five64, 1, 8),
         "checksum ignores the key width");
}

static size_t count_below(const uint64_t *v, size_t n, uint64_t x, int inclusive) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++) count += inclusive ? v[i] <= x : v[i] < x;
  return count;
}

static void check_bounds(uint64_t *rng) {
  enum { N = 300 };
  static uint64_t values[N];
  static uint8_t keys[N * 8];
  const unsigned widths[] = {1, 2, 4, 8};
  const size_t sizes[] = {0, 1, 2, 3, 17, N};
  for (size_t w = 0; w < 4; w++) {
    const unsigned width = widths[w];
    const uint64_t mask = test_width_mask(width);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      const size_t n = sizes[s];
      /* few distinct values (runs of duplicates) spread over the whole width, extremes included */
      for (size_t i = 0; i < n; i++) {
        uint64_t r = test_rand(rng);
        values[i] = r % 5 == 0 ? 0 : r % 5 == 1 ? mask : (r >> 8) % 16 * (mask / 16);
      }
      qsort(values, n, sizeof values[0], test_compare_u64);
      pack(keys, values, n, width);
      uint64_t probes[2 * N + 4];
      size_t nprobes = 0;
      probes[nprobes++] = 0;
      probes[nprobes++] = mask;
      probes[nprobes++] = 1;
      probes[nprobes++] = mask - 1;
      for (size_t i = 0; i < n; i++) {
        probes[nprobes++] = values[i];
        probes[nprobes++] = (values[i] + 1) & mask;
      }
      for (size_t p = 0; p < nprobes; p++) {
        const uint64_t x = probes[p];
        const size_t lower = h5g_keys_lower_bound(keys, n, width, x);
        const size_t upper = h5g_keys_upper_bound(keys, n, width, x);
        EXPECT(lower == count_below(values, n, x, 0), "width %u n %zu: lower_bound(0x%llx) = %zu",
               width, n, (unsigned long long)x, lower);
        EXPECT(upper == count_below(values, n, x, 1), "width %u n %zu: upper_bound(0x%llx) = %zu",
               width, n, (unsigned long long)x, upper);
      }
    }
  }
}

/* 16-byte keys (composed keys): values of few distinct high and low halves, extremes included. */
static h5g_u128 wide_value(uint64_t *rng) {
  static const uint64_t halves[] = {0, 1, 0x8000000000000000u, UINT64_MAX, 0x0123456789abcdefu};
  uint64_t r = test_rand(rng);
  return (h5g_u128)halves[r % 5] << 64 | halves[(r >> 8) % 5];
}

static int compare_u128(const void *a, const void *b) {
  h5g_u128 x, y;
  memcpy(&x, a, sizeof x);
  memcpy(&y, b, sizeof y);
  return (x > y) - (x < y);
}

/* 16-byte keys: the unsigned transform (ascending: none; descending: every bit flipped), the
 * checksum (permutation invariant, any of the 128 bits noticed) and the bounds against counting. */
static void check_wide(uint64_t *rng) {
  enum { N = 257 };
  static h5g_u128 keys[N], back[N];
  const h5g_keyspec ascending = {H5G_KEY_UNSIGNED, 16, 0, H5G_NA_DEFAULT},
                    descending = {H5G_KEY_UNSIGNED, 16, 1, H5G_NA_DEFAULT};
  for (size_t i = 0; i < N; i++) keys[i] = wide_value(rng);
  memcpy(back, keys, sizeof keys);
  h5g_keys_to_ordered(back, N, &ascending);
  EXPECT(memcmp(back, keys, sizeof keys) == 0, "16 bytes: the ascending transform changed keys");
  h5g_keys_to_ordered(back, N, &descending);
  for (size_t i = 0; i < N; i++) EXPECT(back[i] == ~keys[i], "16 bytes: descending is not ~key");
  h5g_keys_from_ordered(back, N, &descending);
  EXPECT(memcmp(back, keys, sizeof keys) == 0, "16 bytes: no round trip");

  const uint64_t sum = h5g_keys_checksum(keys, N, 16);
  for (size_t i = 0; i < N; i++) back[N - 1 - i] = keys[i];
  EXPECT(h5g_keys_checksum(back, N, 16) == sum, "16 bytes: checksum not permutation invariant");
  for (unsigned bit = 0; bit < 128; bit++) {
    back[7] ^= (h5g_u128)1 << bit;
    EXPECT(h5g_keys_checksum(back, N, 16) != sum, "16 bytes: flipping bit %u went unnoticed", bit);
    back[7] ^= (h5g_u128)1 << bit;
  }
  EXPECT(h5g_keys_checksum(keys, N, 16) != h5g_keys_checksum(keys, 2 * N, 8),
         "16 bytes: checksum equals that of the same bytes as 8-byte keys");

  const size_t sizes[] = {0, 1, 2, 3, 17, N};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    const size_t n = sizes[s];
    qsort(keys, n, sizeof keys[0], compare_u128);
    for (size_t p = 0; p < n + 3; p++) {
      /* every key, its successor and predecessor, and the extremes */
      const h5g_u128 x = p < n ? keys[p] + (h5g_u128)(p % 3) - 1 : p == n ? 0 : ~(h5g_u128)0 - (p - n - 1);
      size_t lower = 0, upper = 0;
      for (size_t i = 0; i < n; i++) {
        lower += keys[i] < x;
        upper += keys[i] <= x;
      }
      EXPECT(h5g_keys_lower_bound(keys, n, 16, x) == lower, "16 bytes n %zu: lower bound", n);
      EXPECT(h5g_keys_upper_bound(keys, n, 16, x) == upper, "16 bytes n %zu: upper bound", n);
    }
    EXPECT(n == 0 || h5g_key_load((const char *)keys + 0, n - 1, 16) == keys[n - 1],
           "16 bytes: key load");
  }
}

int main(void) {
  uint64_t rng = 20240601;
  const size_t random_count = 200000;
  uint64_t *values = malloc((65536 + 3 * 64 + 2 * random_count) * sizeof *values);
  if (!values) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (size_t t = 0; t < sizeof key_types / sizeof key_types[0]; t++) {
    const size_t n = test_values(&key_types[t], values, random_count, &rng);
    check_type(&key_types[t], values, n);
  }
  free(values);
  check_float_landmarks();
  check_checksum(&rng);
  check_checksum_parallel(&rng);
  check_bounds(&rng);
  check_wide(&rng);
  return test_summary("test_keys");
}
