/* base/compose.h against an independent reference: for random key tuples (ties, signed and
 * unsigned integers of 1-4 bytes, uint64, float32 with -0.0, +-inf and NaNs of both signs and any
 * payload, float64) of up to 16 bytes together, keys crossing the composed key's 64-bit halves, in
 * every direction and NaN place (--na-position: numpy's, first, last), comparing composed keys as
 * unsigned integers must agree with a lexicographic comparison of the values themselves (numpy's:
 * -0.0 == +0.0, NaNs equal and last; descending its mirror; NaNs first or last as asked), and
 * taking an integer key back out gives its exact bits. */
#include <math.h>
#include <string.h>

#include "base/compose.h"
#include "tests/support/check.h"

enum { N = 4000, MAX_KEYS = 4 };

typedef struct {
  h5g_key_class cls;
  unsigned width;
} key_type;

/* A value of the key type as a double (exact for the types used), and its raw bits. */
static double value_of(const void *keys, size_t i, const key_type *t) {
  if (t->cls == H5G_KEY_FLOAT) {
    if (t->width == 4) return ((const float *)keys)[i];
    return ((const double *)keys)[i];
  }
  if (t->cls == H5G_KEY_SIGNED) {
    switch (t->width) {
    case 1: return ((const int8_t *)keys)[i];
    case 2: return ((const int16_t *)keys)[i];
    default: return ((const int32_t *)keys)[i];
    }
  }
  return (double)h5g_key_load(keys, i, t->width);
}

/* <0, 0, >0: the order of two values in a direction, NaNs equal and where `na` puts them (by
 * default numpy's: last ascending, first descending). */
static int compare(double a, double b, int descending, h5g_na_position na) {
  int nan_last = na == H5G_NA_DEFAULT ? !descending : na == H5G_NA_LAST;
  if (isnan(a) || isnan(b)) return nan_last ? isnan(a) - isnan(b) : isnan(b) - isnan(a);
  return descending ? (a < b) - (a > b) : (a > b) - (a < b);
}

static void fill(void *keys, const key_type *t, uint64_t *rng) {
  static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, 1.0f, -1.0f, 2.5f};
  for (size_t i = 0; i < N; i++) {
    uint64_t r = test_rand(rng);
    if (t->cls == H5G_KEY_FLOAT && t->width == 4) {
      float f = specials[r % 7];
      uint32_t bits;
      if (r % 11 == 0) { /* a NaN: either sign, any payload */
        bits = 0x7f800000u | (uint32_t)((r >> 8) % 0x7fffffu + 1) | (uint32_t)(r & 0x80000000u);
        memcpy(&f, &bits, 4);
      }
      ((float *)keys)[i] = f;
    } else if (t->cls == H5G_KEY_FLOAT) {
      double nan = copysign(NAN, r & 16 ? -1.0 : 1.0);
      ((double *)keys)[i] = r % 5 == 0 ? -0.0 : r % 7 == 0 ? nan : (double)((int)(r % 9) - 4);
    } else {
      uint64_t v = (r >> 7) % 5 == 0 ? ~(uint64_t)0 : (r >> 9) % 7; /* ties and extremes */
      switch (t->width) {
      case 1: ((uint8_t *)keys)[i] = (uint8_t)v; break;
      case 2: ((uint16_t *)keys)[i] = (uint16_t)v; break;
      case 4: ((uint32_t *)keys)[i] = (uint32_t)v; break;
      default: ((uint64_t *)keys)[i] = v; break;
      }
    }
  }
}

static void check_tuple(const key_type *types, int count, const int *descending,
                        h5g_na_position na, uint64_t *rng) {
  static h5g_u128 composed[N];
  static unsigned char keys[MAX_KEYS][N * 8], scratch[N * 8], back[N * 8];
  unsigned bytes = 0, shift[MAX_KEYS];
  for (int k = 0; k < count; k++) bytes += types[k].width;
  unsigned width = h5g_compose_width(bytes);
  EXPECT(width >= bytes && width <= H5G_COMPOSE_MAX_BYTES, "width %u for %u bytes", width, bytes);
  for (int k = count - 1, s = 0; k >= 0; s += 8 * (int)types[k].width, k--) shift[k] = (unsigned)s;
  memset(composed, 0, sizeof composed);
  for (int k = 0; k < count; k++) {
    h5g_keyspec ks = {types[k].cls, types[k].width, descending[k], na};
    fill(keys[k], &types[k], rng);
    memcpy(scratch, keys[k], N * types[k].width);
    h5g_compose_add(composed, width, scratch, N, &ks, shift[k], 1 + k);
  }
  for (size_t i = 0; i + 1 < N; i++)
    for (size_t j = i + 1; j < N && j < i + 40; j++) {
      int expected = 0;
      for (int k = 0; k < count && expected == 0; k++)
        expected = compare(value_of(keys[k], i, &types[k]), value_of(keys[k], j, &types[k]),
                           descending[k], na);
      h5g_u128 a = h5g_key_load(composed, i, width), b = h5g_key_load(composed, j, width);
      int got = (a > b) - (a < b);
      EXPECT(got == expected, "%d keys, na %d: rows %zu, %zu: composed order %d, values' order %d",
             count, na, i, j, got, expected);
    }
  for (int k = 0; k < count; k++) {
    if (types[k].cls == H5G_KEY_FLOAT) continue;
    h5g_keyspec ks = {types[k].cls, types[k].width, descending[k], na};
    h5g_compose_take(composed, width, back, N, &ks, shift[k], 2);
    EXPECT(memcmp(back, keys[k], N * types[k].width) == 0, "key %d does not come back exactly", k);
  }
}

int main(void) {
  uint64_t rng = 20261123;
  static const key_type u1 = {H5G_KEY_UNSIGNED, 1}, i2 = {H5G_KEY_SIGNED, 2},
                        u4 = {H5G_KEY_UNSIGNED, 4}, i4 = {H5G_KEY_SIGNED, 4},
                        u8 = {H5G_KEY_UNSIGNED, 8}, f4 = {H5G_KEY_FLOAT, 4},
                        f8 = {H5G_KEY_FLOAT, 8};
  /* 8 bytes or less, then 9 to 16 (f8 + i4: the f8 across the halves of the 128-bit key) */
  const key_type tuples[][MAX_KEYS] = {{u4, i4},     {f4, u1},     {i2, f4},         {u1, i2, i4},
                                       {f8},         {f4},         {i4},             {f8, i4},
                                       {u8, f8},     {f8, f8},     {i2, f8, u1, f4}, {u4, u4, u4},
                                       {u1, u8, i2}};
  const int counts[] = {2, 2, 2, 3, 1, 1, 1, 2, 2, 2, 4, 3, 3};
  for (size_t t = 0; t < sizeof counts / sizeof counts[0]; t++)
    for (int dirs = 0; dirs < (1 << counts[t]); dirs++) {
      int descending[MAX_KEYS];
      for (int k = 0; k < counts[t]; k++) descending[k] = (dirs >> k) & 1;
      for (h5g_na_position na = H5G_NA_DEFAULT; na <= H5G_NA_LAST; na++)
        check_tuple(tuples[t], counts[t], descending, na, &rng);
    }
  /* threads: the rows split between them give the same keys as one thread (8- and 16-byte
   * composed keys, the key at bit 7 and across the halves at bit 60) */
  enum { BIG = 1 << 18 };
  uint32_t *a = malloc(BIG * 4), *b = malloc(BIG * 4);
  h5g_u128 *one = malloc(BIG * 16), *many = malloc(BIG * 16);
  for (unsigned width = 8; a && b && one && many && width <= 16; width += 8) {
    h5g_keyspec ks = {H5G_KEY_SIGNED, 4, 1, H5G_NA_DEFAULT};
    unsigned shift = width == 8 ? 7 : 60;
    memset(one, 0, BIG * 16);
    memset(many, 0, BIG * 16);
    for (size_t i = 0; i < BIG; i++) a[i] = (uint32_t)test_rand(&rng);
    memcpy(b, a, BIG * 4);
    h5g_compose_add(one, width, a, BIG, &ks, shift, 1);
    h5g_compose_add(many, width, b, BIG, &ks, shift, 5);
    EXPECT(memcmp(one, many, (size_t)BIG * width) == 0, "5 threads composed other keys than 1");
    h5g_compose_take(many, width, b, BIG, &ks, shift, 3);
    h5g_compose_take(one, width, a, BIG, &ks, shift, 1);
    EXPECT(memcmp(a, b, BIG * 4) == 0, "3 threads took other keys than 1");
  }
  free(a);
  free(b);
  free(one);
  free(many);
  EXPECT(h5g_compose_width(3) == 4 && h5g_compose_width(6) == 8 && h5g_compose_width(9) == 16 &&
             h5g_compose_width(16) == 16 && h5g_compose_width(17) == 0,
         "widths");
  return test_summary("compose");
}
