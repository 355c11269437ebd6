/* N-bit of an atomic type (integer or float) as HDF5 1.10 decodes it (H5Znbit.c,
 * H5Z__filter_nbit with H5Z_FLAG_REVERSE, H5Z__nbit_decompress_one_atomic): each element's
 * `precision` significant bits, found at bit `offset` of the value in the type's byte order, are
 * packed most significant first with no gaps; decoding puts them back at that offset with every
 * other bit zero. Parameters: [0] their count, [1] no compression (the type has no padding bits:
 * HDF5 stores the data unchanged), [2] elements per chunk, then for an atomic type [3] its class
 * 1, [4] size, [5] order (0 little-endian, 1 big), [6] precision, [7] offset. Compounds and
 * arrays (their own layout of parameters) are left to HDF5. */
#include "io/filter_codecs.h"

enum { NPARMS, NO_COMPRESSION, NELMTS, CLASS, SIZE, ORDER, PRECISION, OFFSET, ATOMIC_PARMS };
enum { NBIT_ATOMIC = 1 };

int h5g_nbit_accepts(const unsigned *cd, size_t ncd, size_t elem_size, uint64_t chunk_elems,
                     int *identity) {
  if (ncd < 3 || cd[NPARMS] != ncd) return 0; /* HDF5 fails such a filter */
  if (cd[NO_COMPRESSION]) { /* HDF5 returns the data as it is, whatever the rest says */
    *identity = 1;
    return 1;
  }
  if (ncd != ATOMIC_PARMS || cd[CLASS] != NBIT_ATOMIC || cd[SIZE] != elem_size ||
      cd[SIZE] == 0 || cd[SIZE] > 8 || cd[ORDER] > 1 || cd[NELMTS] != chunk_elems)
    return 0;
  if (cd[PRECISION] == 0 || cd[PRECISION] > 8 * cd[SIZE] ||
      cd[OFFSET] > 8 * cd[SIZE] - cd[PRECISION])
    return 0;
  *identity = 0;
  return 1;
}

int h5g_nbit_decode(const unsigned *cd, const unsigned char *in, size_t in_bytes,
                    unsigned char *out, size_t cap, size_t *out_bytes, const char **why) {
  unsigned size = cd[SIZE], precision = cd[PRECISION], offset = cd[OFFSET];
  size_t elems = cd[NELMTS], bytes = elems * size;
  if (bytes > cap) {
    *why = "decoded size differs from the chunk size";
    return -1;
  }
  if ((uint64_t)elems * precision > 8 * (uint64_t)in_bytes) {
    *why = "n-bit chunk shorter than its values";
    return -1;
  }
  for (size_t i = 0; i < elems; i++) {
    uint64_t v = h5g_packed_bits(in, in_bytes, (uint64_t)i * precision, precision);
    h5g_store_ordered(out + i * size, v << offset, size, cd[ORDER]);
  }
  *out_bytes = bytes;
  return 0;
}
