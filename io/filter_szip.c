/* Szip as HDF5 1.10 decodes it (H5Zszip.c, H5Z__filter_szip with H5Z_FLAG_REVERSE): a chunk is
 * the decoded size, 4 bytes little-endian (UINT32DECODE), then the stream SZ_BufftoBuffCompress
 * wrote, given to SZ_BufftoBuffDecompress with that size as its room and the 4 parameters HDF5's
 * set_local stored (H5Z_SZIP_PARM_*: options mask with LSB or MSB for the type's order, pixels
 * per block, bits per pixel, pixels per scanline) as its SZ_com_t.
 * The decoder is libsz's, loaded with dlopen("libsz.so.2"): the libaec szip compatibility library
 * Debian's parallel HDF5 already links, so the same code decodes (no link-time dependency, and
 * no szlib.h needed: SZ_com_t is 4 ints, SZIP's ABI). Reentrant, checked in libaec v1.0.6
 * (Debian bookworm's libsz2) src/sz_compat.c and src/decode.c: SZ_BufftoBuffDecompress keeps its
 * aec_stream on the stack, its scratch buffer and the decoder's state (tables included) are
 * malloc'd per call (aec_buffer_decode: aec_decode_init ... aec_decode_end); libsz has no
 * writable globals, libaec's one (`decode_state`, a variable decode.h declares by mistake) is
 * never used. It reads no more than the stream's bytes and writes no more than the room given. */
#include "io/filter_codecs.h"

#include <dlfcn.h>

enum { HEADER_BYTES = 4, SZ_OK = 0 };
enum { MAX_PIXELS_PER_BLOCK = 32, MAX_PIXELS_PER_SCANLINE = 128 * MAX_PIXELS_PER_BLOCK };

typedef struct {
  int options_mask, bits_per_pixel, pixels_per_block, pixels_per_scanline;
} sz_com;
typedef int (*sz_decompress_fn)(void *dest, size_t *dest_len, const void *src, size_t src_len,
                                sz_com *param);

/* Set once, by the calling thread, before any chunk of an szip dataset reaches the threads. */
static sz_decompress_fn decompress;

/* libsz stays loaded, as it does in HDF5. */
static int load_libsz(void) {
  if (!decompress) {
    void *lib = dlopen("libsz.so.2", RTLD_LAZY | RTLD_LOCAL);
    if (lib && !(decompress = (sz_decompress_fn)dlsym(lib, "SZ_BufftoBuffDecompress")))
      dlclose(lib);
  }
  return decompress != NULL;
}

/* What set_local writes (H5Pset_szip's even pixels per block up to 32, the type's precision
 * rounded up past 24 bits, at most 128 blocks a scanline): libsz divides by some of them. */
static int hdf5_params(const unsigned *cd) {
  unsigned ppb = cd[H5Z_SZIP_PARM_PPB], bpp = cd[H5Z_SZIP_PARM_BPP];
  return cd[H5Z_SZIP_PARM_MASK] <= 0xff && ppb != 0 && ppb % 2 == 0 &&
         ppb <= MAX_PIXELS_PER_BLOCK && bpp != 0 && (bpp <= 24 || bpp == 32 || bpp == 64) &&
         cd[H5Z_SZIP_PARM_PPS] != 0 && cd[H5Z_SZIP_PARM_PPS] <= MAX_PIXELS_PER_SCANLINE;
}

int h5g_szip_accepts(const unsigned *cd, size_t ncd) {
  /* HDF5 fails a filter of another count */
  return ncd == H5Z_SZIP_TOTAL_NPARMS && hdf5_params(cd) && load_libsz();
}

int h5g_szip_decode(const unsigned *cd, const unsigned char *in, size_t in_bytes,
                    unsigned char *out, size_t cap, size_t *out_bytes, const char **why) {
  if (!decompress || !hdf5_params(cd)) { /* a pipeline h5g_szip_accepts did not see */
    *why = "szip parameters not HDF5's, or libsz not loaded";
    return -1;
  }
  if (in_bytes < HEADER_BYTES) {
    *why = "chunk too short for szip's size header";
    return -1;
  }
  size_t n = h5g_load_le32(in);
  if (n > cap) {
    *why = "decoded size differs from the chunk size";
    return -1;
  }
  sz_com param = {(int)cd[H5Z_SZIP_PARM_MASK], (int)cd[H5Z_SZIP_PARM_BPP],
                  (int)cd[H5Z_SZIP_PARM_PPB], (int)cd[H5Z_SZIP_PARM_PPS]};
  /* HDF5 returns what was decoded, n or less; the caller compares it with the chunk's size */
  if (decompress(out, &n, in + HEADER_BYTES, in_bytes - HEADER_BYTES, &param) != SZ_OK) {
    *why = "szip stream is corrupt";
    return -1;
  }
  *out_bytes = n;
  return 0;
}
