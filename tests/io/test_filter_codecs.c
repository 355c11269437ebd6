/* io/filter_scaleoffset.c, io/filter_nbit.c and io/convert.c against HDF5 itself (serial, sec2):
 *  - scale-offset of integers of 1, 2, 4 and 8 bytes, signed and unsigned, little- and
 *    big-endian, fill value defined or not, bit width computed or given, alone and before
 *    deflate; n-bit of integers of 1 to 8 bytes at several precisions and offsets and of a
 *    reduced float (HDF5's own test type); data random in a narrow range, over the full range
 *    (scale-offset's full-width chunks), all equal, and holding the fill value; scale-offset of
 *    IEEE floats and doubles (D-scaling, D 0 to 6), either order, fill value defined or not,
 *    alone and before deflate, on values of both signs of the same kinds and with NaNs and
 *    infinities (a float of another format is refused); 5 chunks of 1000 elements, the last
 *    partial: every chunk HDF5 stored (H5Dread_chunk) decodes through h5g_filters_decode to
 *    the bytes HDF5's own read of it yields (the file type, unconverted), and a chunk written
 *    with the filter skipped (filter mask) decodes too;
 *  - conversions: big-endian integers and floats (NaN payloads, infinities, subnormals) and
 *    integers with padding bits (n-bit's types, either order, signed or not, random bits in the
 *    padding) read through HDF5 into the memory types h5gsort uses equal the file's bytes
 *    converted by h5g_convert_apply; conversions it must leave to HDF5 are refused.
 * With --plugins instead: the plugins bzip2 and lz4 (io/filter_plugin.c), alone and with
 * HDF5's filters before or after them, on 4- and 8-byte elements of every kind, decode as HDF5
 * reads them, chunk by chunk (the partial last one and the one stored with every filter
 * skipped included); exit 77 when HDF5 finds neither plugin (HDF5_PLUGIN_PATH).
 * With --szip instead: szip (io/filter_szip.c, libsz's decoder) on 1- to 8-byte integers and
 * floats of either order, both option masks (nn, ec), 8, 16 and 32 pixels per block, alone,
 * after shuffle and before fletcher32, narrow data and random data (which szip cannot shrink:
 * HDF5 skips its optional filter), decodes as HDF5 reads it chunk by chunk, the same way;
 * exit 77 when HDF5 cannot encode szip (no libsz).
 * Usage: test_filter_codecs PREFIX [--plugins|--szip] (file PREFIX.h5, removed at the end). */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/convert.h"
#include "io/filters.h"
#include "tests/support/check.h"

enum { N = 4500, CHUNK = 1000, NCHUNKS = (N + CHUNK - 1) / CHUNK };
enum { NARROW, FULL, EQUAL, WITH_FILL, NKINDS, NONFINITE = NKINDS }; /* the last: floats only */
static const char *const kind_names[] = {"narrow", "full", "equal", "with-fill", "nonfinite"};

static hid_t int_type(size_t size, int is_signed, int big) {
  const hid_t le_u[] = {H5T_STD_U8LE, H5T_STD_U16LE, H5T_STD_U32LE, H5T_STD_U64LE};
  const hid_t le_s[] = {H5T_STD_I8LE, H5T_STD_I16LE, H5T_STD_I32LE, H5T_STD_I64LE};
  const hid_t be_u[] = {H5T_STD_U8BE, H5T_STD_U16BE, H5T_STD_U32BE, H5T_STD_U64BE};
  const hid_t be_s[] = {H5T_STD_I8BE, H5T_STD_I16BE, H5T_STD_I32BE, H5T_STD_I64BE};
  int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
  return H5Tcopy(big ? (is_signed ? be_s[k] : be_u[k]) : (is_signed ? le_s[k] : le_u[k]));
}

/* Element i of a kind, as the low `bits` of a value (fill: the fill value's bytes). */
static void make_data(unsigned char *data, size_t size, int kind, uint64_t *seed,
                      const unsigned char *fill) {
  for (size_t i = 0; i < N; i++) {
    uint64_t r = test_rand(seed), v = kind == FULL ? r : kind == EQUAL ? 0x5A5A5A5A5A5A5A5Aull
                                                                       : 1000 + r % 300;
    for (size_t b = 0; b < size; b++) data[i * size + b] = (unsigned char)(v >> 8 * b);
    if (kind == WITH_FILL && i % 7 == 0) memcpy(data + i * size, fill, size);
  }
}

/* The elements' bytes reversed: values made little-endian, stored big-endian. */
static void swap_elements(unsigned char *data, size_t size) {
  for (size_t i = 0; i < N; i++)
    for (size_t b = 0; b < size / 2; b++) {
      unsigned char t = data[i * size + b];
      data[i * size + b] = data[i * size + size - 1 - b];
      data[i * size + size - 1 - b] = t;
    }
}

/* Every chunk of `dset` (elements of `size` bytes in the file type) decoded by us equals HDF5's
 * read of it; chunk `skipped` (or -1) was written with its filters skipped. */
static void check_chunks(hid_t dset, size_t size, const char *name, int want_identity) {
  hid_t dcpl = H5Dget_create_plist(dset), type = H5Dget_type(dset);
  h5g_filter_pipeline p;
  int ours = 0;
  MUST_H5(dcpl);
  MUST_OK(h5g_filters_from_dcpl(dcpl, type, &p, &ours, name));
  EXPECT(ours, "%s: pipeline not ours", name);
  if (!ours) goto done;
  EXPECT(p.filter[0].identity == want_identity, "%s: identity %d", name, p.filter[0].identity);
  int plugin = 0;
  for (int i = 0; i < p.count; i++) plugin |= p.filter[i].plugin != NULL;
  unsigned char *want = malloc(N * size), *stored = malloc(4 * CHUNK * size + 64),
                *got = malloc(CHUNK * size);
  MUST_H5(H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, want));
  h5g_filter_ctx *ctx = h5g_filter_ctx_new(&p, CHUNK * size);
  for (int c = 0; c < NCHUNKS; c++) {
    hsize_t offset = (hsize_t)c * CHUNK, bytes = 0;
    uint32_t mask = 0;
    const char *why = NULL;
    MUST_H5(H5Dget_chunk_storage_size(dset, &offset, &bytes));
    MUST_H5(H5Dread_chunk(dset, H5P_DEFAULT, &offset, &mask, stored));
    size_t rows = N - offset < CHUNK ? N - offset : CHUNK;
    int rc = h5g_filters_decode(ctx, mask, stored, bytes, got, CHUNK * size, &why);
    EXPECT(rc == 0, "%s: chunk %d (mask %u) does not decode: %s", name, c, mask, why);
    if (rc == 0 && memcmp(got, want + offset * size, rows * size) != 0) {
      size_t i = 0;
      while (memcmp(got + i * size, want + (offset + i) * size, size) == 0) i++;
      EXPECT(0, "%s: chunk %d (mask %u) differs from HDF5 at element %zu", name, c, mask, i);
    }
    /* a chunk cut short is refused, never read past (plugins trust their input, as in HDF5) */
    if (rc == 0 && bytes > 1 && !plugin) {
      EXPECT(h5g_filters_decode(ctx, mask, stored, mask ? bytes - 1 : 1, got, CHUNK * size,
                                &why) != 0 || want_identity,
             "%s: chunk %d cut short decodes", name, c);
    }
  }
  h5g_filter_ctx_free(ctx);
  free(got);
  free(stored);
  free(want);
done:
  H5Tclose(type);
  H5Pclose(dcpl);
}

/* A chunked dataset of `type` holding `data` (bytes of the file type), its chunk 1 rewritten
 * raw with every filter skipped. Closed between the writes and before the reads: HDF5's chunk
 * cache would otherwise answer reads with the chunks as written, not as stored. */
static hid_t write_dataset(hid_t file, const char *name, hid_t type, hid_t dcpl,
                           const unsigned char *data, size_t size) {
  hsize_t n = N, offset = CHUNK;
  hid_t space = H5Screate_simple(1, &n, NULL);
  hid_t dset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  MUST_H5(dset);
  MUST_H5(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  MUST_H5(H5Dclose(dset));
  MUST_H5(dset = H5Dopen2(file, name, H5P_DEFAULT));
  MUST_H5(H5Dwrite_chunk(dset, H5P_DEFAULT, ~0u, &offset, CHUNK * size, data + CHUNK * size));
  MUST_H5(H5Dclose(dset));
  MUST_H5(dset = H5Dopen2(file, name, H5P_DEFAULT));
  H5Sclose(space);
  return dset;
}

/* One dataset written from `data` (then freed, with dcpl and type) and every chunk of it
 * decoded by us against HDF5's read. */
static void check_case(hid_t file, const char *name, hid_t type, hid_t dcpl, unsigned char *data,
                       size_t size) {
  hid_t dset = write_dataset(file, name, type, dcpl, data, size);
  check_chunks(dset, size, name, 0);
  H5Dclose(dset);
  free(data);
  H5Pclose(dcpl);
  H5Tclose(type);
}

static void check_scaleoffset(hid_t file, uint64_t *seed) {
  static const size_t sizes[] = {1, 2, 4, 8};
  int cases = 0;
  for (int s = 0; s < 4; s++)
    for (int sign = 0; sign < 2; sign++)
      for (int big = 0; big < 2; big++)
        for (int variant = 0; variant < 4; variant++) /* fill, no fill, given bits, +deflate */
          for (int kind = 0; kind < NKINDS; kind++) {
            size_t size = sizes[s];
            hid_t type = int_type(size, sign, big), dcpl = H5Pcreate(H5P_DATASET_CREATE);
            hsize_t chunk = CHUNK;
            unsigned char fill[8] = {7, 1, 0, 0, 0, 0, 0, 0}, fill_file[8];
            unsigned char *data = malloc(N * size);
            char name[96];
            int bits = variant == 2 ? (int)(4 * size) + 3 : H5Z_SO_INT_MINBITS_DEFAULT;
            /* the fill value as the file stores it, for the data holding it */
            for (size_t b = 0; b < size; b++) fill_file[big ? size - 1 - b : b] = fill[b];
            MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
            if (variant == 1) MUST_H5(H5Pset_fill_value(dcpl, type, NULL));
            else MUST_H5(H5Pset_fill_value(dcpl, H5T_NATIVE_UINT64, fill));
            MUST_H5(H5Pset_scaleoffset(dcpl, H5Z_SO_INT, bits));
            if (variant == 3) MUST_H5(H5Pset_deflate(dcpl, 1));
            make_data(data, size, kind, seed, fill_file);
            if (big) swap_elements(data, size);
            snprintf(name, sizeof name, "so_%zu%s%s_v%d_%s", size, sign ? "s" : "u",
                     big ? "be" : "le", variant, kind_names[kind]);
            check_case(file, name, type, dcpl, data, size);
            cases++;
          }
  printf("scale-offset: %d datasets\n", cases);
}

/* Element i of a kind, as a float or double (size) in the file's order: narrow, both signs, few
 * digits kept by any D; full (HDF5 stores the chunks at full width); equal; holding `fill`; and
 * narrow with NaNs (HDF5's encoder stores llround(NaN), so they read back as another number)
 * and, in chunk 3 only, infinities (that chunk stored at full width, the NaNs kept). */
static void make_float_data(unsigned char *data, size_t size, int big, int kind, double fill,
                            uint64_t *seed) {
  for (size_t i = 0; i < N; i++) {
    double u = (double)(test_rand(seed) % 2000001) - 1000000.0, v;
    v = kind == FULL ? u * 1e13 : kind == EQUAL ? -3.25 : u / 997.0;
    if (kind == WITH_FILL && i % 7 == 0) v = fill;
    if (kind == NONFINITE && i % 13 == 5) v = i / CHUNK == 3 && i % 2 ? -INFINITY : NAN;
    float f = (float)v;
    unsigned char b[8];
    memcpy(b, size == 4 ? (const void *)&f : (const void *)&v, size);
    for (size_t k = 0; k < size; k++) data[i * size + k] = b[big ? size - 1 - k : k];
  }
}

static void check_scaleoffset_float(hid_t file, uint64_t *seed) {
  const double fill = 7.125;
  int cases = 0;
  for (size_t size = 4; size <= 8; size += 4)
    for (int big = 0; big < 2; big++)
      for (int variant = 0; variant < 3; variant++) /* fill, no fill, fill and deflate */
        for (int scale = 0; scale <= 6; scale++)
          for (int kind = 0; kind <= NONFINITE; kind++) {
            hid_t type = H5Tcopy(size == 4 ? (big ? H5T_IEEE_F32BE : H5T_IEEE_F32LE)
                                           : (big ? H5T_IEEE_F64BE : H5T_IEEE_F64LE));
            hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
            hsize_t chunk = CHUNK;
            unsigned char *data = malloc(N * size);
            char name[96];
            MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
            if (variant == 1) MUST_H5(H5Pset_fill_value(dcpl, type, NULL));
            else MUST_H5(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill));
            MUST_H5(H5Pset_scaleoffset(dcpl, H5Z_SO_FLOAT_DSCALE, scale));
            if (variant == 2) MUST_H5(H5Pset_deflate(dcpl, 1));
            make_float_data(data, size, big, kind, fill, seed);
            snprintf(name, sizeof name, "sof_%zu%s_v%d_d%d_%s", size, big ? "be" : "le",
                     variant, scale, kind_names[kind]);
            check_case(file, name, type, dcpl, data, size);
            cases++;
          }
  /* a float of another format (HDF5 computes on it as on an IEEE float): left to HDF5 */
  hid_t odd = H5Tcopy(H5T_IEEE_F32LE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t chunk = CHUNK, n = N;
  h5g_filter_pipeline p;
  int ours = 1;
  MUST_H5(H5Tset_ebias(odd, 100));
  MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
  MUST_H5(H5Pset_scaleoffset(dcpl, H5Z_SO_FLOAT_DSCALE, 2));
  hid_t space = H5Screate_simple(1, &n, NULL);
  hid_t dset = H5Dcreate2(file, "sof_odd", odd, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  MUST_H5(dset);
  hid_t created = H5Dget_create_plist(dset);
  MUST_OK(h5g_filters_from_dcpl(created, odd, &p, &ours, "sof_odd"));
  EXPECT(!ours, "scale-offset of a non-IEEE float taken as ours");
  H5Pclose(created);
  H5Dclose(dset);
  H5Sclose(space);
  H5Pclose(dcpl);
  H5Tclose(odd);
  printf("scale-offset of floats: %d datasets\n", cases);
}

/* n-bit of `type` (precision and offset set) on random values of its precision. */
static void check_nbit_type(hid_t file, hid_t type, const char *name, int kind, uint64_t *seed) {
  size_t size = H5Tget_size(type), precision = H5Tget_precision(type);
  int offset = H5Tget_offset(type), big = H5Tget_order(type) == H5T_ORDER_BE;
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t chunk = CHUNK;
  unsigned char *data = calloc(N, size);
  MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
  MUST_H5(H5Pset_nbit(dcpl));
  for (size_t i = 0; i < N; i++) { /* the value bits only: HDF5 writes padding as zeros */
    uint64_t v = kind == EQUAL ? 0x2D2D2D2D2D2D2D2Dull : test_rand(seed);
    if (precision < 64) v &= ((uint64_t)1 << precision) - 1;
    v <<= offset;
    for (size_t b = 0; b < size; b++) data[i * size + (big ? size - 1 - b : b)] =
        (unsigned char)(v >> 8 * b);
  }
  hid_t dset = write_dataset(file, name, type, dcpl, data, size);
  check_chunks(dset, size, name, precision == 8 * size && offset == 0);
  H5Dclose(dset);
  free(data);
  H5Pclose(dcpl);
}

static void check_nbit(hid_t file, uint64_t *seed) {
  static const struct { size_t size, precision; int offset; } shapes[] = {
      {1, 3, 2}, {1, 8, 0}, {2, 11, 0}, {2, 9, 7}, {4, 17, 5}, {4, 32, 0},
      {4, 1, 31}, {8, 40, 3}, {8, 63, 1}, {8, 64, 0}};
  int cases = 0;
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
    for (int sign = 0; sign < 2; sign++)
      for (int big = 0; big < 2; big++)
        for (int kind = 0; kind < 2; kind++) {
          hid_t type = int_type(shapes[k].size, sign, big);
          char name[96];
          MUST_H5(H5Tset_precision(type, shapes[k].precision));
          MUST_H5(H5Tset_offset(type, (size_t)shapes[k].offset));
          snprintf(name, sizeof name, "nbit_%zu_%zu_%d%s%s_%d", shapes[k].size,
                   shapes[k].precision, shapes[k].offset, sign ? "s" : "u", big ? "be" : "le",
                   kind);
          check_nbit_type(file, type, name, kind ? EQUAL : NARROW, seed);
          cases++;
          H5Tclose(type);
        }
  /* HDF5's test float (test/dsets.c test_nbit_float): 20 bits at offset 7, big-endian */
  hid_t f = H5Tcopy(H5T_IEEE_F32BE);
  MUST_H5(H5Tset_fields(f, 26, 20, 6, 7, 13));
  MUST_H5(H5Tset_offset(f, 7));
  MUST_H5(H5Tset_precision(f, 20));
  MUST_H5(H5Tset_size(f, 4));
  MUST_H5(H5Tset_ebias(f, 31));
  check_nbit_type(file, f, "nbit_float", NARROW, seed);
  H5Tclose(f);
  printf("n-bit: %d datasets\n", cases + 1);
}

/* `file_type` holding `raw` (its bytes, random): read by HDF5 into mem_type, it equals the bytes
 * converted by the plan, which must exist (expect 1) or not (0). */
static void check_conversion(hid_t file, const char *name, hid_t file_type, hid_t mem_type,
                             const unsigned char *raw, int expect) {
  size_t size = H5Tget_size(file_type);
  h5g_convert c;
  int planned = h5g_convert_plan(file_type, mem_type, &c);
  EXPECT(planned == expect, "%s: plan %d, expected %d", name, planned, expect);
  if (!planned) return;
  hsize_t n = N;
  hid_t space = H5Screate_simple(1, &n, NULL);
  hid_t dset = H5Dcreate2(file, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  unsigned char *want = malloc(N * size), *got = malloc(N * size);
  MUST_H5(dset);
  MUST_H5(H5Dwrite(dset, file_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw));
  MUST_H5(H5Dread(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, want));
  MUST_H5(H5Dread(dset, file_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, got));
  h5g_convert_apply(&c, got, N * size);
  size_t i = 0;
  while (i < N && memcmp(got + i * size, want + i * size, size) == 0) i++;
  EXPECT(i == N, "%s (%s): element %zu differs from HDF5's conversion", name,
         h5g_convert_name(&c), i);
  free(got);
  free(want);
  H5Dclose(dset);
  H5Sclose(space);
}

/* The memory type h5gsort opens keys as (io/dataset.c): host order, full width. */
static hid_t native_int(size_t size, int is_signed) { return int_type(size, is_signed, 0); }

static void check_conversions(hid_t file, uint64_t *seed) {
  unsigned char *raw = malloc(N * 8);
  char name[96];
  for (size_t i = 0; i < N * 8; i++) raw[i] = (unsigned char)test_rand(seed);
  for (size_t size = 1; size <= 8; size *= 2)
    for (int sign = 0; sign < 2; sign++) {
      hid_t be = int_type(size, sign, 1), le = native_int(size, sign);
      snprintf(name, sizeof name, "conv_be_%zu%s", size, sign ? "s" : "u");
      check_conversion(file, name, be, le, raw, 1);
      snprintf(name, sizeof name, "conv_same_%zu%s", size, sign ? "s" : "u");
      check_conversion(file, name, le, le, raw, 1);
      /* padded integers (n-bit's), random bits in their padding too */
      for (int big = 0; big < 2; big++) {
        hid_t padded = int_type(size, sign, big);
        size_t precision = size == 1 ? 5 : 8 * size - 9;
        MUST_H5(H5Tset_precision(padded, precision));
        MUST_H5(H5Tset_offset(padded, size == 1 ? 2 : 3));
        snprintf(name, sizeof name, "conv_pad_%zu%s%s", size, sign ? "s" : "u", big ? "be" : "le");
        check_conversion(file, name, padded, le, raw, 1);
        H5Tclose(padded);
      }
      hid_t other = native_int(size, !sign); /* a change of sign: HDF5's */
      snprintf(name, sizeof name, "conv_sign_%zu%s", size, sign ? "s" : "u");
      check_conversion(file, name, be, other, raw, 0);
      H5Tclose(other);
      H5Tclose(le);
      H5Tclose(be);
    }
  /* floats: random bits (NaNs with payloads among them), and the special values */
  double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 5e-324, -2.2250738585072014e-308,
                      1.0, -3.5};
  memcpy(raw, special, sizeof special);
  check_conversion(file, "conv_f8be", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, raw, 1);
  check_conversion(file, "conv_f4be", H5T_IEEE_F32BE, H5T_NATIVE_FLOAT, raw, 1);
  check_conversion(file, "conv_f4_f8", H5T_IEEE_F32BE, H5T_NATIVE_DOUBLE, raw, 0);
  check_conversion(file, "conv_i4_f4", H5T_STD_I32BE, H5T_NATIVE_FLOAT, raw, 0);
  check_conversion(file, "conv_b4", H5T_STD_B32BE, H5T_NATIVE_B32, raw, 0);
  free(raw);
}

/* bzip2 and lz4 through their plugins, as listed in io/filters.c: 0 when HDF5 finds neither. */
static int check_plugins(hid_t file, uint64_t *seed) {
  static const struct {
    const char *name;
    H5Z_filter_t id;
    unsigned cd; /* bzip2: block size in 100 kB; lz4: block size in bytes (0: 1 GiB) */
    int shuffle_before, deflate_after, fletcher32_after;
  } cases[] = {
      {"bzip2", 307, 9, 0, 0, 0},
      {"bzip2_fletcher32", 307, 1, 0, 0, 1},
      {"lz4", 32004, 0, 0, 0, 0},
      {"shuffle_lz4_blocks", 32004, 256, 1, 0, 0},
      {"lz4_deflate", 32004, 0, 0, 1, 0}, /* deflate decodes to lz4's stream, not the data */
  };
  int found = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    if (H5Zfilter_avail(cases[c].id) <= 0) {
      printf("%s: plugin %d not found, not checked\n", cases[c].name, (int)cases[c].id);
      continue;
    }
    found = 1;
    for (size_t size = 4; size <= 8; size += 4)
      for (int kind = 0; kind < NKINDS; kind++) {
        hid_t type = int_type(size, 0, 0), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        hsize_t chunk = CHUNK;
        unsigned char fill[8] = {9, 0, 0, 0, 0, 0, 0, 0}, *data = malloc(N * size);
        char name[96];
        MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
        if (cases[c].shuffle_before) MUST_H5(H5Pset_shuffle(dcpl));
        MUST_H5(H5Pset_filter(dcpl, cases[c].id, H5Z_FLAG_MANDATORY, 1, &cases[c].cd));
        if (cases[c].deflate_after) MUST_H5(H5Pset_deflate(dcpl, 1));
        if (cases[c].fletcher32_after) MUST_H5(H5Pset_fletcher32(dcpl));
        make_data(data, size, kind, seed, fill);
        snprintf(name, sizeof name, "plugin_%s_%zu_%s", cases[c].name, size, kind_names[kind]);
        check_case(file, name, type, dcpl, data, size);
      }
  }
  return found;
}

/* Elements for szip: narrow (integers below 50, or their quarters as floats), which szip
 * shrinks, or random bits, which it cannot (HDF5 then skips the filter for that chunk). */
static void make_szip_data(unsigned char *data, size_t size, int is_float, int big, int narrow,
                           uint64_t *seed) {
  for (size_t i = 0; i < N; i++) {
    uint64_t r = test_rand(seed), v = narrow ? r % 50 : r;
    double d = (double)v / 4.0;
    float f = (float)d;
    const void *bytes = !narrow || !is_float ? (const void *)&v
                        : size == 4          ? (const void *)&f
                                             : (const void *)&d;
    memcpy(data + i * size, bytes, size);
  }
  if (big) swap_elements(data, size);
}

/* szip (io/filter_szip.c) on HDF5's own szip chunks: 0 when HDF5 cannot encode it (no libsz). */
static int check_szip(hid_t file, uint64_t *seed) {
  const struct { /* not static: HDF5's type ids are set at run time */
    const char *name;
    hid_t type;
  } types[] = {{"u1", H5T_STD_U8LE},   {"u2", H5T_STD_U16LE},  {"u2be", H5T_STD_U16BE},
               {"i4", H5T_STD_I32LE},  {"i4be", H5T_STD_I32BE}, {"u8", H5T_STD_U64LE},
               {"f4", H5T_IEEE_F32LE}, {"f8", H5T_IEEE_F64LE}, {"f8be", H5T_IEEE_F64BE}};
  static const unsigned masks[] = {H5_SZIP_NN_OPTION_MASK, H5_SZIP_EC_OPTION_MASK};
  unsigned info = 0;
  if (H5Zfilter_avail(H5Z_FILTER_SZIP) <= 0 || H5Zget_filter_info(H5Z_FILTER_SZIP, &info) < 0 ||
      !(info & H5Z_FILTER_CONFIG_ENCODE_ENABLED))
    return 0;
  int cases = 0;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (int m = 0; m < 2; m++)
      for (unsigned ppb = 8; ppb <= 32; ppb *= 2)
        for (int variant = 0; variant < 3; variant++) /* alone, shuffle before, fletcher32 after */
          for (int kind = 0; kind < 2; kind++) { /* narrow; full (szip fails, HDF5 skips it) */
            hid_t type = H5Tcopy(types[t].type), dcpl = H5Pcreate(H5P_DATASET_CREATE);
            size_t size = H5Tget_size(type);
            int big = H5Tget_order(type) == H5T_ORDER_BE;
            hsize_t chunk = CHUNK;
            unsigned char *data = malloc(N * size);
            char name[96];
            MUST_H5(H5Pset_chunk(dcpl, 1, &chunk));
            if (variant == 1) MUST_H5(H5Pset_shuffle(dcpl));
            MUST_H5(H5Pset_szip(dcpl, masks[m], ppb));
            if (variant == 2) MUST_H5(H5Pset_fletcher32(dcpl));
            make_szip_data(data, size, H5Tget_class(type) == H5T_FLOAT, big, !kind, seed);
            snprintf(name, sizeof name, "szip_%s_%s_%u_v%d_%s", types[t].name, m ? "ec" : "nn",
                     ppb, variant, kind_names[kind ? FULL : NARROW]);
            check_case(file, name, type, dcpl, data, size);
            cases++;
          }
  printf("szip: %d datasets\n", cases);
  return 1;
}

int main(int argc, char **argv) {
  const char *prefix = argc > 1 ? argv[1] : "test_filter_codecs";
  char path[1024];
  uint64_t seed = 29;
  const char *mode = argc > 2 ? argv[2] : "";
  int found = 1;
  snprintf(path, sizeof path, "%s.h5", prefix);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  MUST_H5(file);
  if (strcmp(mode, "--plugins") == 0) {
    found = check_plugins(file, &seed);
  } else if (strcmp(mode, "--szip") == 0) {
    found = check_szip(file, &seed);
  } else {
    check_scaleoffset(file, &seed);
    check_scaleoffset_float(file, &seed);
    check_nbit(file, &seed);
    check_conversions(file, &seed);
  }
  MUST_H5(H5Fclose(file));
  remove(path);
  if (!found) {
    printf("skipped: %s\n", strcmp(mode, "--szip") == 0
                                ? "HDF5 cannot encode szip (no libsz)"
                                : "HDF5 finds neither the bzip2 nor the lz4 plugin "
                                  "(hdf5-filter-plugin)");
    return 77;
  }
  return test_summary("test_filter_codecs");
}
