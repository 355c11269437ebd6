/* Scale-offset as HDF5 1.10 decodes it (H5Zscaleoffset.c, H5Z__filter_scaleoffset with
 * H5Z_FLAG_REVERSE, H5Z__scaleoffset_decompress, _postdecompress_i and _postdecompress_fd). A
 * chunk holds a 21-byte header (the bit width `minbits`, 4 bytes little-endian; the size of
 * `minval`, 1 byte; minval, little-endian) then each element's value less the minimum in minbits
 * bits, most significant first; a value of all ones is the fill value where one is defined. At
 * full width the chunk holds the elements as they were in the writer's memory (little-endian
 * here). Integers add minval back; floats (D-scaling) are the integer v restored as
 * (type)v / 10^D + min in the float's own precision, min being minval's low bytes. */
#include "io/filter_codecs.h"

#include <hdf5.h>
#include <math.h>
#include <string.h>

#include "io/convert.h"

enum { SCALETYPE, SCALEFACTOR, NELMTS, CLASS, SIZE, SIGN, ORDER, FILAVAIL, FILVAL, NPARMS = 20 };
enum { HEADER = 21 }; /* HDF5's buf_offset */
enum { CLS_INTEGER, CLS_FLOAT }; /* H5Z_SCALEOFFSET_CLS_* */

/* HDF5 computes on a float chunk as on the native float or double of its size, whatever the
 * file type's format: we take only IEEE types (of either byte order), ours being IEEE too. */
static int ieee_float(hid_t type, size_t size) {
  return H5Tget_class(type) == H5T_FLOAT &&
         h5g_type_equal_but_order(type, size == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
}

int h5g_scaleoffset_accepts(const unsigned *cd, size_t ncd, hid_t type, uint64_t chunk_elems,
                            int *identity) {
  size_t elem_size = H5Tget_size(type);
  unsigned size = ncd == NPARMS ? cd[SIZE] : 0;
  int factor = ncd == NPARMS ? (int)cd[SCALEFACTOR] : 0;
  /* the writer's memory order is taken to be this host's, as HDF5 does: little-endian only */
  if (H5Tget_order(H5T_NATIVE_INT) != H5T_ORDER_LE || ncd != NPARMS) return 0;
  if (cd[SIGN] > 1 || cd[ORDER] > 1 || cd[FILAVAIL] > 1) return 0;
  if (size != elem_size || cd[NELMTS] != chunk_elems) return 0;
  if (cd[CLASS] == CLS_FLOAT) { /* D-scaling only: HDF5 fails E-scaling */
    *identity = 0;
    return cd[SCALETYPE] == H5Z_SO_FLOAT_DSCALE && (size == 4 || size == 8) &&
           ieee_float(type, size);
  }
  if (cd[CLASS] != CLS_INTEGER || cd[SCALETYPE] != H5Z_SO_INT) return 0;
  if ((size != 1 && size != 2 && size != 4 && size != 8) || factor > (int)(8 * size))
    return 0; /* HDF5 fails such chunks */
  *identity = factor == (int)(8 * size); /* HDF5 returns the data unprocessed */
  return 1;
}

/* How a value less the minimum (v, below 2^minbits) is restored, as HDF5's postdecompress:
 * integers add minval modulo 2^(8 size); floats convert v, signed, to the float type, divide by
 * 10^D as powf/pow give it (the same libm call, so the same bits) and add the minimum. */
typedef struct {
  unsigned kind; /* 0: integer, 4: float, 8: double */
  uint64_t minval;
  float scale_f, min_f;
  double scale_d, min_d;
} restore_t;

static restore_t restore_of(const unsigned *cd, uint64_t minval) {
  restore_t r = {.kind = cd[CLASS] == CLS_FLOAT ? cd[SIZE] : 0, .minval = minval};
  double d = (double)(int)cd[SCALEFACTOR]; /* HDF5's D_val */
  uint32_t min32 = (uint32_t)minval;       /* the float minimum: minval's low bytes */
  if (r.kind == 4) {
    r.scale_f = powf(10.0f, (float)d);
    memcpy(&r.min_f, &min32, sizeof r.min_f);
  } else if (r.kind == 8) {
    r.scale_d = pow(10.0, d);
    memcpy(&r.min_d, &minval, sizeof r.min_d);
  }
  return r;
}

static inline uint64_t restore(const restore_t *r, uint64_t v) {
  if (r->kind == 4) { /* v < 2^31: minbits is below 32 here */
    float x = (float)(int32_t)v / r->scale_f + r->min_f;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
  }
  if (r->kind == 8) {
    double x = (double)(int64_t)v / r->scale_d + r->min_d;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
  }
  return v + r->minval; /* (type)(buf[i] + minval): a sum modulo 2^(8 size), signed or not */
}

int h5g_scaleoffset_decode(const unsigned *cd, const unsigned char *in, size_t in_bytes,
                           unsigned char *out, size_t cap, size_t *out_bytes, const char **why) {
  unsigned size = cd[SIZE], big = cd[ORDER];
  size_t elems = cd[NELMTS], bytes = elems * size;
  if (bytes > cap) {
    *why = "decoded size differs from the chunk size";
    return -1;
  }
  if (in_bytes < HEADER) {
    *why = "scale-offset chunk shorter than its header";
    return -1;
  }
  uint32_t minbits = h5g_load_le32(in);
  unsigned minval_bytes = in[4] < 8 ? in[4] : 8; /* HDF5 reads at most its own 8 */
  uint64_t minval = 0;
  for (unsigned i = 0; i < minval_bytes; i++) minval |= (uint64_t)in[5 + i] << 8 * i;
  const unsigned char *packed = in + HEADER;
  size_t packed_bytes = in_bytes - HEADER;
  if (minbits > 8 * size) {
    *why = "scale-offset bit width exceeds its type";
    return -1;
  }
  if ((uint64_t)elems * minbits > 8 * (uint64_t)packed_bytes ||
      (minbits == 8 * size && packed_bytes < bytes)) {
    *why = "scale-offset chunk shorter than its values";
    return -1;
  }
  if (minbits == 8 * size) { /* stored whole, in the writer's (little-endian) order */
    if (!big) memcpy(out, packed, bytes);
    for (size_t i = 0; big && i < elems; i++)
      for (unsigned b = 0; b < size; b++) out[i * size + b] = packed[i * size + size - 1 - b];
    *out_bytes = bytes;
    return 0;
  }
  /* the fill value, native order, from the parameters' low bytes onwards (get_filval_1) */
  uint64_t fill = (uint64_t)cd[FILVAL] | (size == 8 ? (uint64_t)cd[FILVAL + 1] << 32 : 0);
  uint64_t all_ones = ((uint64_t)1 << minbits) - 1; /* minbits < 64 here */
  int fill_defined = cd[FILAVAIL] == 1;
  restore_t r = restore_of(cd, minval);
  for (size_t i = 0; i < elems; i++) {
    uint64_t v = minbits ? h5g_packed_bits(packed, packed_bytes, (uint64_t)i * minbits, minbits)
                         : 0;
    v = fill_defined && v == all_ones ? fill : restore(&r, v);
    h5g_store_ordered(out + i * size, v, size, big);
  }
  *out_bytes = bytes;
  return 0;
}
