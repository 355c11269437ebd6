/* The filters h5gsort runs itself, as HDF5 1.10.8 runs them (H5Z.c H5Z_pipeline): shuffle,
 * deflate and fletcher32 both ways (H5Zshuffle.c, H5Zdeflate.c, H5Zfletcher32.c, H5checksum.c);
 * scale-offset, n-bit and szip decoded only (io/filter_codecs.h); bzip2 and lz4 decoded only, by
 * their plugins (io/filter_plugin.h). Deflate decodes through libdeflate
 * (faster than zlib) and encodes through zlib's compress2, HDF5's own call: a chunk encoded
 * here is the chunk HDF5 writes, byte for byte, so an output does not depend on which of the two
 * wrote it. */
#include "io/filters.h"

#include <libdeflate.h>
#include <zlib.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/filter_codecs.h"
#include "io/filter_plugin.h"
#include "io/h5check.h"

#define FLETCHER_BYTES 4
/* scale-offset's header and last byte: its stream at full width is the data and 22 bytes */
#define SCALEOFFSET_GROWTH 22
/* szip's size header: HDF5 fails (or skips) a chunk whose stream is longer than the data */
#define SZIP_GROWTH 4
/* A plugin's stream at most: bzip2 adds 1% and 600 bytes, lz4 12 bytes and 4 a block (of 1 GiB
 * unless set), so this holds blocks down to 64 bytes. */
#define PLUGIN_GROWTH(n) ((n) / 16 + 65536)

struct h5g_filter_ctx {
  h5g_filter_pipeline p;
  const char *invalid; /* why the pipeline cannot run, NULL when it can */
  size_t chunk_bytes, cap; /* cap: h5g_filters_bound(p, chunk_bytes), each scratch buffer's size */
  /* Intermediate results; allocated on first use, since most pipelines need one or none. */
  unsigned char *scratch[2];
  struct libdeflate_decompressor *decompressor;
};

/* Reads a stored filter's parameters into f (HDF5's ncd values in cd): 1 when we run it so, for
 * elements of `type` in chunks of chunk_elems (0: not known, a new list). */
typedef int (*filter_parse)(h5g_filter *f, const unsigned *cd, size_t ncd, hid_t type,
                            uint64_t chunk_elems);

static int parse_shuffle(h5g_filter *f, const unsigned *cd, size_t ncd, hid_t type,
                         uint64_t chunk_elems) {
  size_t elem_size = H5Tget_size(type);
  (void)chunk_elems;
  /* A dataset's list holds the element size HDF5 set (set_local); a new list holds none. */
  if (ncd > 1 || (ncd == 0 && elem_size > UINT_MAX)) return 0;
  f->param = ncd == 1 ? cd[0] : (unsigned)elem_size;
  return f->param != 0;
}

static int parse_deflate(h5g_filter *f, const unsigned *cd, size_t ncd, hid_t type,
                         uint64_t chunk_elems) {
  (void)type, (void)chunk_elems;
  if (ncd != 1 || cd[0] > 9) return 0; /* HDF5 fails such a filter on every chunk */
  f->param = cd[0];
  return 1;
}

static int parse_fletcher32(h5g_filter *f, const unsigned *cd, size_t ncd, hid_t type,
                            uint64_t chunk_elems) {
  (void)f, (void)cd, (void)ncd, (void)type, (void)chunk_elems;
  return 1;
}

/* Scale-offset and n-bit: their stored parameters, kept for the decoder. */
static int parse_scaleoffset(h5g_filter *f, const unsigned *cd, size_t ncd, hid_t type,
                             uint64_t chunk_elems) {
  if (ncd > H5G_FILTER_CD_MAX ||
      !h5g_scaleoffset_accepts(cd, ncd, type, chunk_elems, &f->identity))
    return 0;
  memcpy(f->cd, cd, ncd * sizeof *cd);
  return 1;
}

static int parse_nbit(h5g_filter *f, const unsigned *cd, size_t ncd, hid_t type,
                      uint64_t chunk_elems) {
  if (ncd > H5G_FILTER_CD_MAX ||
      !h5g_nbit_accepts(cd, ncd, H5Tget_size(type), chunk_elems, &f->identity))
    return 0;
  memcpy(f->cd, cd, ncd * sizeof *cd);
  return 1;
}

static int parse_szip(h5g_filter *f, const unsigned *cd, size_t ncd, hid_t type,
                      uint64_t chunk_elems) {
  (void)type, (void)chunk_elems;
  if (!h5g_szip_accepts(cd, ncd)) return 0;
  memcpy(f->cd, cd, ncd * sizeof *cd);
  return 1;
}

/* A plugin listed below: its stored parameters, given back to the plugin HDF5 would load. */
static int parse_plugin(h5g_filter *f, const unsigned *cd, size_t ncd, hid_t type,
                        uint64_t chunk_elems) {
  (void)type, (void)chunk_elems;
  memcpy(f->cd, cd, ncd * sizeof *cd);
  f->ncd = ncd;
  return (f->plugin = h5g_plugin_decoder(f->id)) != NULL;
}

/* The one table of the filters we run: h5g_filters_from_dcpl, check_pipeline and the names
 * read it; h5g_filters_decode and h5g_filters_encode dispatch on the same ids. */
static const struct {
  H5Z_filter_t id;
  const char *name;
  filter_parse parse;
  int encodes; /* h5g_filters_encode runs it too (the others: read only) */
} known[] = {
    {H5Z_FILTER_SHUFFLE, "shuffle", parse_shuffle, 1},
    {H5Z_FILTER_DEFLATE, "deflate", parse_deflate, 1},
    {H5Z_FILTER_FLETCHER32, "fletcher32", parse_fletcher32, 1},
    {H5Z_FILTER_SCALEOFFSET, "scaleoffset", parse_scaleoffset, 0},
    {H5Z_FILTER_NBIT, "nbit", parse_nbit, 0},
    {H5Z_FILTER_SZIP, "szip", parse_szip, 0}, /* when libsz loads (io/filter_szip.c) */
    /* plugins whose decoders are reentrant (io/filter_plugin.c says how that was checked) */
    {307, "bzip2", parse_plugin, 0},
    {32004, "lz4", parse_plugin, 0},
};
enum { NKNOWN = sizeof known / sizeof known[0] };

static int find_known(H5Z_filter_t id) {
  for (int k = 0; k < NKNOWN; k++)
    if (known[k].id == id) return k;
  return -1;
}

const char *h5g_filter_name(H5Z_filter_t id) {
  int k = find_known(id);
  return k < 0 ? "unknown" : known[k].name;
}

int h5g_filters_encodable(const h5g_filter_pipeline *p) {
  for (int i = 0; i < p->count; i++) {
    int k = find_known(p->filter[i].id);
    if (k < 0 || !known[k].encodes) return 0;
  }
  return 1;
}

static const char *check_pipeline(const h5g_filter_pipeline *p) {
  if (p->count < 0 || p->count > H5G_FILTERS_MAX) return "too many filters";
  for (int i = 0; i < p->count; i++) {
    const h5g_filter *f = &p->filter[i];
    int k = find_known(f->id);
    if (k < 0) return "filter not handled by h5gsort";
    if (known[k].parse == parse_plugin && !f->plugin) return "plugin filter not loaded";
    if (f->id == H5Z_FILTER_DEFLATE && f->param > 9) return "deflate level above 9";
    if (f->id == H5Z_FILTER_SHUFFLE && f->param == 0) return "shuffle of 0-byte elements";
  }
  return NULL;
}

int h5g_filters_from_dcpl(hid_t dcpl, hid_t type, h5g_filter_pipeline *p, int *ours,
                          const char *where) {
  int rc = H5G_OK, n = H5Pget_nfilters(dcpl);
  h5g_filter_pipeline q = {0};
  hsize_t chunk[H5S_MAX_RANK];
  uint64_t chunk_elems = 0;
  *ours = 0;
  *p = q;
  CHECK_H5(n, "cannot list the dataset's filters (%s)", where);
  if (n > H5G_FILTERS_MAX) goto done;
  int rank = H5Pget_layout(dcpl) == H5D_CHUNKED ? H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk) : 0;
  for (int k = 0; k < rank; k++) chunk_elems = (k ? chunk_elems : 1) * chunk[k];
  for (int i = 0; i < n; i++) {
    unsigned flags, cd[H5G_FILTER_CD_MAX];
    size_t ncd = H5G_FILTER_CD_MAX;
    H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, 0, NULL, NULL);
    CHECK_H5(id, "cannot read filter %d of the dataset (%s)", i, where);
    h5g_filter *f = &q.filter[i];
    f->id = id;
    f->flags = flags & H5Z_FLAG_OPTIONAL;
    int k = find_known(id);
    /* anything else, or parameters HDF5 rejects (more than we read, included): left to HDF5 */
    if (k < 0 || ncd > H5G_FILTER_CD_MAX || !known[k].parse(f, cd, ncd, type, chunk_elems))
      goto done;
  }
  q.count = n;
  if (check_pipeline(&q)) goto done;
  *p = q;
  *ours = 1;
done:
  return rc;
}

/* HDF5's H5Z_DEFLATE_SIZE_ADJUST: the most deflate may write, ceil(n * 1.001) + 12, in doubles
 * as HDF5 computes it; more fails the filter. */
static size_t deflate_limit(size_t n) {
  double x = (double)n * 1.001;
  size_t whole = (size_t)x;
  return (whole < x ? whole + 1 : whole) + 12;
}

size_t h5g_filters_bound(const h5g_filter_pipeline *p, size_t raw_bytes) {
  size_t n = raw_bytes;
  for (int i = 0; i < p->count; i++) {
    if (p->filter[i].id == H5Z_FILTER_DEFLATE) n = deflate_limit(n);
    else if (p->filter[i].id == H5Z_FILTER_FLETCHER32) n += FLETCHER_BYTES;
    else if (p->filter[i].id == H5Z_FILTER_SCALEOFFSET) n += SCALEOFFSET_GROWTH;
    else if (p->filter[i].id == H5Z_FILTER_SZIP) n += SZIP_GROWTH;
    else if (p->filter[i].plugin) n += PLUGIN_GROWTH(n);
  }
  return n;
}

h5g_filter_ctx *h5g_filter_ctx_new(const h5g_filter_pipeline *p, size_t chunk_bytes) {
  h5g_filter_ctx *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->p = *p;
  c->invalid = check_pipeline(p);
  if (c->invalid) return c; /* every call reports it */
  c->chunk_bytes = chunk_bytes;
  c->cap = h5g_filters_bound(p, chunk_bytes);
  if (!(c->decompressor = libdeflate_alloc_decompressor())) {
    h5g_filter_ctx_free(c);
    return NULL;
  }
  return c;
}

void h5g_filter_ctx_free(h5g_filter_ctx *c) {
  if (!c) return;
  libdeflate_free_decompressor(c->decompressor);
  free(c->scratch[1]);
  free(c->scratch[0]);
  free(c);
}

/* A scratch buffer (c->cap bytes) other than `busy`, the data a stage is reading. */
static unsigned char *spare(h5g_filter_ctx *c, const unsigned char *busy) {
  int k = c->scratch[0] == busy;
  if (!c->scratch[k]) c->scratch[k] = malloc(c->cap ? c->cap : 1);
  return c->scratch[k];
}

/* H5_checksum_fletcher32: big-endian 16-bit words, an odd last byte as a word's high byte, sums
 * from 0 (not 0xffff), folded every 360 words before they can overflow. */
static uint32_t fletcher32(const unsigned char *data, size_t bytes) {
  uint32_t sum1 = 0, sum2 = 0;
  for (size_t words = bytes / 2; words;) {
    size_t run = words > 360 ? 360 : words;
    words -= run;
    for (; run; run--, data += 2) {
      sum1 += (uint32_t)data[0] << 8 | data[1];
      sum2 += sum1;
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (bytes % 2) {
    sum1 += (uint32_t)*data << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return sum2 << 16 | sum1;
}

/* HDF5 stores the checksum after the data, little-endian (UINT32ENCODE). */
static void append_fletcher32(unsigned char *data, size_t n) {
  uint32_t sum = fletcher32(data, n);
  for (int b = 0; b < FLETCHER_BYTES; b++) data[n + (size_t)b] = (unsigned char)(sum >> 8 * b);
}

/* Shuffle puts byte b of every element together; a literal width lets the compiler unroll. */
static inline void shuffle_width(const unsigned char *restrict src, unsigned char *restrict dst,
                                 size_t count, size_t width, int reverse) {
  if (reverse)
    for (size_t e = 0; e < count; e++)
      for (size_t b = 0; b < width; b++) dst[e * width + b] = src[b * count + e];
  else
    for (size_t e = 0; e < count; e++)
      for (size_t b = 0; b < width; b++) dst[b * count + e] = src[e * width + b];
}

/* n bytes as elements of `width` bytes; the bytes past the last whole element (when a fletcher32
 * ran first) stay at the end unshuffled, as HDF5 leaves them. */
static void shuffle(const unsigned char *src, unsigned char *dst, size_t n, size_t width,
                    int reverse) {
  size_t count = n / width;
  switch (width) {
    case 2: shuffle_width(src, dst, count, 2, reverse); break;
    case 4: shuffle_width(src, dst, count, 4, reverse); break;
    case 8: shuffle_width(src, dst, count, 8, reverse); break;
    default: shuffle_width(src, dst, count, width, reverse); break;
  }
  memcpy(dst + count * width, src + count * width, n - count * width);
}

/* A filter that changes nothing (HDF5 returns the data as is): shuffle of 1-byte elements (also
 * in a pipeline made by hand), n-bit of a type with no padding bits, scale-offset at full width. */
static int is_noop(const h5g_filter *f) {
  return f->identity || (f->id == H5Z_FILTER_SHUFFLE && f->param == 1);
}

#define REJECT(reason)                                                                            \
  do {                                                                                            \
    *why = (reason);                                                                              \
    return -1;                                                                                    \
  } while (0)

static int skipped(unsigned filter_mask, int i) { return (filter_mask >> i) & 1; }

int h5g_filters_decode(h5g_filter_ctx *c, unsigned filter_mask, const void *in, size_t in_bytes,
                       void *out, size_t raw_bytes, const char **why) {
  const h5g_filter_pipeline *p = &c->p;
  const unsigned char *cur = in;
  size_t n = in_bytes;
  int last = -1; /* the filter undone last: it writes straight into out */
  *why = NULL;
  if (c->invalid) REJECT(c->invalid);
  if (raw_bytes > c->chunk_bytes) REJECT("chunk larger than its filter context allows");
  for (int i = p->count - 1; i >= 0; i--)
    if (!skipped(filter_mask, i) && !is_noop(&p->filter[i])) last = i;
  /* On reading, HDF5 fails the chunk on any filter's failure, optional or not. */
  for (int i = p->count - 1; i >= 0; i--) {
    const h5g_filter *f = &p->filter[i];
    if (skipped(filter_mask, i) || is_noop(f)) continue;
    unsigned char *dst = i == last ? out : NULL;
    size_t cap = i == last ? raw_bytes : c->cap;
    if (f->id == H5Z_FILTER_FLETCHER32) {
      if (n < FLETCHER_BYTES) REJECT("chunk too short for its fletcher32 checksum");
      n -= FLETCHER_BYTES;
      uint32_t stored = h5g_load_le32(cur + n);
      uint32_t sum = fletcher32(cur, n);
      /* HDF5 before 1.6.3 stored the checksum with the bytes of each half swapped. */
      uint32_t old = (sum & 0x00ff00ffu) << 8 | (sum >> 8 & 0x00ff00ffu);
      if (stored != sum && stored != old) REJECT("fletcher32 checksum mismatch");
      continue; /* the data stays where it is, 4 bytes shorter */
    }
    if (!dst && !(dst = spare(c, cur))) REJECT("out of host memory");
    if (f->id == H5Z_FILTER_DEFLATE) {
      enum libdeflate_result r = libdeflate_zlib_decompress(c->decompressor, cur, n, dst, cap, &n);
      if (r == LIBDEFLATE_INSUFFICIENT_SPACE) REJECT("deflate stream decodes past the chunk");
      if (r != LIBDEFLATE_SUCCESS) REJECT("deflate stream is corrupt");
    } else if (f->id == H5Z_FILTER_SCALEOFFSET) {
      if (h5g_scaleoffset_decode(f->cd, cur, n, dst, cap, &n, why) != 0) return -1;
    } else if (f->id == H5Z_FILTER_NBIT) {
      if (h5g_nbit_decode(f->cd, cur, n, dst, cap, &n, why) != 0) return -1;
    } else if (f->id == H5Z_FILTER_SZIP) {
      if (h5g_szip_decode(f->cd, cur, n, dst, cap, &n, why) != 0) return -1;
    } else if (f->plugin) {
      if (h5g_plugin_decode(f->plugin, f->flags, f->ncd, f->cd, cur, n, dst, cap, &n, why) != 0)
        return -1;
    } else {
      if (n > cap) REJECT("decoded size differs from the chunk size");
      shuffle(cur, dst, n, f->param, 1);
    }
    cur = dst;
  }
  if (n != raw_bytes) REJECT("decoded size differs from the chunk size");
  if (cur != (const unsigned char *)out) memcpy(out, cur, n);
  return 0;
}

int h5g_filters_encode(h5g_filter_ctx *c, const void *in, size_t raw_bytes, void *out,
                       size_t out_cap, size_t *out_bytes, unsigned *filter_mask, const char **why) {
  const h5g_filter_pipeline *p = &c->p;
  unsigned char *at = NULL; /* where the data is once a filter has written it; before: in */
  size_t n = raw_bytes;
  unsigned mask = 0;
  int last = -1; /* the last filter that moves the data: it writes into out */
  *why = NULL;
  if (c->invalid) REJECT(c->invalid);
  if (!h5g_filters_encodable(p)) REJECT("filter decoded only by h5gsort");
  if (raw_bytes > c->chunk_bytes) REJECT("chunk larger than its filter context allows");
  if (out_cap < h5g_filters_bound(p, raw_bytes)) REJECT("output smaller than h5g_filters_bound");
  for (int i = 0; i < p->count; i++)
    if (p->filter[i].id != H5Z_FILTER_FLETCHER32 && !is_noop(&p->filter[i])) last = i;
  for (int i = 0; i < p->count; i++) {
    const h5g_filter *f = &p->filter[i];
    const unsigned char *cur = at ? at : in;
    if (is_noop(f)) continue;
    if (f->id == H5Z_FILTER_FLETCHER32 && at) { /* in place: every buffer has room for it */
      append_fletcher32(at, n);
      n += FLETCHER_BYTES;
      continue;
    }
    unsigned char *dst = i >= last ? out : spare(c, cur);
    if (!dst) REJECT("out of host memory");
    if (f->id == H5Z_FILTER_DEFLATE) {
      uLongf got = (uLongf)deflate_limit(n);
      if (compress2(dst, &got, cur, (uLong)n, (int)f->param) != Z_OK) {
        if (!(f->flags & H5Z_FLAG_OPTIONAL)) REJECT("deflate output larger than HDF5 allows");
        mask |= 1u << i; /* HDF5 skips a failing optional filter and marks it */
        continue;
      }
      n = got;
    } else if (f->id == H5Z_FILTER_SHUFFLE) {
      shuffle(cur, dst, n, f->param, 0);
    } else { /* fletcher32 on the caller's read-only input: copied first */
      memcpy(dst, cur, n);
      append_fletcher32(dst, n);
      n += FLETCHER_BYTES;
    }
    at = dst;
  }
  /* HDF5 1.10 stores a chunk's size in 32 bits (H5D__chunk_flush_entry). */
  if (n > UINT32_MAX) REJECT("encoded chunk larger than HDF5's 4 GiB limit");
  if (at != out) memcpy(out, at ? at : in, n);
  *out_bytes = n;
  *filter_mask = mask;
  return 0;
}
