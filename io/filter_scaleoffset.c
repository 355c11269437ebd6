/* Scale-offset of integers as HDF5 1.10 decodes it (H5Zscaleoffset.c, H5Z__filter_scaleoffset
 * with H5Z_FLAG_REVERSE, H5Z__scaleoffset_decompress and _postdecompress_i). A chunk holds a
 * 21-byte header (the bit width `minbits`, 4 bytes little-endian; the size of `minval`, 1 byte;
 * minval, little-endian) then each element's value less minval in minbits bits, most
 * significant first; a value of all ones is the fill value where one is defined. At full width
 * the chunk holds the elements as they were in the writer's memory (little-endian here). Floats
 * (D-scaling, computed in floating point) are left to HDF5. */
#include "io/filter_codecs.h"

#include <hdf5.h>
#include <string.h>

enum { SCALETYPE, SCALEFACTOR, NELMTS, CLASS, SIZE, SIGN, ORDER, FILAVAIL, FILVAL, NPARMS = 20 };
enum { HEADER = 21 }; /* HDF5's buf_offset */

int h5g_scaleoffset_accepts(const unsigned *cd, size_t ncd, size_t elem_size, uint64_t chunk_elems,
                            int *identity) {
  unsigned size = ncd == NPARMS ? cd[SIZE] : 0;
  int factor = ncd == NPARMS ? (int)cd[SCALEFACTOR] : 0;
  /* the writer's memory order is taken to be this host's, as HDF5 does: little-endian only */
  if (H5Tget_order(H5T_NATIVE_INT) != H5T_ORDER_LE || ncd != NPARMS) return 0;
  if (cd[CLASS] != 0 || cd[SCALETYPE] != H5Z_SO_INT || cd[SIGN] > 1 || cd[ORDER] > 1 ||
      cd[FILAVAIL] > 1)
    return 0;
  if ((size != 1 && size != 2 && size != 4 && size != 8) || size != elem_size) return 0;
  if (cd[NELMTS] != chunk_elems || factor > (int)(8 * size)) return 0; /* HDF5 fails such chunks */
  *identity = factor == (int)(8 * size); /* HDF5 returns the data unprocessed */
  return 1;
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
  uint32_t minbits = (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 |
                     (uint32_t)in[3] << 24;
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
  for (size_t i = 0; i < elems; i++) {
    uint64_t v = minbits ? h5g_packed_bits(packed, packed_bytes, (uint64_t)i * minbits, minbits)
                         : 0;
    /* (type)(buf[i] + minval): a sum modulo 2^(8 size), signed or not */
    v = fill_defined && v == all_ones ? fill : v + minval;
    h5g_store_ordered(out + i * size, v, size, big);
  }
  *out_bytes = bytes;
  return 0;
}
