/* HDF5's deflate filter (H5Z_FILTER_DEFLATE) run through libdeflate instead of zlib, for the
 * reads and writes HDF5 filters itself (gzip output, inputs io/chunked.h leaves to HDF5). The
 * streams are the same zlib format, so files read and written either way are interchangeable;
 * HDF5 1.14 offers libdeflate for this filter as a build option, Debian's 1.10.8 does not. */
#include "io/deflate_filter.h"

#include <hdf5.h>
#include <libdeflate.h>
#include <math.h>

/* Decoding into a buffer that doubles until the chunk fits: HDF5 does not tell the filter the
 * decoded size, but hands it a buffer of the chunk's size when it reads one. */
static size_t inflate_chunk(size_t nbytes, size_t *buf_size, void **buf) {
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  size_t cap = *buf_size > 2 * nbytes ? *buf_size : 2 * nbytes, got = 0;
  if (cap < 4096) cap = 4096;
  void *out = NULL;
  enum libdeflate_result result = LIBDEFLATE_INSUFFICIENT_SPACE;
  while (d && result == LIBDEFLATE_INSUFFICIENT_SPACE) {
    H5free_memory(out);
    if (!(out = H5allocate_memory(cap, 0))) break;
    result = libdeflate_zlib_decompress(d, *buf, nbytes, out, cap, &got);
    if (result == LIBDEFLATE_INSUFFICIENT_SPACE) cap *= 2;
  }
  libdeflate_free_decompressor(d);
  if (result != LIBDEFLATE_SUCCESS) {
    H5free_memory(out);
    return 0; /* HDF5 reports the filter's failure */
  }
  H5free_memory(*buf);
  *buf = out;
  *buf_size = cap;
  return got;
}

/* Encoding into no more than HDF5's own deflate filter allows (ceil(1.001 n) + 12 bytes): a chunk
 * that does not fit fails the filter, and HDF5 then stores it unfiltered (deflate is optional). */
static size_t deflate_chunk(unsigned level, size_t nbytes, size_t *buf_size, void **buf) {
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(level > 9 ? 9 : (int)level);
  size_t cap = (size_t)ceil((double)nbytes * 1.001) + 12, got = 0;
  void *out = c ? H5allocate_memory(cap, 0) : NULL;
  if (out) got = libdeflate_zlib_compress(c, *buf, nbytes, out, cap);
  libdeflate_free_compressor(c);
  if (got == 0) {
    H5free_memory(out);
    return 0;
  }
  H5free_memory(*buf);
  *buf = out;
  *buf_size = cap;
  return got;
}

static size_t deflate_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                             size_t nbytes, size_t *buf_size, void **buf) {
  if (flags & H5Z_FLAG_REVERSE) return inflate_chunk(nbytes, buf_size, buf);
  return cd_nelmts == 1 ? deflate_chunk(cd_values[0], nbytes, buf_size, buf) : 0;
}

void h5g_deflate_filter_register(void) {
  static const H5Z_class2_t deflate = {H5Z_CLASS_T_VERS, H5Z_FILTER_DEFLATE, 1, 1,
                                       "deflate (libdeflate)", NULL, NULL, deflate_filter};
  H5Zregister(&deflate); /* on failure HDF5 keeps its own zlib filter: slower, as correct */
}
