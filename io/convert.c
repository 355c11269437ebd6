/* io/convert.h: the conversions of HDF5 1.10 that are proven a byte swap or an integer widening
 * (H5Tconv.c: H5T__conv_order for the swap, H5T__conv_i_i for the widening), checked against
 * HDF5's own reads by tests/io/test_filters.c. */
#include "io/convert.h"

#include <stdint.h>

#include "base/parallel.h"

/* An integer or float type this plan knows: 1, 2, 4 or 8 bytes, little- or big-endian, padding
 * bits (if any) zero. */
static int plain_atomic(hid_t t, H5T_class_t cls) {
  H5T_pad_t lsb, msb;
  size_t size = H5Tget_size(t);
  H5T_order_t order = H5Tget_order(t);
  return H5Tget_class(t) == cls && (size == 1 || size == 2 || size == 4 || size == 8) &&
         (order == H5T_ORDER_LE || order == H5T_ORDER_BE) && H5Tget_pad(t, &lsb, &msb) >= 0 &&
         lsb == H5T_PAD_ZERO && msb == H5T_PAD_ZERO;
}

int h5g_type_equal_but_order(hid_t t, hid_t like) {
  hid_t copy = H5Tcopy(t);
  int equal = copy >= 0 && H5Tset_order(copy, H5Tget_order(like)) >= 0 && H5Tequal(copy, like) > 0;
  if (copy >= 0) H5Tclose(copy);
  return equal;
}

int h5g_convert_plan(hid_t file_type, hid_t mem_type, h5g_convert *c) {
  *c = (h5g_convert){0};
  if (H5Tequal(file_type, mem_type) > 0) return 1;
  H5T_class_t cls = H5Tget_class(file_type);
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || !plain_atomic(file_type, cls) ||
      !plain_atomic(mem_type, cls) || H5Tget_order(mem_type) != H5T_ORDER_LE ||
      H5Tget_order(H5T_NATIVE_INT) != H5T_ORDER_LE ||
      H5Tget_size(file_type) != H5Tget_size(mem_type))
    return 0;
  unsigned size = (unsigned)H5Tget_size(file_type);
  /* memory: the full width, no offset (the layout of a native type) */
  if (H5Tget_precision(mem_type) != 8 * size || H5Tget_offset(mem_type) != 0) return 0;
  size_t precision = H5Tget_precision(file_type);
  int offset = H5Tget_offset(file_type);
  if (precision == 0 || offset < 0 || precision + (size_t)offset > 8 * size) return 0;
  if (cls == H5T_FLOAT) { /* floats: only the swap of an otherwise equal type */
    if (precision != 8 * size || offset != 0 || !h5g_type_equal_but_order(file_type, mem_type))
      return 0;
  } else {
    H5T_sign_t sign = H5Tget_sign(file_type);
    if (sign == H5T_SGN_ERROR || sign != H5Tget_sign(mem_type)) return 0;
    c->is_signed = sign == H5T_SGN_2;
  }
  c->active = 1;
  c->size = size;
  c->file_big_endian = H5Tget_order(file_type) == H5T_ORDER_BE;
  c->precision = (unsigned)precision;
  c->offset = (unsigned)offset;
  return 1;
}

/* Byte swaps of whole elements; a literal width lets the compiler use its swap instruction. */
static void swap_width(unsigned char *b, size_t n, unsigned width) {
  for (size_t e = 0; e + width <= n; e += width)
    for (unsigned i = 0; i < width / 2; i++) {
      unsigned char t = b[e + i];
      b[e + i] = b[e + width - 1 - i];
      b[e + width - 1 - i] = t;
    }
}

static void swap_all(unsigned char *b, size_t n, unsigned width) {
  switch (width) {
    case 2: swap_width(b, n, 2); break;
    case 4: swap_width(b, n, 4); break;
    case 8: swap_width(b, n, 8); break;
    default: break; /* one byte: nothing to swap */
  }
}

void h5g_convert_apply(const h5g_convert *c, void *buf, size_t bytes) {
  unsigned char *b = buf;
  unsigned size = c->size;
  if (!c->active) return;
  if (c->precision == 8 * size) {
    if (c->file_big_endian) swap_all(b, bytes, size);
    return;
  }
  uint64_t mask = ((uint64_t)1 << c->precision) - 1; /* precision < 64 here */
  uint64_t sign = (uint64_t)1 << (c->precision - 1);
  for (size_t e = 0; e + size <= bytes; e += size) {
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++)
      v |= (uint64_t)b[e + (c->file_big_endian ? size - 1 - i : i)] << 8 * i;
    v = v >> c->offset & mask;
    if (c->is_signed && (v & sign)) v |= ~mask; /* H5T__conv_i_i sign-extends */
    for (unsigned i = 0; i < size; i++) b[e + i] = (unsigned char)(v >> 8 * i);
  }
}

typedef struct {
  const h5g_convert *c;
  unsigned char *buf;
  size_t elements;
} convert_job;

static void convert_share(void *arg, int part, int parts) {
  convert_job *job = arg;
  size_t from, to;
  h5g_share(job->elements, part, parts, &from, &to);
  h5g_convert_apply(job->c, job->buf + from * job->c->size, (to - from) * job->c->size);
}

/* Below this a part's hand-off costs more than its share of the work (chosen when each part
 * started a thread of its own; a kept worker costs less). */
#define CONVERT_BYTES_PER_THREAD ((size_t)1 << 20)

void h5g_convert_apply_threads(const h5g_convert *c, void *buf, size_t bytes, int threads) {
  if (!c->active) return;
  convert_job job = {c, buf, bytes / c->size};
  size_t most = bytes / CONVERT_BYTES_PER_THREAD + 1;
  h5g_parallel(threads < 1 ? 1 : (size_t)threads < most ? threads : (int)most, convert_share,
               &job);
}

const char *h5g_convert_name(const h5g_convert *c) {
  if (!c->active) return "none";
  return c->precision == 8 * c->size ? "byte swap" : "integer widening";
}
