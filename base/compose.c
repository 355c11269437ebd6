/* Composing several keys into one: base/compose.h. */
#include "base/compose.h"

unsigned h5g_compose_width(unsigned bytes) {
  if (bytes <= 1) return 1;
  if (bytes <= 2) return 2;
  if (bytes <= 4) return 4;
  return bytes <= 8 ? 8 : 0;
}

static void store(void *keys, size_t i, unsigned width, uint64_t v) {
  switch (width) {
  case 1: ((uint8_t *)keys)[i] = (uint8_t)v; break;
  case 2: ((uint16_t *)keys)[i] = (uint16_t)v; break;
  case 4: ((uint32_t *)keys)[i] = (uint32_t)v; break;
  default: ((uint64_t *)keys)[i] = v; break;
  }
}

/* The ordered bits (ascending) of one float value of `width` bytes. */
static uint64_t ordered_float(uint64_t bits, unsigned width) {
  h5g_keyspec ks = {H5G_KEY_FLOAT, width, 0};
  if (width == 4) {
    uint32_t v = (uint32_t)bits;
    h5g_keys_to_ordered(&v, 1, &ks);
    return v;
  }
  h5g_keys_to_ordered(&bits, 1, &ks);
  return bits;
}

void h5g_compose_add(void *composed, unsigned width, void *part, size_t n, const h5g_keyspec *ks,
                     unsigned shift) {
  h5g_keyspec ascending = {ks->cls, ks->width, 0};
  unsigned bits = 8 * ks->width;
  uint64_t mask = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
  uint64_t flip = ks->descending ? mask : 0;
  /* numpy's equality: -0.0 becomes +0.0, every NaN the smallest positive NaN (all NaNs lie
   * above +inf in ascending ordered bits) */
  int is_float = ks->cls == H5G_KEY_FLOAT;
  uint64_t sign = (uint64_t)1 << (bits - 1);
  uint64_t plus_zero = is_float ? ordered_float(0, ks->width) : 0;
  uint64_t minus_zero = is_float ? ordered_float(sign, ks->width) : 0;
  uint64_t plus_inf = is_float ? ordered_float(ks->width == 4 ? 0x7f800000u : 0x7ff0000000000000ull,
                                               ks->width) : mask;
  h5g_keys_to_ordered(part, n, &ascending);
  for (size_t i = 0; i < n; i++) {
    uint64_t v = h5g_key_load(part, i, ks->width);
    if (is_float) {
      if (v == minus_zero) v = plus_zero;
      else if (v > plus_inf) v = plus_inf + 1;
    }
    store(composed, i, width, h5g_key_load(composed, i, width) | ((v ^ flip) << shift));
  }
}

void h5g_compose_take(const void *composed, unsigned width, void *part, size_t n,
                      const h5g_keyspec *ks, unsigned shift) {
  unsigned bits = 8 * ks->width;
  uint64_t mask = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
  for (size_t i = 0; i < n; i++) store(part, i, ks->width, (h5g_key_load(composed, i, width) >> shift) & mask);
  h5g_keys_from_ordered(part, n, ks); /* the descending flip is the transform's own */
}
