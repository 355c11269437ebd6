/* io/filters.h against HDF5 itself (serial, sec2 driver), over the pipelines none, shuffle,
 * shuffle+deflate 1 and 9, deflate 6, fletcher32, shuffle+deflate+fletcher32, fletcher32+shuffle+
 * deflate (shuffle then sees bytes past its last element) and deflate+shuffle+deflate, for
 * elements of 1, 2, 3 (opaque), 4 and 8 bytes, random (incompressible), all-equal and smooth data,
 * 3 chunks of 1001 elements of which the last is partial (the rest is the fill value), and 1 MiB
 * chunks for some:
 *  - h5g_filters_from_dcpl reads each dataset's pipeline as HDF5 stored it;
 *  - every chunk HDF5 wrote (H5Dwrite), read stored with H5Dread_chunk, decodes with its mask
 *    to the data; without deflate, our encoding is byte for byte HDF5's;
 *  - every chunk we encode, written with H5Dwrite_chunk and our mask, reads back with H5Dread;
 *    so does a chunk with its deflate skipped (mask bit set) and, for a final fletcher32, one
 *    with the checksum stored in the byte order of HDF5 before 1.6.3;
 *  - corrupt deflate streams and fletcher32-protected chunks fail with a reason, never crash;
 *  - a new list's scale-offset and n-bit (no parameters of a dataset yet) are not ours; an
 *    invalid pipeline or buffer is refused (test_filter_codecs.c checks the datasets' ones).
 * Usage: test_filters PREFIX (file PREFIX.h5, removed at the end). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/filters.h"
#include "tests/support/check.h"

enum { S = 1, D1, D6, D9, F }; /* the filters of a case, in the order HDF5 applies them */

typedef struct {
  const char *name;
  int steps[3];
} pipeline_case;

static const pipeline_case pipelines[] = {
    {"none", {0}},       {"shuffle", {S}},         {"shuffle+deflate1", {S, D1}},
    {"shuffle+deflate9", {S, D9}}, {"deflate6", {D6}}, {"fletcher32", {F}},
    {"shuffle+deflate6+fletcher32", {S, D6, F}},   {"fletcher32+shuffle+deflate6", {F, S, D6}},
    {"deflate1+shuffle+deflate9", {D1, S, D9}}};
enum { NPIPELINES = sizeof pipelines / sizeof pipelines[0] };

static const size_t widths[] = {1, 2, 3, 4, 8};
enum { NWIDTHS = sizeof widths / sizeof widths[0] };
enum { RANDOM, EQUAL, SMOOTH, NKINDS };
static const char *const kind_names[] = {"random", "equal", "smooth"};
enum { FILL = 0xA5 };

static int steps_of(const pipeline_case *pc) {
  int n = 0;
  while (n < 3 && pc->steps[n]) n++;
  return n;
}

static hid_t file_type(size_t width) {
  switch (width) {
    case 1: return H5Tcopy(H5T_STD_U8LE);
    case 2: return H5Tcopy(H5T_STD_U16LE);
    case 4: return H5Tcopy(H5T_STD_U32LE);
    case 8: return H5Tcopy(H5T_STD_U64LE);
    default: return H5Tcreate(H5T_OPAQUE, width);
  }
}

static hid_t make_dcpl(const pipeline_case *pc, hid_t type, hsize_t chunk) {
  unsigned char fill[8];
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  memset(fill, FILL, sizeof fill);
  MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
  MUST_H5(H5Pset_fill_value(dcpl, type, fill));
  for (int i = 0; i < steps_of(pc); i++) {
    int s = pc->steps[i];
    if (s == S) MUST_H5(H5Pset_shuffle(dcpl));
    else if (s == F) MUST_H5(H5Pset_fletcher32(dcpl));
    else MUST_H5(H5Pset_deflate(dcpl, s == D1 ? 1 : s == D6 ? 6 : 9));
  }
  return dcpl;
}

/* The pipeline HDF5 keeps for the case (shuffle and deflate optional, as H5Pset_* add them). */
static void check_pipeline(const h5g_filter_pipeline *p, const pipeline_case *pc, size_t width,
                           const char *what) {
  EXPECT(p->count == steps_of(pc), "%s: %d filters", what, p->count);
  for (int i = 0; i < steps_of(pc) && i < p->count; i++) {
    int s = pc->steps[i];
    const h5g_filter *f = &p->filter[i];
    H5Z_filter_t id = s == S   ? H5Z_FILTER_SHUFFLE
                      : s == F ? H5Z_FILTER_FLETCHER32
                               : H5Z_FILTER_DEFLATE;
    unsigned param = s == S ? (unsigned)width : s == D1 ? 1 : s == D6 ? 6 : s == D9 ? 9 : 0;
    unsigned flags = s == F ? 0 : H5Z_FLAG_OPTIONAL;
    EXPECT(f->id == id && f->param == param && f->flags == flags,
           "%s: filter %d is id %d param %u flags %u", what, i, (int)f->id, f->param, f->flags);
  }
}

static void fill_data(unsigned char *data, size_t n, size_t width, int kind, uint64_t seed) {
  for (size_t e = 0; e < n; e++) {
    uint64_t v = kind == RANDOM  ? test_rand(&seed)
                 : kind == EQUAL ? UINT64_C(0x0123456789abcdef)
                                 : (uint64_t)e * 7 + (e >> 3);
    for (size_t b = 0; b < width; b++) data[e * width + b] = (unsigned char)(v >> (8 * (b % 8)));
  }
}

/* Chunk c of the dataset as HDF5 keeps it: the data, then the fill value past the end. */
static void raw_chunk(unsigned char *raw, const unsigned char *data, size_t n, size_t chunk,
                      size_t width, size_t c) {
  size_t first = c * chunk, count = n - first < chunk ? n - first : chunk;
  memcpy(raw, data + first * width, count * width);
  memset(raw + count * width, FILL, (chunk - count) * width);
}

typedef struct {
  const pipeline_case *pc;
  size_t width, n, chunk;
  int kind;
} dataset_case;

/* Corrupt copies of chunk `stored` (in_bytes) must fail with a reason or decode to `raw`. */
static void check_corruption(h5g_filter_ctx *ctx, const unsigned char *stored, size_t in_bytes,
                             const unsigned char *raw, size_t raw_bytes, int must_fail,
                             const char *what) {
  unsigned char *bad = malloc(in_bytes), *out = malloc(raw_bytes);
  uint64_t seed = 99;
  const char *why;
  for (size_t k = 0; k < (must_fail ? in_bytes : 300); k++) {
    size_t at = must_fail ? k : test_rand(&seed) % in_bytes;
    memcpy(bad, stored, in_bytes);
    bad[at] ^= must_fail ? 0x5a : (unsigned char)(1 + test_rand(&seed) % 255);
    int rc = h5g_filters_decode(ctx, 0, bad, in_bytes, out, raw_bytes, &why);
    if (must_fail) {
      EXPECT(rc == -1 && why && strstr(why, "fletcher32"), "%s: byte %zu changed: rc %d (%s)",
             what, at, rc, why ? why : "no reason");
    } else {
      EXPECT((rc == -1 && why) || (rc == 0 && memcmp(out, raw, raw_bytes) == 0),
             "%s: byte %zu changed: rc %d, no reason or wrong data", what, at, rc);
    }
  }
  /* The zlib header and the adler32 at the end are always checked; so is the length. */
  if (!must_fail) {
    size_t ends[] = {0, in_bytes - 1};
    for (int e = 0; e < 2; e++) {
      memcpy(bad, stored, in_bytes);
      bad[ends[e]] ^= 0x20;
      int rc = h5g_filters_decode(ctx, 0, bad, in_bytes, out, raw_bytes, &why);
      EXPECT(rc == -1 && why, "%s: byte %zu changed: rc %d", what, ends[e], rc);
    }
    int rc = h5g_filters_decode(ctx, 0, stored, in_bytes - 5, out, raw_bytes, &why);
    EXPECT(rc == -1 && why, "%s: truncated stream: rc %d", what, rc);
  }
  free(out);
  free(bad);
}

static void check_dataset(hid_t file, const dataset_case *dc, uint64_t seed) {
  const pipeline_case *pc = dc->pc;
  size_t width = dc->width, n = dc->n, chunk = dc->chunk, raw_bytes = chunk * width;
  size_t nchunks = (n + chunk - 1) / chunk;
  char name[160], what[200];
  snprintf(name, sizeof name, "%s_w%zu_%s_n%zu", pc->name, width, kind_names[dc->kind], n);
  hsize_t dims = n, hchunk = chunk;
  hid_t type = file_type(width), space = H5Screate_simple(1, &dims, NULL);
  hid_t dcpl = make_dcpl(pc, type, hchunk);
  hid_t theirs = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  strcat(name, "_ours");
  hid_t ours = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  MUST_H5(theirs);
  MUST_H5(ours);
  name[strlen(name) - 5] = '\0';

  unsigned char *data = malloc(n * width), *back = malloc(n * width), *raw = malloc(raw_bytes);
  unsigned char *out = malloc(raw_bytes);
  fill_data(data, n, width, dc->kind, seed);
  MUST_H5(H5Dwrite(theirs, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  MUST_H5(H5Fflush(file, H5F_SCOPE_LOCAL));

  h5g_filter_pipeline p;
  int is_ours = 0;
  hid_t created = H5Dget_create_plist(theirs);
  snprintf(what, sizeof what, "%s: dataset's pipeline", name);
  MUST_OK(h5g_filters_from_dcpl(created, type, &p, &is_ours, what));
  MUST_H5(H5Pclose(created));
  EXPECT(is_ours, "%s", what);
  check_pipeline(&p, pc, width, what);
  h5g_filter_ctx *ctx = h5g_filter_ctx_new(&p, raw_bytes);
  size_t cap = h5g_filters_bound(&p, raw_bytes);
  unsigned char *stored = malloc(cap), *encoded = malloc(cap);
  int has_deflate = 0;
  for (int i = 0; i < p.count; i++) has_deflate |= p.filter[i].id == H5Z_FILTER_DEFLATE;
  if (!ctx || !stored || !encoded || !data || !back || !raw || !out) {
    fprintf(stderr, "FATAL: out of memory\n");
    exit(1);
  }

  for (size_t c = 0; c < nchunks; c++) {
    hsize_t offset = c * chunk, size = 0;
    uint32_t hmask = 0;
    unsigned mask = 0;
    size_t bytes = 0;
    const char *why = NULL;
    snprintf(what, sizeof what, "%s chunk %zu", name, c);
    raw_chunk(raw, data, n, chunk, width, c);

    /* HDF5's chunk, decoded by us. */
    MUST_H5(H5Dget_chunk_storage_size(theirs, &offset, &size));
    EXPECT(size <= cap, "%s: HDF5 stored %llu bytes, bound %zu", what, (unsigned long long)size,
           cap);
    if (size > cap) continue;
    MUST_H5(H5Dread_chunk(theirs, H5P_DEFAULT, &offset, &hmask, stored));
    memset(out, 0, raw_bytes);
    int rc = h5g_filters_decode(ctx, hmask, stored, size, out, raw_bytes, &why);
    EXPECT(rc == 0 && memcmp(out, raw, raw_bytes) == 0, "%s: decoding HDF5's chunk: rc %d (%s)",
           what, rc, why ? why : "wrong data");

    /* Our chunk, for HDF5 to read. */
    rc = h5g_filters_encode(ctx, raw, raw_bytes, encoded, cap, &bytes, &mask, &why);
    EXPECT(rc == 0, "%s: encoding: %s", what, why ? why : "?");
    if (rc != 0) continue;
    EXPECT(mask == hmask, "%s: mask %u, HDF5's %u", what, mask, (unsigned)hmask);
    if (!has_deflate)
      EXPECT(bytes == size && memcmp(encoded, stored, bytes) == 0,
             "%s: encoding differs from HDF5's (%zu bytes, HDF5 %llu)", what, bytes,
             (unsigned long long)size);
    rc = h5g_filters_decode(ctx, mask, encoded, bytes, out, raw_bytes, &why);
    EXPECT(rc == 0 && memcmp(out, raw, raw_bytes) == 0, "%s: decoding our chunk: rc %d (%s)",
           what, rc, why ? why : "wrong data");

    int last = p.count - 1;
    if (c == nchunks - 1 && last >= 0 && p.filter[last].id == H5Z_FILTER_FLETCHER32) {
      /* HDF5 before 1.6.3 stored the checksum with each half's bytes swapped: still accepted. */
      unsigned char t = encoded[bytes - 4];
      encoded[bytes - 4] = encoded[bytes - 3], encoded[bytes - 3] = t;
      t = encoded[bytes - 2], encoded[bytes - 2] = encoded[bytes - 1], encoded[bytes - 1] = t;
      rc = h5g_filters_decode(ctx, mask, encoded, bytes, out, raw_bytes, &why);
      EXPECT(rc == 0 && memcmp(out, raw, raw_bytes) == 0, "%s: old checksum order: rc %d (%s)",
             what, rc, why ? why : "wrong data");
    }
    if (c == 1 && has_deflate) {
      /* The same chunk with its (first) deflate skipped, as HDF5 marks a failing optional one. */
      h5g_filter_pipeline reduced = {0};
      int skip = -1;
      for (int i = 0; i < p.count; i++) {
        if (skip < 0 && p.filter[i].id == H5Z_FILTER_DEFLATE) skip = i;
        else reduced.filter[reduced.count++] = p.filter[i];
      }
      h5g_filter_ctx *rctx = h5g_filter_ctx_new(&reduced, raw_bytes);
      rc = rctx ? h5g_filters_encode(rctx, raw, raw_bytes, encoded, cap, &bytes, &mask, &why) : -1;
      EXPECT(rc == 0 && mask == 0, "%s: encoding without deflate: rc %d", what, rc);
      h5g_filter_ctx_free(rctx);
      mask = 1u << skip;
      rc = h5g_filters_decode(ctx, mask, encoded, bytes, out, raw_bytes, &why);
      EXPECT(rc == 0 && memcmp(out, raw, raw_bytes) == 0, "%s: deflate skipped: rc %d (%s)", what,
             rc, why ? why : "wrong data");
    }
    MUST_H5(H5Dwrite_chunk(ours, H5P_DEFAULT, mask, &offset, bytes, encoded));
  }
  memset(back, 0, n * width);
  herr_t read = -1;
  H5E_BEGIN_TRY { read = H5Dread(ours, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back); } H5E_END_TRY;
  EXPECT(read >= 0 && memcmp(back, data, n * width) == 0, "%s: HDF5 %s our chunks", name,
         read < 0 ? "cannot read" : "misreads");

  /* Corruption of HDF5's first (small) chunk: deflate alone, and fletcher32 outermost. */
  int last = p.count - 1;
  int deflate_alone = p.count == 1 && p.filter[0].id == H5Z_FILTER_DEFLATE;
  int fletcher_outermost = last >= 0 && p.filter[last].id == H5Z_FILTER_FLETCHER32;
  if (chunk <= 1001 && (deflate_alone || fletcher_outermost)) {
    hsize_t offset = 0, size = 0;
    uint32_t hmask = 0;
    MUST_H5(H5Dget_chunk_storage_size(theirs, &offset, &size));
    MUST_H5(H5Dread_chunk(theirs, H5P_DEFAULT, &offset, &hmask, stored));
    raw_chunk(raw, data, n, chunk, width, 0);
    snprintf(what, sizeof what, "%s corrupt chunk 0", name);
    check_corruption(ctx, stored, size, raw, raw_bytes, fletcher_outermost, what);
  }

  h5g_filter_ctx_free(ctx);
  free(encoded);
  free(stored);
  free(out);
  free(raw);
  free(back);
  free(data);
  MUST_H5(H5Dclose(ours));
  MUST_H5(H5Dclose(theirs));
  MUST_H5(H5Pclose(dcpl));
  MUST_H5(H5Sclose(space));
  MUST_H5(H5Tclose(type));
}

/* Pipelines that are not (all) ours, and calls that must be refused. */
static void check_refusals(void) {
  h5g_filter_pipeline p;
  int ours = 1;
  hsize_t chunk = 64;
  unsigned level = 12;
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
  MUST_OK(h5g_filters_from_dcpl(dcpl, H5T_NATIVE_INT, &p, &ours, "empty"));
  EXPECT(ours && p.count == 0, "empty pipeline: ours %d, %d filters", ours, p.count);

  /* A new list (no dataset yet): shuffle's element size is the one passed. */
  MUST_H5(H5Pset_shuffle(dcpl));
  MUST_H5(H5Pset_deflate(dcpl, 4));
  MUST_H5(H5Pset_fletcher32(dcpl));
  MUST_OK(h5g_filters_from_dcpl(dcpl, H5T_NATIVE_INT, &p, &ours, "new list"));
  EXPECT(ours && p.count == 3 && p.filter[0].param == 4 && p.filter[1].param == 4 &&
             p.filter[2].flags == 0,
         "new list: ours %d, %d filters", ours, p.count);
  MUST_H5(H5Pset_scaleoffset(dcpl, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT));
  MUST_OK(h5g_filters_from_dcpl(dcpl, H5T_NATIVE_INT, &p, &ours, "scale-offset"));
  EXPECT(!ours && p.count == 0, "scale-offset: ours %d", ours);
  MUST_H5(H5Pclose(dcpl));

  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
  MUST_H5(H5Pset_nbit(dcpl));
  MUST_H5(H5Pset_deflate(dcpl, 6));
  MUST_OK(h5g_filters_from_dcpl(dcpl, H5T_NATIVE_INT, &p, &ours, "n-bit"));
  EXPECT(!ours, "n-bit: ours %d", ours);
  MUST_H5(H5Pclose(dcpl));

  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
  MUST_H5(H5Pset_filter(dcpl, H5Z_FILTER_DEFLATE, H5Z_FLAG_OPTIONAL, 1, &level));
  MUST_OK(h5g_filters_from_dcpl(dcpl, H5T_NATIVE_INT, &p, &ours, "deflate level 12"));
  EXPECT(!ours, "deflate level 12 (HDF5 fails it): ours %d", ours);
  MUST_H5(H5Pclose(dcpl));

  H5E_BEGIN_TRY {
    EXPECT(h5g_filters_from_dcpl((hid_t)-1, H5T_NATIVE_INT, &p, &ours, "no list") ==
                   H5G_ERR_RUNTIME && !ours,
           "an invalid property list is an error");
  } H5E_END_TRY;
  h5g_error_clear();

  /* A pipeline of filters we do not run, and buffers too small. */
  const char *why = NULL;
  unsigned char in[64] = {0}, out[256];
  size_t bytes;
  unsigned mask;
  h5g_filter_pipeline szip = {1, {{.id = H5Z_FILTER_SZIP}}};
  h5g_filter_ctx *ctx = h5g_filter_ctx_new(&szip, sizeof in);
  EXPECT(ctx && h5g_filters_decode(ctx, 0, in, sizeof in, out, sizeof in, &why) == -1 && why,
         "szip pipeline decodes");
  h5g_filter_ctx_free(ctx);
  h5g_filter_pipeline fl = {
      2, {{.id = H5Z_FILTER_DEFLATE, .flags = H5Z_FLAG_OPTIONAL, .param = 6},
          {.id = H5Z_FILTER_FLETCHER32}}};
  ctx = h5g_filter_ctx_new(&fl, sizeof in);
  EXPECT(h5g_filters_encode(ctx, in, sizeof in, out, 8, &bytes, &mask, &why) == -1 && why,
         "encoding into a buffer below the bound");
  EXPECT(h5g_filters_encode(ctx, in, sizeof in, out, sizeof out, &bytes, &mask, &why) == 0,
         "encoding 64 zero bytes: %s", why ? why : "");
  EXPECT(h5g_filters_decode(ctx, 0, out, bytes, in, sizeof in - 1, &why) == -1 && why,
         "decoding to the wrong size");
  EXPECT(h5g_filters_decode(ctx, 0, out, 3, in, sizeof in, &why) == -1 && why,
         "a chunk shorter than its checksum");
  EXPECT(h5g_filters_decode(ctx, 0, out, bytes, out + 128, 2 * sizeof in, &why) == -1 && why,
         "a chunk larger than the context's");
  h5g_filter_ctx_free(ctx);
}

int main(int argc, char **argv) {
  const char *prefix = argc > 1 ? argv[1] : "test_filters";
  char path[1024];
  snprintf(path, sizeof path, "%s.h5", prefix);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  MUST_H5(file);
  uint64_t seed = 1;
  for (int k = 0; k < NPIPELINES; k++)
    for (int w = 0; w < NWIDTHS; w++)
      for (int kind = 0; kind < NKINDS; kind++) {
        dataset_case dc = {&pipelines[k], widths[w], 2500, 1001, kind};
        check_dataset(file, &dc, seed++);
      }
  /* 1 MiB chunks: deflate's many blocks, stored blocks for random data. */
  for (int kind = 0; kind < NKINDS; kind++) {
    dataset_case dc = {&pipelines[6], 8, 300000, 131072, kind};
    check_dataset(file, &dc, seed++);
    dc.pc = &pipelines[2];
    dc.width = 4;
    check_dataset(file, &dc, seed++);
  }
  check_refusals();
  MUST_H5(H5Fclose(file));
  remove(path);
  return test_summary("test_filters");
}
