/* h5gsort_fixtures OUT.h5: writes hand-made datasets for the bad-input tests and the checkers'
 * self-tests.
 * Datasets h5gsort must refuse (exit 2): /string (fixed strings), /vlstring (variable-length
 * strings), /compound, /enum, /opaque, /vlen (variable-length int sequences), /twod (10 x 3
 * int32), /scalar (0-D int32), and /group (a group, not a dataset).
 * Valid ones: /keys (1-D int32, 1000 elements), /keys4 (1-D int32, 4 elements: rows for the
 * 4-element datasets above) and float64 arrays for the checker:
 * /float/ascending in numpy order (signed zeros mixed, NaNs of both signs last), /float/descending
 * its reverse, /float/nan_not_last (a NaN before +inf), /float/payload (one NaN payload changed).
 * For h5gsort_check_records: an input /records/in/{keys int32, id uint8 row ids, pay 6x2 float32,
 * attribute "units" on keys} and outputs /records/VARIANT/{keys, id, pay, index}: "good" (a
 * correct stable sort) and one defect each: "unstable" (equal keys swapped everywhere),
 * "payload" (two pay rows swapped), "index_dup" (a repeated index), "disagree" (index and ids
 * differ), "unsorted", "wrong_key" (a key that is not its source's), "noattr". Signed zeros:
 * /records/zeros/in/{keys f64 +0 -0 +0 -0, id} with outputs "good" and "unstable" (the -0.0 rows
 * reversed, not adjacent).
 * Other modes (tests/realfiles): --realfiles DIR, --hold FILE SECONDS and --as-unsigned, described
 * where they are written. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/mix.h"

#define CHECK_H5(call)                                                                            \
  do {                                                                                            \
    if ((call) < 0) {                                                                             \
      fprintf(stderr, "h5gsort_fixtures: %s failed (line %d)\n", #call, __LINE__);                 \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

static int write_dataset(hid_t file, const char *name, hid_t type, hid_t space, const void *data) {
  hid_t dset;
  CHECK_H5(dset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  CHECK_H5(H5Dclose(dset));
  return 0;
}

static int write_floats(hid_t file, const char *name, const uint64_t *bits, hsize_t n) {
  hid_t space;
  double values[16];
  memcpy(values, bits, n * sizeof *values); /* bit patterns, never float arithmetic */
  CHECK_H5(space = H5Screate_simple(1, &n, NULL));
  if (write_dataset(file, name, H5T_NATIVE_DOUBLE, space, values)) return 1;
  CHECK_H5(H5Sclose(space));
  return 0;
}

static int write_float_fixtures(hid_t file) {
  enum { N = 12 };
  const uint64_t ascending[N] = {
      0xfff0000000000000u, /* -inf */ 0xc000000000000000u, /* -2 */
      0x8000000000000001u, /* -denormal */ 0x0000000000000000u, /* +0 */
      0x8000000000000000u, /* -0 */ 0x0000000000000000u, /* +0 */
      0x0000000000000001u, /* +denormal */ 0x3ff0000000000000u, /* 1 */
      0x7ff0000000000000u, /* +inf */ 0xfff8000000000000u, /* -NaN */
      0x7ff8000000000001u, /* NaN, payload 1 */ 0x7ff0000000000002u /* signalling NaN */};
  uint64_t descending[N], nan_not_last[N], payload[N];
  for (int i = 0; i < N; i++) descending[i] = ascending[N - 1 - i];
  memcpy(nan_not_last, ascending, sizeof ascending);
  nan_not_last[8] = ascending[9];
  nan_not_last[9] = ascending[8];
  memcpy(payload, ascending, sizeof ascending);
  payload[10] = 0x7ff8000000000003u;
  hid_t group;
  CHECK_H5(group = H5Gcreate2(file, "float", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (write_floats(group, "ascending", ascending, N) ||
      write_floats(group, "descending", descending, N) ||
      write_floats(group, "nan_not_last", nan_not_last, N) ||
      write_floats(group, "payload", payload, N))
    return 1;
  CHECK_H5(H5Gclose(group));
  return 0;
}

/* ---- record-checker fixtures ---------------------------------------------------------------- */

enum { RECORDS = 6, ZEROS = 4 };

static int write_1d(hid_t group, const char *name, hid_t type, hsize_t n, const void *data) {
  hid_t space;
  CHECK_H5(space = H5Screate_simple(1, &n, NULL));
  if (write_dataset(group, name, type, space, data)) return 1;
  CHECK_H5(H5Sclose(space));
  return 0;
}

static int write_units(hid_t group, const char *dataset) {
  hid_t dset, type, space, attr;
  CHECK_H5(dset = H5Dopen2(group, dataset, H5P_DEFAULT));
  CHECK_H5(type = H5Tcopy(H5T_C_S1));
  CHECK_H5(H5Tset_size(type, 4));
  CHECK_H5(space = H5Screate(H5S_SCALAR));
  CHECK_H5(attr = H5Acreate2(dset, "units", type, space, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Awrite(attr, type, "keV"));
  CHECK_H5(H5Aclose(attr));
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Tclose(type));
  CHECK_H5(H5Dclose(dset));
  return 0;
}

/* /records/NAME: keys, id and pay gathered from the input by key_src, id_src, pay_src; index as
 * given; the "units" attribute unless noattr. */
static int write_variant(hid_t file, const char *name, const int *key_src, const int *id_src,
                         const int *pay_src, const uint64_t *index, int attr) {
  static const int32_t keys[RECORDS] = {3, 1, 2, 1, 3, 1};
  int32_t out_keys[RECORDS];
  uint8_t out_ids[RECORDS];
  float out_pay[RECORDS][2];
  for (int i = 0; i < RECORDS; i++) {
    out_keys[i] = keys[key_src[i]];
    out_ids[i] = (uint8_t)id_src[i];
    out_pay[i][0] = (float)pay_src[i] + 0.5f; /* input row r holds {r + 0.5, -r} */
    out_pay[i][1] = -(float)pay_src[i];
  }
  char path[64];
  hid_t group, space;
  const hsize_t dims[2] = {RECORDS, 2};
  snprintf(path, sizeof path, "/records/%s", name);
  CHECK_H5(group = H5Gcreate2(file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(space = H5Screate_simple(2, dims, NULL));
  if (write_1d(group, "keys", H5T_NATIVE_INT32, RECORDS, out_keys) ||
      write_1d(group, "id", H5T_NATIVE_UINT8, RECORDS, out_ids) ||
      write_dataset(group, "pay", H5T_NATIVE_FLOAT, space, out_pay) ||
      (index && write_1d(group, "index", H5T_NATIVE_UINT64, RECORDS, index)) ||
      (attr && write_units(group, "keys")))
    return 1;
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Gclose(group));
  return 0;
}

static int write_record_fixtures(hid_t file) {
  static const int identity[RECORDS] = {0, 1, 2, 3, 4, 5};
  static const int good[RECORDS] = {1, 3, 5, 2, 0, 4}, unstable[RECORDS] = {3, 1, 5, 2, 0, 4},
                   pay_swapped[RECORDS] = {1, 3, 5, 2, 4, 0}, unsorted[RECORDS] = {2, 1, 3, 5, 0, 4},
                   wrong_source[RECORDS] = {1, 3, 5, 0, 2, 4};
  uint64_t good_index[RECORDS], unstable_index[RECORDS], wrong_index[RECORDS],
      unsorted_index[RECORDS], dup_index[RECORDS];
  for (int i = 0; i < RECORDS; i++) {
    good_index[i] = dup_index[i] = (uint64_t)good[i];
    unstable_index[i] = (uint64_t)unstable[i];
    wrong_index[i] = (uint64_t)wrong_source[i];
    unsorted_index[i] = (uint64_t)unsorted[i];
  }
  dup_index[RECORDS - 1] = dup_index[0];
  hid_t group;
  CHECK_H5(group = H5Gcreate2(file, "records", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Gclose(group));
  if (write_variant(file, "in", identity, identity, identity, NULL, 1) ||
      write_variant(file, "good", good, good, good, good_index, 1) ||
      write_variant(file, "unstable", unstable, unstable, unstable, unstable_index, 1) ||
      write_variant(file, "payload", good, good, pay_swapped, good_index, 1) ||
      write_variant(file, "index_dup", good, good, good, dup_index, 1) ||
      write_variant(file, "disagree", good, good, good, unstable_index, 1) ||
      write_variant(file, "unsorted", unsorted, unsorted, unsorted, unsorted_index, 1) ||
      write_variant(file, "wrong_key", good, wrong_source, wrong_source, wrong_index, 1) ||
      write_variant(file, "noattr", good, good, good, good_index, 0))
    return 1;

  /* +0 -0 +0 -0: numpy ties them all; stability is about bit-identical keys. */
  static const uint64_t zeros[ZEROS] = {0, 0x8000000000000000u, 0, 0x8000000000000000u};
  static const int zeros_good[ZEROS] = {1, 0, 3, 2}, zeros_unstable[ZEROS] = {3, 0, 1, 2};
  const int *sources[3] = {identity, zeros_good, zeros_unstable};
  const char *names[3] = {"/records/zeros/in", "/records/zeros/good", "/records/zeros/unstable"};
  for (int v = 0; v < 3; v++) {
    double keys[ZEROS];
    uint8_t ids[ZEROS];
    for (int i = 0; i < ZEROS; i++) {
      memcpy(&keys[i], &zeros[sources[v][i]], sizeof keys[i]);
      ids[i] = (uint8_t)sources[v][i];
    }
    hid_t lcpl;
    CHECK_H5(lcpl = H5Pcreate(H5P_LINK_CREATE));
    CHECK_H5(H5Pset_create_intermediate_group(lcpl, 1));
    CHECK_H5(group = H5Gcreate2(file, names[v], lcpl, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_H5(H5Pclose(lcpl));
    if (write_1d(group, "keys", H5T_NATIVE_DOUBLE, ZEROS, keys) ||
        write_1d(group, "id", H5T_NATIVE_UINT8, ZEROS, ids))
      return 1;
    CHECK_H5(H5Gclose(group));
  }
  return 0;
}

/* ---- real-file fixtures (tests/realfiles) -------------------------------------------------- */

/* --realfiles DIR: DIR/real.h5 holds every storage h5py reads, each dataset written through
 * HDF5's own API: /layouts (contiguous, compact, chunked, and the filters gzip, shuffle,
 * fletcher32, szip, scale-offset, n-bit), /partial (chunked datasets whose chunks are partly
 * or never written, with a fill value, allocated late or early; a contiguous dataset never
 * written), /bits (bitfields of 8-64 bits, both byte orders), /lzf/keys (filter 32000,
 * registered here as a pass-through: h5gsort has no such filter), /links (soft, external to
 * ext.h5, dangling soft, external to a missing file or object), /vds (two sources in vsrc.h5),
 * /vds_missing (its source file absent) and /long/<1000+ characters>/keys. DIR/expected.h5
 * holds, contiguous and of the same type, what a reader must get for every /layouts, /partial
 * and /bits dataset (unwritten elements are the fill value), computed here, never read back.
 * DIR/latest.h5 (/keys, latest file format) is for --hold. */

enum { F_SHUFFLE = 1, F_GZIP = 2, F_FLETCHER = 4, F_SZIP = 8, F_SCALEOFFSET = 16, F_NBIT = 32,
       F_LZF = 64, F_EXTERNAL = 128 /* raw data in the file external.bin beside it (H5Pset_external) */,
       F_EDGE_UNFILTERED = 256 /* the partial last chunk stored unfiltered (latest format only) */ };
enum { LZF_ID = 32000, REAL_MAX = 100000 };

typedef struct {
  const char *name;
  hid_t type;
  hsize_t n, chunk; /* chunk 0: contiguous, or compact */
  int compact, filters, has_fill;
  int64_t fill;
  H5D_alloc_time_t alloc;
  int partial;           /* 0: every element written; 1: only the ranges below */
  hsize_t written[2][2]; /* element ranges [begin, end) */
} real_spec;

static int is_bitfield(hid_t type) { return H5Tget_class(type) == H5T_BITFIELD; }

/* Element i as written: all 64 bits for bitfields (truncated to the width by HDF5), else a signed
 * range every integer and float type here holds exactly (int16 with more repeats). */
static int64_t real_value(const real_spec *s, uint64_t i) {
  uint64_t m = h5g_mix64(i * 31 + s->n);
  if (is_bitfield(s->type)) return (int64_t)m;
  int64_t range = H5Tget_size(s->type) == 2 ? 30000 : 2000003;
  return (int64_t)(m % (uint64_t)range) - (H5Tget_sign(s->type) == H5T_SGN_NONE ? 0 : range / 2);
}

static size_t passthrough(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                          size_t *buf_size, void **buf) {
  (void)flags, (void)cd_nelmts, (void)cd_values, (void)buf_size, (void)buf;
  return nbytes;
}

static int write_real(hid_t file, hid_t expected, const real_spec *s, int64_t *vals) {
  char external[4096];
  hid_t dcpl, space, dset, lcpl, mem = is_bitfield(s->type) ? H5T_NATIVE_B64 : H5T_NATIVE_INT64;
  CHECK_H5(lcpl = H5Pcreate(H5P_LINK_CREATE));
  CHECK_H5(H5Pset_create_intermediate_group(lcpl, 1));
  CHECK_H5(dcpl = H5Pcreate(H5P_DATASET_CREATE));
  if (s->compact) CHECK_H5(H5Pset_layout(dcpl, H5D_COMPACT));
  if (s->chunk) CHECK_H5(H5Pset_chunk(dcpl, 1, &s->chunk));
  if (s->filters & F_SHUFFLE) CHECK_H5(H5Pset_shuffle(dcpl));
  if (s->filters & F_SCALEOFFSET) CHECK_H5(H5Pset_scaleoffset(dcpl, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT));
  if (s->filters & F_NBIT) CHECK_H5(H5Pset_nbit(dcpl));
  if (s->filters & F_GZIP) CHECK_H5(H5Pset_deflate(dcpl, 6));
  if (s->filters & F_SZIP) CHECK_H5(H5Pset_szip(dcpl, H5_SZIP_NN_OPTION_MASK, 8));
  if (s->filters & F_LZF) CHECK_H5(H5Pset_filter(dcpl, LZF_ID, H5Z_FLAG_MANDATORY, 0, NULL));
  if (s->filters & F_FLETCHER) CHECK_H5(H5Pset_fletcher32(dcpl));
  if (s->filters & F_EDGE_UNFILTERED)
    CHECK_H5(H5Pset_chunk_opts(dcpl, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS));
  if (s->filters & F_EXTERNAL) { /* an absolute name: HDF5 1.10 looks relative ones up from the cwd */
    ssize_t len = H5Fget_name(file, external, sizeof external);
    char *slash = len > 0 ? strrchr(external, '/') : NULL;
    if (!slash || (size_t)(slash - external) + 14 > sizeof external) return 1;
    strcpy(slash + 1, "external.bin");
    CHECK_H5(H5Pset_external(dcpl, external, 0, H5F_UNLIMITED));
  }
  if (s->has_fill) CHECK_H5(H5Pset_fill_value(dcpl, mem, &s->fill));
  if (s->alloc != H5D_ALLOC_TIME_DEFAULT) CHECK_H5(H5Pset_alloc_time(dcpl, s->alloc));
  CHECK_H5(space = H5Screate_simple(1, &s->n, NULL));
  CHECK_H5(dset = H5Dcreate2(file, s->name, s->type, space, lcpl, dcpl, H5P_DEFAULT));
  int whole = !s->partial;
  for (hsize_t i = 0; i < s->n; i++) vals[i] = whole ? real_value(s, i) : (s->has_fill ? s->fill : 0);
  for (int r = 0; r < 2 && !whole; r++) {
    hsize_t begin = s->written[r][0], count = s->written[r][1] - begin;
    if (count == 0) continue;
    for (hsize_t i = begin; i < begin + count; i++) vals[i] = real_value(s, i);
    hid_t mspace;
    CHECK_H5(mspace = H5Screate_simple(1, &count, NULL));
    CHECK_H5(H5Sselect_hyperslab(space, H5S_SELECT_SET, &begin, NULL, &count, NULL));
    CHECK_H5(H5Dwrite(dset, mem, mspace, space, H5P_DEFAULT, vals + begin));
    CHECK_H5(H5Sclose(mspace));
  }
  if (whole) CHECK_H5(H5Dwrite(dset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals));
  CHECK_H5(H5Dclose(dset));
  CHECK_H5(H5Sselect_all(space));
  if (expected >= 0) {
    CHECK_H5(dset = H5Dcreate2(expected, s->name, s->type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_H5(H5Dwrite(dset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals));
    CHECK_H5(H5Dclose(dset));
  }
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Pclose(dcpl));
  CHECK_H5(H5Pclose(lcpl));
  return 0;
}

/* A new file DIR/NAME (latest format when asked: superblock 3 marks writers in the file). */
static hid_t create_in(const char *dir, const char *name, int latest) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (latest) H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (file < 0) fprintf(stderr, "h5gsort_fixtures: cannot create %s\n", path);
  return file;
}

/* DIR/NAME with datasets of `sources` (NULL-terminated) of n[i] int32 each. */
static int write_sources(const char *dir, const char *name, const char *const *sources,
                         const hsize_t *n, int64_t *vals) {
  hid_t file = create_in(dir, name, 0);
  if (file < 0) return 1;
  for (int i = 0; sources[i]; i++) {
    real_spec s = {sources[i], H5T_STD_I32LE, n[i], 0, 0, 0, 0, 0, H5D_ALLOC_TIME_DEFAULT, 0, {{0, 0}}};
    if (write_real(file, -1, &s, vals)) return 1;
  }
  CHECK_H5(H5Fclose(file));
  return 0;
}

/* /NAME: a virtual int32 dataset of sources FILE:/SRC[i] (n[i] elements each) laid end to end. */
static int write_vds(hid_t file, const char *name, const char *src_file, const char *const *src,
                     const hsize_t *n, int count) {
  hsize_t total = 0;
  for (int i = 0; i < count; i++) total += n[i];
  hid_t dcpl, vspace, sspace, dset;
  CHECK_H5(dcpl = H5Pcreate(H5P_DATASET_CREATE));
  CHECK_H5(vspace = H5Screate_simple(1, &total, NULL));
  hsize_t start = 0;
  for (int i = 0; i < count; i++) {
    CHECK_H5(sspace = H5Screate_simple(1, &n[i], NULL));
    CHECK_H5(H5Sselect_hyperslab(vspace, H5S_SELECT_SET, &start, NULL, &n[i], NULL));
    CHECK_H5(H5Pset_virtual(dcpl, vspace, src_file, src[i], sspace));
    CHECK_H5(H5Sclose(sspace));
    start += n[i];
  }
  CHECK_H5(H5Sselect_all(vspace));
  CHECK_H5(dset = H5Dcreate2(file, name, H5T_STD_I32LE, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  CHECK_H5(H5Dclose(dset));
  CHECK_H5(H5Sclose(vspace));
  CHECK_H5(H5Pclose(dcpl));
  return 0;
}

static int write_links(hid_t file, const char *dir, int64_t *vals) {
  const char *ext_src[] = {"data", NULL}, *vds_src[] = {"a", "b", NULL};
  const hsize_t ext_n[] = {10007}, vds_n[] = {6000, 4007}, gone_n[] = {100};
  if (write_sources(dir, "ext.h5", ext_src, ext_n, vals) ||
      write_sources(dir, "vsrc.h5", vds_src, vds_n, vals))
    return 1;
  hid_t group;
  CHECK_H5(group = H5Gcreate2(file, "links", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Lcreate_soft("/layouts/gzip", group, "soft", H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Lcreate_soft("/nowhere", group, "dangling", H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Lcreate_external("ext.h5", "/data", group, "ext", H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Lcreate_external("gone.h5", "/data", group, "ext_missing", H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Lcreate_external("ext.h5", "/nothing", group, "ext_noobj", H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Gclose(group));
  if (write_vds(file, "vds", "vsrc.h5", vds_src, vds_n, 2) ||
      write_vds(file, "vds_missing", "vgone.h5", ext_src, gone_n, 1))
    return 1;
  return 0;
}

/* /long/<5 groups of 250 characters>/keys: a dataset path of 1270 characters. */
static int write_long_path(hid_t file, int64_t *vals) {
  char path[2048] = "/long";
  for (int g = 0; g < 5; g++) {
    size_t used = strlen(path);
    path[used++] = '/';
    memset(path + used, 'a' + g, 250);
    path[used + 250] = '\0';
  }
  strcat(path, "/keys");
  real_spec s = {path, H5T_STD_U32LE, 3001, 0, 0, 0, 0, 0, H5D_ALLOC_TIME_DEFAULT, 0, {{0, 0}}};
  return write_real(file, -1, &s, vals);
}

/* /layouts/extendible: a chunked, gzip-filtered int32 dataset of unlimited length (h5py's
 * maxshape=(None,)), as appending writers leave them. */
static int write_extendible(hid_t file, int64_t *vals) {
  const real_spec s = {"/layouts/extendible", H5T_STD_I32LE, 10007, 0, 0, 0, 0, 0, H5D_ALLOC_TIME_DEFAULT, 0, {{0, 0}}};
  hsize_t n = s.n, unlimited = H5S_UNLIMITED, chunk = 777;
  hid_t dcpl, space, dset;
  CHECK_H5(dcpl = H5Pcreate(H5P_DATASET_CREATE));
  CHECK_H5(H5Pset_chunk(dcpl, 1, &chunk));
  CHECK_H5(H5Pset_deflate(dcpl, 6));
  CHECK_H5(space = H5Screate_simple(1, &n, &unlimited));
  CHECK_H5(dset = H5Dcreate2(file, s.name, s.type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  for (hsize_t i = 0; i < n; i++) vals[i] = real_value(&s, i);
  CHECK_H5(H5Dwrite(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals));
  CHECK_H5(H5Dclose(dset));
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Pclose(dcpl));
  return 0;
}

/* An integer type whose value bits do not fill its bytes: `precision` bits at bit `offset`. */
static hid_t padded(hid_t base, size_t precision, size_t offset) {
  hid_t type = H5Tcopy(base);
  if (type < 0 || H5Tset_precision(type, precision) < 0 || H5Tset_offset(type, offset) < 0) return -1;
  return type;
}

static int write_realfiles(const char *dir) {
  const H5D_alloc_time_t deflt = H5D_ALLOC_TIME_DEFAULT;
  hid_t i12 = padded(H5T_STD_I16LE, 12, 0), u20be = padded(H5T_STD_U32BE, 20, 5),
        i40 = padded(H5T_STD_I64LE, 40, 8);
  CHECK_H5(i12);
  CHECK_H5(u20be);
  CHECK_H5(i40);
  const real_spec specs[] = {
      {"/layouts/contiguous", H5T_STD_I32LE, 10007, 0, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/compact", H5T_STD_I16LE, 10007, 0, 1, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/chunked", H5T_STD_I32BE, 10007, 1000, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/gzip", H5T_IEEE_F64LE, 10007, 1000, 0, F_GZIP, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/shuffle_gzip", H5T_STD_I64LE, 10007, 999, 0, F_SHUFFLE | F_GZIP, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/fletcher32", H5T_STD_U32LE, 10007, 1000, 0, F_FLETCHER, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/szip", H5T_STD_I32LE, 10007, 1000, 0, F_SZIP, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/scaleoffset", H5T_STD_I32LE, 10007, 1000, 0, F_SCALEOFFSET, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/nbit", H5T_STD_I32LE, 10007, 1000, 0, F_NBIT, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/external", H5T_STD_I32LE, 10007, 0, 0, F_EXTERNAL, 0, 0, deflt, 0, {{0, 0}}},
      {"/layouts/all", H5T_STD_U16BE, 10007, 512, 0, F_SHUFFLE | F_GZIP | F_FLETCHER, 0, 0, deflt, 0, {{0, 0}}},
      /* the recipe: h5py create_dataset(chunks=1000, gzip, shuffle, fillvalue=-5), then
       * only [5000, 7000) written */
      {"/partial/recipe", H5T_STD_I64LE, 100000, 1000, 0, F_SHUFFLE | F_GZIP, 1, -5, deflt, 1, {{5000, 7000}}},
      {"/partial/unwritten", H5T_STD_I64LE, 100000, 1000, 0, F_SHUFFLE | F_GZIP, 1, -5, deflt, 1, {{0, 0}}},
      {"/partial/early", H5T_STD_I32LE, 20000, 1000, 0, F_GZIP, 1, 7, H5D_ALLOC_TIME_EARLY, 1, {{100, 1200}}},
      {"/partial/be_fletcher", H5T_STD_I32BE, 100000, 700, 0, F_SHUFFLE | F_FLETCHER, 1, 123456, deflt, 1,
       {{0, 1000}, {5000, 5500}}},
      {"/partial/carry", H5T_IEEE_F32LE, 100000, 1000, 0, F_GZIP, 1, 3, deflt, 1, {{0, 50000}}},
      {"/partial/contiguous", H5T_STD_I16LE, 5000, 0, 0, 0, 1, -3, H5D_ALLOC_TIME_LATE, 1, {{0, 0}}},
      {"/bits/b8", H5T_STD_B8LE, 3001, 0, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/bits/b16le", H5T_STD_B16LE, 3001, 0, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/bits/b16be", H5T_STD_B16BE, 3001, 500, 0, F_SHUFFLE | F_GZIP, 0, 0, deflt, 0, {{0, 0}}},
      {"/bits/b32le", H5T_STD_B32LE, 3001, 0, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/bits/b32be", H5T_STD_B32BE, 3001, 0, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/bits/b64le", H5T_STD_B64LE, 3001, 0, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/bits/b64be", H5T_STD_B64BE, 3001, 1000, 0, F_GZIP, 0, 0, deflt, 0, {{0, 0}}},
      {"/lzf/keys", H5T_STD_I32LE, 1000, 100, 0, F_LZF, 0, 0, deflt, 0, {{0, 0}}},
      /* padded integers: h5py reads them converted to the full width */
      {"/padded/i12", i12, 10007, 0, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/padded/u20be", u20be, 10007, 1000, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      {"/padded/i40", i40, 10007, 0, 0, 0, 0, 0, deflt, 0, {{0, 0}}},
      /* filtered: the output keeps the filters, so its rows are written in the file's form */
      {"/padded/i12_gzip", i12, 10007, 1000, 0, F_SHUFFLE | F_GZIP, 0, 0, deflt, 0, {{0, 0}}},
      {"/padded/u20be_nbit", u20be, 10007, 999, 0, F_NBIT, 0, 0, deflt, 0, {{0, 0}}},
  };
  const H5Z_class2_t lzf = {H5Z_CLASS_T_VERS, (H5Z_filter_t)LZF_ID, 1, 1, "lzf", NULL, NULL, passthrough};
  CHECK_H5(H5Zregister(&lzf));
  int64_t *vals = malloc(REAL_MAX * sizeof *vals);
  if (!vals) return 1;
  hid_t file = create_in(dir, "real.h5", 0), expected = create_in(dir, "expected.h5", 0);
  if (file < 0 || expected < 0) return 1;
  for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
    const real_spec *s = &specs[i];
    if (write_real(file, strncmp(s->name, "/lzf", 4) ? expected : -1, s, vals)) return 1;
  }
  if (write_links(file, dir, vals) || write_long_path(file, vals) || write_extendible(file, vals))
    return 1;
  CHECK_H5(H5Fclose(expected));
  CHECK_H5(H5Fclose(file));
  CHECK_H5(file = create_in(dir, "latest.h5", 1));
  real_spec keys = {"/keys", H5T_STD_I32LE, 1000, 0, 0, 0, 0, 0, deflt, 0, {{0, 0}}};
  real_spec edge = {"/edge_unfiltered", H5T_STD_I32LE, 10007, 1000, 0,
                    F_SHUFFLE | F_GZIP | F_EDGE_UNFILTERED, 0, 0, deflt, 0, {{0, 0}}};
  if (write_real(file, -1, &keys, vals) || write_real(file, -1, &edge, vals)) return 1;
  CHECK_H5(H5Fclose(file));
  free(vals);
  return 0;
}

/* --hold FILE SECONDS: keeps FILE open for writing (a writer's lock, and with the latest format
 * the superblock's mark), prints "held" once it is, then closes it. */
static int hold_open(const char *path, int seconds) {
  hid_t file, fapl;
  CHECK_H5(fapl = H5Pcreate(H5P_FILE_ACCESS));
  CHECK_H5(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
  CHECK_H5(file = H5Fopen(path, H5F_ACC_RDWR, fapl));
  printf("held\n");
  fflush(stdout);
  sleep((unsigned)seconds);
  CHECK_H5(H5Fclose(file));
  CHECK_H5(H5Pclose(fapl));
  return 0;
}

/* --as-unsigned IN PATH OUT PATH: the bitfield dataset IN:PATH's bytes as the unsigned integer
 * type of the same size and byte order, in OUT:PATH (OUT created or added to), so that
 * h5gsort_check can compare bitfields. Fails (exit 1) when IN:PATH is not a bitfield.
 * --as-full-width IN PATH OUT PATH: the padded integer dataset IN:PATH (precision below its size)
 * converted by HDF5 to the full-width native integer, as h5py reads it; fails on other types. */
static int as_unsigned(const char *in, const char *in_path, const char *out, const char *out_path,
                       int padded_ints) {
  hid_t fin, dset, type, space, fout, uint_type, lcpl;
  CHECK_H5(fin = H5Fopen(in, H5F_ACC_RDONLY, H5P_DEFAULT));
  CHECK_H5(dset = H5Dopen2(fin, in_path, H5P_DEFAULT));
  CHECK_H5(type = H5Dget_type(dset));
  int padded_int = H5Tget_class(type) == H5T_INTEGER && H5Tget_precision(type) != 8 * H5Tget_size(type);
  if (padded_ints ? !padded_int : !is_bitfield(type)) {
    fprintf(stderr, "h5gsort_fixtures: %s:%s is not a %s\n", in, in_path,
            padded_ints ? "padded integer" : "bitfield");
    return 1;
  }
  CHECK_H5(space = H5Dget_space(dset));
  hssize_t n = H5Sget_simple_extent_npoints(space);
  size_t size = H5Tget_size(type);
  unsigned char *raw = malloc((size_t)n * size + 1);
  if (!raw) return 1;
  if (padded_ints) { /* converted by HDF5 to the full-width integer, as h5py reads it */
    int is_signed = H5Tget_sign(type) == H5T_SGN_2;
    hid_t full = size == 1 ? (is_signed ? H5T_NATIVE_INT8 : H5T_NATIVE_UINT8)
                 : size == 2 ? (is_signed ? H5T_NATIVE_INT16 : H5T_NATIVE_UINT16)
                 : size == 4 ? (is_signed ? H5T_NATIVE_INT32 : H5T_NATIVE_UINT32)
                             : (is_signed ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64);
    CHECK_H5(uint_type = H5Tcopy(full));
  } else { /* the bitfield's bytes as the unsigned integer of its size and byte order */
    hid_t base = size == 1 ? H5T_STD_U8LE : size == 2 ? H5T_STD_U16LE : size == 4 ? H5T_STD_U32LE : H5T_STD_U64LE;
    CHECK_H5(uint_type = H5Tcopy(base));
    CHECK_H5(H5Tset_order(uint_type, H5Tget_order(type)));
  }
  if (n > 0) CHECK_H5(H5Dread(dset, padded_ints ? uint_type : type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw));
  fout = access(out, F_OK) == 0 ? H5Fopen(out, H5F_ACC_RDWR, H5P_DEFAULT)
                                : H5Fcreate(out, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  CHECK_H5(fout);
  CHECK_H5(lcpl = H5Pcreate(H5P_LINK_CREATE));
  CHECK_H5(H5Pset_create_intermediate_group(lcpl, 1));
  hid_t copy;
  CHECK_H5(copy = H5Dcreate2(fout, out_path, uint_type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT));
  if (n > 0) CHECK_H5(H5Dwrite(copy, uint_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw));
  free(raw);
  CHECK_H5(H5Dclose(copy));
  CHECK_H5(H5Pclose(lcpl));
  CHECK_H5(H5Fclose(fout));
  CHECK_H5(H5Tclose(uint_type));
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Tclose(type));
  CHECK_H5(H5Dclose(dset));
  CHECK_H5(H5Fclose(fin));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--realfiles") == 0) return write_realfiles(argv[2]);
  if (argc == 4 && strcmp(argv[1], "--hold") == 0) return hold_open(argv[2], atoi(argv[3]));
  if (argc == 6 && strcmp(argv[1], "--as-unsigned") == 0)
    return as_unsigned(argv[2], argv[3], argv[4], argv[5], 0);
  if (argc == 6 && strcmp(argv[1], "--as-full-width") == 0)
    return as_unsigned(argv[2], argv[3], argv[4], argv[5], 1);
  if (argc != 2) {
    fputs("usage: h5gsort_fixtures OUT.h5 | --realfiles DIR | --hold FILE SECONDS |\n"
          "       --as-unsigned IN.h5 PATH OUT.h5 PATH | --as-full-width IN.h5 PATH OUT.h5 PATH\n",
          stderr);
    return 2;
  }
  hid_t file, space4, space2d, scalar, type;
  const hsize_t four = 4, twod[2] = {10, 3}, thousand = 1000;
  int32_t ints[1000];
  for (int i = 0; i < 1000; i++) ints[i] = (int32_t)((i * 7919) % 1000) - 500;

  CHECK_H5(file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(space4 = H5Screate_simple(1, &four, NULL));
  CHECK_H5(space2d = H5Screate_simple(2, twod, NULL));
  CHECK_H5(scalar = H5Screate(H5S_SCALAR));

  const char fixed[4][6] = {"delta", "alpha", "gamma", "beta"};
  CHECK_H5(type = H5Tcopy(H5T_C_S1));
  CHECK_H5(H5Tset_size(type, 6));
  if (write_dataset(file, "string", type, space4, fixed)) return 1;
  CHECK_H5(H5Tset_size(type, H5T_VARIABLE));
  const char *variable[4] = {"d", "a", "c", "b"};
  if (write_dataset(file, "vlstring", type, space4, variable)) return 1;
  CHECK_H5(H5Tclose(type));

  struct pair { int32_t key; double value; } pairs[4] = {{3, 0.5}, {1, 1.5}, {2, 2.5}, {0, 3.5}};
  CHECK_H5(type = H5Tcreate(H5T_COMPOUND, sizeof(struct pair)));
  CHECK_H5(H5Tinsert(type, "key", HOFFSET(struct pair, key), H5T_NATIVE_INT32));
  CHECK_H5(H5Tinsert(type, "value", HOFFSET(struct pair, value), H5T_NATIVE_DOUBLE));
  if (write_dataset(file, "compound", type, space4, pairs)) return 1;
  CHECK_H5(H5Tclose(type));

  int32_t colors[4] = {2, 0, 1, 0}, value;
  CHECK_H5(type = H5Tenum_create(H5T_NATIVE_INT32));
  CHECK_H5(H5Tenum_insert(type, "RED", (value = 0, &value)));
  CHECK_H5(H5Tenum_insert(type, "GREEN", (value = 1, &value)));
  CHECK_H5(H5Tenum_insert(type, "BLUE", (value = 2, &value)));
  if (write_dataset(file, "enum", type, space4, colors)) return 1;
  CHECK_H5(H5Tclose(type));

  const char blobs[4][3] = {"ab", "cd", "ef", "gh"};
  CHECK_H5(type = H5Tcreate(H5T_OPAQUE, 3));
  CHECK_H5(H5Tset_tag(type, "blob"));
  if (write_dataset(file, "opaque", type, space4, blobs)) return 1;
  CHECK_H5(H5Tclose(type));

  hvl_t sequences[4];
  for (int i = 0; i < 4; i++) {
    sequences[i].len = (size_t)i + 1;
    sequences[i].p = ints;
  }
  CHECK_H5(type = H5Tvlen_create(H5T_NATIVE_INT32));
  if (write_dataset(file, "vlen", type, space4, sequences)) return 1;
  CHECK_H5(H5Tclose(type));

  if (write_dataset(file, "twod", H5T_NATIVE_INT32, space2d, ints)) return 1;
  if (write_dataset(file, "scalar", H5T_NATIVE_INT32, scalar, ints)) return 1;
  hid_t group;
  CHECK_H5(group = H5Gcreate2(file, "group", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Gclose(group));
  hid_t keys_space;
  CHECK_H5(keys_space = H5Screate_simple(1, &thousand, NULL));
  if (write_dataset(file, "keys", H5T_NATIVE_INT32, keys_space, ints)) return 1;
  if (write_1d(file, "keys4", H5T_NATIVE_INT32, 4, ints)) return 1;
  if (write_record_fixtures(file)) return 1;

  CHECK_H5(H5Sclose(keys_space));
  if (write_float_fixtures(file)) return 1;
  CHECK_H5(H5Sclose(scalar));
  CHECK_H5(H5Sclose(space2d));
  CHECK_H5(H5Sclose(space4));
  CHECK_H5(H5Fclose(file));
  return 0;
}
