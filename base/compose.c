/* Composing several keys into one: base/compose.h. */
#include "base/compose.h"

#include "base/parallel.h"

unsigned h5g_compose_width(unsigned bytes) {
  if (bytes <= 1) return 1;
  if (bytes <= 2) return 2;
  if (bytes <= 4) return 4;
  if (bytes <= 8) return 8;
  return bytes <= H5G_COMPOSE_MAX_BYTES ? H5G_COMPOSE_MAX_BYTES : 0;
}

/* composed[i] |= (canonical(part[i]) ^ flip) << shift for one pair of types: typed loops the
 * compiler vectorises (a width switch per element is not vectorised, and runs much slower). */
#define COMPOSE_LOOP(CT, PT)                                                                      \
  do {                                                                                            \
    CT *c_ = (CT *)composed;                                                                      \
    const PT *p_ = (const PT *)part;                                                              \
    if (is_float)                                                                                 \
      for (size_t i = 0; i < n; i++) {                                                            \
        uint64_t v = p_[i];                                                                       \
        v = v == fc->minus_zero ? fc->plus_zero : v - fc->minus_inf > fc->span ? fc->nan : v;     \
        c_[i] = (CT)(c_[i] | (CT)((CT)(v ^ flip) << shift));                                      \
      }                                                                                           \
    else                                                                                          \
      for (size_t i = 0; i < n; i++)                                                              \
        c_[i] = (CT)(c_[i] | (CT)((CT)((uint64_t)p_[i] ^ flip) << shift));                        \
  } while (0)
#define COMPOSE_INTO(CT)                                                                          \
  do {                                                                                            \
    switch (part_width) {                                                                         \
    case 1: COMPOSE_LOOP(CT, uint8_t); break;                                                     \
    case 2: COMPOSE_LOOP(CT, uint16_t); break;                                                    \
    case 4: COMPOSE_LOOP(CT, uint32_t); break;                                                    \
    default: COMPOSE_LOOP(CT, uint64_t); break;                                                   \
    }                                                                                             \
  } while (0)

/* numpy's equality on a float's ascending ordered bits (base/keys.h): -0.0 becomes +0.0, every NaN
 * the smallest positive NaN. The values -inf ... +inf are one span of ordered bits whichever end
 * the NaNs take, so a NaN is a key whose distance above -inf's bits (mod 2^64) passes the span. */
typedef struct {
  uint64_t minus_zero, plus_zero, minus_inf, span, nan;
} float_canon;

static void compose_loop(void *composed, unsigned width, const void *part, unsigned part_width,
                         size_t n, unsigned shift, uint64_t flip, int is_float,
                         const float_canon *fc) {
  switch (width) {
  case 1: COMPOSE_INTO(uint8_t); break;
  case 2: COMPOSE_INTO(uint16_t); break;
  case 4: COMPOSE_INTO(uint32_t); break;
  case 8: COMPOSE_INTO(uint64_t); break;
  default: COMPOSE_INTO(h5g_u128); break;
  }
}

/* part[i] = (composed[i] >> shift) & mask, typed as above. */
#define TAKE_LOOP(CT, PT)                                                                         \
  do {                                                                                            \
    const CT *c_ = (const CT *)composed;                                                          \
    PT *p_ = (PT *)part;                                                                          \
    for (size_t i = 0; i < n; i++) p_[i] = (PT)(c_[i] >> shift);                                  \
  } while (0)
#define TAKE_FROM(CT)                                                                             \
  do {                                                                                            \
    switch (part_width) {                                                                         \
    case 1: TAKE_LOOP(CT, uint8_t); break;                                                        \
    case 2: TAKE_LOOP(CT, uint16_t); break;                                                       \
    case 4: TAKE_LOOP(CT, uint32_t); break;                                                       \
    default: TAKE_LOOP(CT, uint64_t); break;                                                      \
    }                                                                                             \
  } while (0)

static void take_loop(const void *composed, unsigned width, void *part, unsigned part_width,
                      size_t n, unsigned shift) {
  switch (width) {
  case 1: TAKE_FROM(uint8_t); break;
  case 2: TAKE_FROM(uint16_t); break;
  case 4: TAKE_FROM(uint32_t); break;
  case 8: TAKE_FROM(uint64_t); break;
  default: TAKE_FROM(h5g_u128); break;
  }
}

/* The ordered bits of one float value under `ks` (4 or 8 bytes). */
static uint64_t ordered_float(uint64_t bits, const h5g_keyspec *ks) {
  if (ks->width == 4) {
    uint32_t v = (uint32_t)bits;
    h5g_keys_to_ordered(&v, 1, ks);
    return v;
  }
  h5g_keys_to_ordered(&bits, 1, ks);
  return bits;
}

/* One thread's rows of a compose or take. */
typedef struct {
  void *composed, *part;
  unsigned width;
  size_t n;
  const h5g_keyspec *ks;
  unsigned shift;
  int take;
} compose_job;

static void compose_rows(const compose_job *j) {
  const h5g_keyspec *ks = j->ks;
  if (j->take) {
    take_loop(j->composed, j->width, j->part, ks->width, j->n, j->shift); /* the cast keeps the bits */
    h5g_keys_from_ordered(j->part, j->n, ks); /* the descending flip is the transform's own */
    return;
  }
  /* the ascending bits with the NaNs at the end that ks's direction then puts them at */
  h5g_keyspec ascending = {ks->cls, ks->width, 0,
                           h5g_keyspec_nan_low(ks) ? H5G_NA_FIRST : H5G_NA_DEFAULT};
  unsigned bits = 8 * ks->width;
  uint64_t mask = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
  uint64_t flip = ks->descending ? mask : 0;
  int is_float = ks->cls == H5G_KEY_FLOAT;
  float_canon fc = {0, 0, 0, 0, 0};
  if (is_float) {
    uint64_t sign = (uint64_t)1 << (bits - 1), inf = ks->width == 4 ? 0x7f800000u : 0x7ff0ull << 48;
    fc.plus_zero = ordered_float(0, &ascending);
    fc.minus_zero = ordered_float(sign, &ascending);
    fc.minus_inf = ordered_float(sign | inf, &ascending);
    fc.span = ordered_float(inf, &ascending) - fc.minus_inf;
    fc.nan = ordered_float(inf + 1, &ascending);
  }
  h5g_keys_to_ordered(j->part, j->n, &ascending);
  compose_loop(j->composed, j->width, j->part, ks->width, j->n, j->shift, flip, is_float, &fc);
}

enum { MIN_ROWS_PER_THREAD = 1 << 14 };

/* Part `part` of `parts` of the rows. */
static void compose_part(void *arg, int part, int parts) {
  compose_job j = *(const compose_job *)arg;
  size_t begin, end;
  h5g_share(j.n, part, parts, &begin, &end);
  j.composed = (char *)j.composed + begin * j.width;
  j.part = (char *)j.part + begin * j.ks->width;
  j.n = end - begin;
  compose_rows(&j);
}

/* The rows split between up to `threads` threads (the caller's one of them). */
static void run_threads(const compose_job *whole, int threads) {
  if ((size_t)threads > whole->n / MIN_ROWS_PER_THREAD) threads = (int)(whole->n / MIN_ROWS_PER_THREAD);
  h5g_parallel(threads, compose_part, (void *)whole);
}

void h5g_compose_add(void *composed, unsigned width, void *part, size_t n, const h5g_keyspec *ks,
                     unsigned shift, int threads) {
  compose_job job = {composed, part, width, n, ks, shift, 0};
  run_threads(&job, threads);
}

void h5g_compose_take(const void *composed, unsigned width, void *part, size_t n,
                      const h5g_keyspec *ks, unsigned shift, int threads) {
  compose_job job = {(void *)composed, part, width, n, ks, shift, 1};
  run_threads(&job, threads);
}
