/* Decoders of HDF5's built-in scale-offset (integers, D-scaled IEEE floats), n-bit (atomic
 * types) and szip filters, internal to io/filters.c, which lists them in its table of filters.
 * Each follows HDF5 1.10's own filter (H5Zscaleoffset.c, H5Znbit.c, H5Zszip.c through libsz's
 * decoder, io/filter_szip.c) on the parameters HDF5 stored with the dataset (cd_values, set
 * by its set_local callback): a chunk decodes to the bytes HDF5's read of it yields, in the
 * dataset's byte order. The decoders touch no HDF5 state: several threads decode at once. */
#ifndef H5G_IO_FILTER_CODECS_H
#define H5G_IO_FILTER_CODECS_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* 1 when the stored parameters (ncd of them) are ones the decoder below takes for elements of
 * the dataset's type (of elem_size bytes) in chunks of chunk_elems, *identity set when HDF5
 * leaves the data as is. Scale-offset asks HDF5 the type's format (calling thread only). */
int h5g_scaleoffset_accepts(const unsigned *cd, size_t ncd, hid_t type, uint64_t chunk_elems,
                            int *identity);
int h5g_nbit_accepts(const unsigned *cd, size_t ncd, size_t elem_size, uint64_t chunk_elems,
                     int *identity);

/* Decode in (in_bytes) into out (room for cap bytes), *out_bytes set; parameters accepted above,
 * not identity. 0 on success; -1 with *why set (a static reason) when the chunk is corrupt. */
int h5g_scaleoffset_decode(const unsigned *cd, const unsigned char *in, size_t in_bytes,
                           unsigned char *out, size_t cap, size_t *out_bytes, const char **why);
int h5g_nbit_decode(const unsigned *cd, const unsigned char *in, size_t in_bytes,
                    unsigned char *out, size_t cap, size_t *out_bytes, const char **why);

/* Szip: 1 when the parameters are ones HDF5 writes and libsz (libsz.so.2, dlopen'd on the first
 * such call, calling thread only) is there; then its decoder, as h5g_nbit_decode. */
int h5g_szip_accepts(const unsigned *cd, size_t ncd);
int h5g_szip_decode(const unsigned *cd, const unsigned char *in, size_t in_bytes,
                    unsigned char *out, size_t cap, size_t *out_bytes, const char **why);

/* The bits [pos, pos + nbits) of s, most significant first, as both filters pack values (nbits
 * 1 to 64); the caller checks that they lie inside the buffer of `bytes`. */
static inline uint64_t h5g_packed_bits(const unsigned char *s, size_t bytes, uint64_t pos,
                                       unsigned nbits) {
  size_t at = (size_t)(pos >> 3);
  unsigned shift = (unsigned)(pos & 7);
  uint64_t v = 0;
  if (shift + nbits <= 64 && bytes - at >= 8) { /* one 8-byte load, big-endian */
    for (int b = 0; b < 8; b++) v = v << 8 | s[at + (size_t)b];
    return (v << shift) >> (64 - nbits);
  }
  while (nbits) { /* the last bytes, or a value spread over 9 bytes */
    unsigned have = 8 - (unsigned)(pos & 7), take = have < nbits ? have : nbits;
    v = v << take | (uint64_t)((s[pos >> 3] >> (have - take)) & ((1u << take) - 1));
    pos += take;
    nbits -= take;
  }
  return v;
}

/* The 32-bit little-endian value at s (the filters' headers and fletcher32's checksum). */
static inline uint32_t h5g_load_le32(const unsigned char *s) {
  return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
}

/* v's low `size` bytes at out, little-endian (order 0) or big-endian (1). */
static inline void h5g_store_ordered(unsigned char *out, uint64_t v, unsigned size,
                                     unsigned big_endian) {
  for (unsigned b = 0; b < size; b++)
    out[big_endian ? size - 1 - b : b] = (unsigned char)(v >> 8 * b);
}

#endif
