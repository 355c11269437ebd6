/* h5gsort-gen's element values (tools/gen.h): element i's value depends only on (seed, i). */
#include <math.h>
#include <string.h>

#include "base/mix.h"
#include "gen.h"

/* Raw bit patterns for the "special" float distribution: NaNs of both signs and several
 * payloads (quiet and signalling), infinities, signed zeros, denormals, extremes, +-1. */
static const uint32_t special_f4[] = {
    0x7fc00000u, 0xffc00000u, 0x7fc00001u, 0x7f800001u, 0xff812345u, 0x7fffffffu, 0x7f800000u,
    0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,
    0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x80800000u, 0x3f800000u, 0xbf800000u};
static const uint64_t special_f8[] = {
    0x7ff8000000000000u, 0xfff8000000000000u, 0x7ff8000000000001u, 0x7ff0000000000001u,
    0xfff0000012345678u, 0x7fffffffffffffffu, 0x7ff0000000000000u, 0xfff0000000000000u,
    0x0000000000000000u, 0x8000000000000000u, 0x0000000000000001u, 0x8000000000000001u,
    0x000fffffffffffffu, 0x800fffffffffffffu, 0x7fefffffffffffffu, 0xffefffffffffffffu,
    0x0010000000000000u, 0x8010000000000000u, 0x3ff0000000000000u, 0xbff0000000000000u};

/* Random word `stream` (0..3) of element `index`. */
static uint64_t random_word(uint64_t seed, uint64_t index, unsigned stream) {
  return h5g_mix64(h5g_mix64(seed - H5G_GOLDEN_GAMMA) + (index * 4 + stream) * H5G_GOLDEN_GAMMA);
}

/* Uniform in (0, 1]. */
static double unit_interval(uint64_t r) { return (double)((r >> 11) + 1) * 0x1.0p-53; }

static uint64_t float_bits(double v, unsigned width) {
  if (width == 4) {
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
  }
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

/* Integer bits for `offset` from the middle of the type's range (0 for signed types, 2^(bits-1)
 * for unsigned); |offset| must stay below 2^(bits-1). Stores truncate to the width. */
static uint64_t centered_int_bits(const h5g_keyspec *t, int64_t offset) {
  uint64_t center = t->cls == H5G_KEY_SIGNED ? 0 : (uint64_t)1 << (8 * t->width - 1);
  return center + (uint64_t)offset;
}

/* Type extremes and their neighbours for the "special" integer distribution. */
static uint64_t special_int_bits(const h5g_keyspec *t, uint64_t pick) {
  unsigned bits = 8 * t->width;
  uint64_t all = bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
  uint64_t top = (uint64_t)1 << (bits - 1);
  /* signed: min, min+1, -1, 0, 1, max-1, max; unsigned: 0, 1, 2, mid-1, mid, max-1, max */
  const uint64_t signed_values[] = {top, top + 1, all, 0, 1, top - 2, top - 1};
  const uint64_t unsigned_values[] = {0, 1, 2, top - 1, top, all - 1, all};
  return t->cls == H5G_KEY_SIGNED ? signed_values[pick % 7] : unsigned_values[pick % 7];
}

/* The raw bits (host order, low `width` bytes) of element `index`. */
static uint64_t element_bits(const gen_options *o, uint64_t index) {
  const h5g_keyspec *t = &o->type;
  const int is_float = t->cls == H5G_KEY_FLOAT;
  const unsigned bits = 8 * t->width;
  const uint64_t r0 = random_word(o->seed, index, 0), r1 = random_word(o->seed, index, 1);
  switch (o->dist) {
  case DIST_UNIFORM:
    if (!is_float) return r0;
    { /* log-uniform magnitude over 2^-40 .. 2^41, random sign */
      double magnitude = ldexp(1.0 + unit_interval(r1), (int)(r0 % 81) - 40);
      return float_bits((r0 >> 63) ? -magnitude : magnitude, t->width);
    }
  case DIST_NORMAL: { /* Box-Muller; |z| < 8.6, so the integer offset stays in range */
    double z = sqrt(-2.0 * log(unit_interval(r0))) * cos(2.0 * PI * unit_interval(r1));
    if (is_float) return float_bits(100.0 * z, t->width);
    return centered_int_bits(t, (int64_t)floor(z * ldexp(1.0, (int)bits - 5)));
  }
  case DIST_ZIPF: { /* Pareto tail with P(k) ~ k^-1.5: heavy runs of small values */
    double k = floor(1.0 / (unit_interval(r0) * unit_interval(r0)));
    double cap = is_float ? 1e30 : ldexp(1.0, (int)bits - 1) - 1.0;
    if (k > cap) k = cap;
    return is_float ? float_bits(k, t->width) : (uint64_t)k;
  }
  case DIST_SORTED:
  case DIST_REVERSE: { /* monotone in the index: t in [0, 1) */
    const uint64_t elements = o->count * o->row_elems;
    uint64_t pos = o->dist == DIST_SORTED ? index : elements - 1 - index;
    double u = (double)pos / (double)elements;
    if (is_float) return float_bits(-1e6 + 2e6 * u, t->width);
    return centered_int_bits(t, (int64_t)floor((u - 0.5) * ldexp(1.0, (int)bits - 1)));
  }
  case DIST_EQUAL: return is_float ? float_bits(-3.25, t->width) : 42;
  case DIST_FEW: {
    static const double float_values[FEW_DISTINCT] = {-1e3, -2.5, 0.0, 1.0, 3.5, 7.0, 1e3};
    static const int64_t int_offsets[FEW_DISTINCT] = {-60, -1, 0, 1, 2, 17, 60};
    unsigned pick = (unsigned)(r0 % FEW_DISTINCT);
    return is_float ? float_bits(float_values[pick], t->width) : centered_int_bits(t, int_offsets[pick]);
  }
  case DIST_SPECIAL: /* half arbitrary bit patterns, half from the table of special values */
    if (r0 & 1) return r1;
    if (!is_float) return special_int_bits(t, r1);
    if (t->width == 4) return special_f4[r1 % (sizeof special_f4 / sizeof special_f4[0])];
    return special_f8[r1 % (sizeof special_f8 / sizeof special_f8[0])];
  case DIST_INDEX: return is_float ? float_bits((double)index, t->width) : index;
  }
  return 0;
}

static void store_bits(void *buf, size_t i, unsigned width, uint64_t bits) {
  switch (width) {
  case 1: ((uint8_t *)buf)[i] = (uint8_t)bits; break;
  case 2: ((uint16_t *)buf)[i] = (uint16_t)bits; break;
  case 4: ((uint32_t *)buf)[i] = (uint32_t)bits; break;
  default: ((uint64_t *)buf)[i] = bits; break;
  }
}

/* Bytes of one row in memory (and in the file: tables are packed). */
size_t gen_row_bytes(const gen_options *o) {
  if (o->table) return FIELD_KEY + o->type.width + sizeof(double);
  return (size_t)o->row_elems * o->type.width;
}

/* Row `row` of the dataset, in memory layout, into buf. */
void gen_fill_row(const gen_options *o, uint64_t row, unsigned char *buf) {
  if (!o->table) {
    for (uint64_t k = 0; k < o->row_elems; k++) {
      unsigned char *e = buf + k * o->type.width;
      const unsigned precision = gen_precision(o);
      uint64_t bits = element_bits(o, row * o->row_elems + k);
      if (precision < 64) bits &= ((uint64_t)1 << precision) - 1; /* --layout nbit: what fits */
      store_bits(buf, (size_t)k, o->type.width, bits);
      for (unsigned a = 0, b = o->type.width - 1; gen_rows_in_file_order(o) && o->big_endian && a < b;
           a++, b--) {
        unsigned char t = e[a];
        e[a] = e[b];
        e[b] = t;
      }
    }
    return;
  }
  const uint16_t det = (uint16_t)(random_word(o->seed, row, 2) % DETECTORS);
  const double x = 2.0 * unit_interval(random_word(o->seed, row, 3)) - 1.0;
  uint64_t key; /* its first `width` bytes hold the key */
  char name[NAME_BYTES + 1];
  snprintf(name, sizeof name, "r%04x", (unsigned)(row & 0xffffu));
  store_bits(&key, 0, o->type.width, element_bits(o, row));
  memcpy(buf + FIELD_ROW, &row, sizeof row);
  memcpy(buf + FIELD_DET, &det, sizeof det);
  memcpy(buf + FIELD_NAME, name, NAME_BYTES);
  memcpy(buf + FIELD_KEY, &key, o->type.width);
  memcpy(buf + FIELD_KEY + o->type.width, &x, sizeof x);
}
