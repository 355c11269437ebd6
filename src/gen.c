/* h5gsort-gen: writes a 1-D numeric test/benchmark dataset in parallel.
 *
 *   mpiexec -n P h5gsort-gen OUT.h5 -d /path/to/ds --count N --type T --dist D --seed S
 *
 * Element i's value depends only on (seed, i): a counter-based generator (splitmix64's mixer
 * over seed and index), so the file is the same whatever the rank count. Rank r writes the slice
 * [r*N/P, (r+1)*N/P) with collective hyperslab writes, in blocks so memory stays bounded. */
#include <errno.h>
#include <getopt.h>
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/error.h"
#include "src/keys.h"

#define BLOCK_ELEMS ((uint64_t)1 << 22) /* elements generated and written per collective call */
#define FEW_DISTINCT 7
#define PI 3.14159265358979323846

typedef enum {
  DIST_UNIFORM, DIST_NORMAL, DIST_ZIPF, DIST_SORTED, DIST_REVERSE, DIST_EQUAL, DIST_FEW,
  DIST_SPECIAL
} dist_kind;

typedef enum { LAYOUT_CONTIGUOUS, LAYOUT_CHUNKED, LAYOUT_GZIP } layout_kind;

typedef struct {
  const char *out;
  const char *path;
  uint64_t count;
  h5g_keyspec type;
  dist_kind dist;
  uint64_t seed;
  int big_endian;
  layout_kind layout;
  uint64_t chunk;
  int attrs;
  int force;
  int append;
} gen_options;

static const char *const dist_names[] = {"uniform", "normal", "zipf", "sorted",
                                         "reverse", "equal",  "few",  "special"};
static const char *const layout_names[] = {"contiguous", "chunked", "gzip"};

static const struct {
  const char *name;
  h5g_key_class cls;
  unsigned width;
} type_names[] = {
    {"u1", H5G_KEY_UNSIGNED, 1}, {"u2", H5G_KEY_UNSIGNED, 2}, {"u4", H5G_KEY_UNSIGNED, 4},
    {"u8", H5G_KEY_UNSIGNED, 8}, {"i1", H5G_KEY_SIGNED, 1},   {"i2", H5G_KEY_SIGNED, 2},
    {"i4", H5G_KEY_SIGNED, 4},   {"i8", H5G_KEY_SIGNED, 8},   {"f4", H5G_KEY_FLOAT, 4},
    {"f8", H5G_KEY_FLOAT, 8},
};

/* Raw bit patterns for the "special" float distribution: NaNs of both signs and several
 * payloads (quiet and signalling), infinities, signed zeros, denormals, extremes, +-1. */
static const uint32_t special_f4[] = {
    0x7fc00000u, 0xffc00000u, 0x7fc00001u, 0x7f800001u, 0xff812345u, 0x7fffffffu, 0x7f800000u,
    0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,
    0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x80800000u, 0x3f800000u, 0xbf800000u};
static const uint64_t special_f8[] = {
    0x7ff8000000000000u, 0xfff8000000000000u, 0x7ff8000000000001u, 0x7ff0000000000001u,
    0xfff0000012345678u, 0x7fffffffffffffffu, 0x7ff0000000000000u, 0xfff0000000000000u,
    0x0000000000000000u, 0x8000000000000000u, 0x0000000000000001u, 0x8000000000000001u,
    0x000fffffffffffffu, 0x800fffffffffffffu, 0x7fefffffffffffffu, 0xffefffffffffffffu,
    0x0010000000000000u, 0x8010000000000000u, 0x3ff0000000000000u, 0xbff0000000000000u};

static void usage(FILE *to) {
  fprintf(to,
          "usage: mpiexec -n P h5gsort-gen OUT.h5 -d PATH --count N --type T [options]\n"
          "  -d, --dataset PATH    dataset to write (intermediate groups are created)\n"
          "  --count N             number of elements (0 and N < P allowed)\n"
          "  --type T              u1 u2 u4 u8 i1 i2 i4 i8 f4 f8\n"
          "  --dist D              uniform (default) normal zipf sorted reverse equal few special\n"
          "  --seed S              generator seed (default 1); values depend on (seed, index) only\n"
          "  --order le|be         byte order of the file type (default le)\n"
          "  --layout L            contiguous (default), chunked or gzip (shuffle + deflate)\n"
          "  --chunk K             chunk length in elements (default 65536)\n"
          "  --attrs               add attributes (int scalar, float array, strings)\n"
          "  --force               replace OUT if it exists\n"
          "  --append              add the dataset to OUT if it exists\n"
          "  -h, --help            this text\n");
}

static int parse_count(const char *text, uint64_t *value) {
  char *end = NULL;
  if (text[0] < '0' || text[0] > '9') return -1;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0') return -1;
  *value = (uint64_t)v;
  return 0;
}

static int find_name(const char *text, const char *const *names, int count) {
  for (int i = 0; i < count; i++)
    if (strcmp(text, names[i]) == 0) return i;
  return -1;
}

/* Parses argv into *o. Returns H5G_ERR_USAGE with a message, or H5G_OK; *help set for -h. */
static int parse_options(int argc, char **argv, gen_options *o, int *help) {
  enum { OPT_COUNT = 256, OPT_TYPE, OPT_DIST, OPT_SEED, OPT_ORDER, OPT_LAYOUT, OPT_CHUNK,
         OPT_ATTRS, OPT_FORCE, OPT_APPEND };
  static const struct option long_options[] = {
      {"dataset", required_argument, NULL, 'd'}, {"count", required_argument, NULL, OPT_COUNT},
      {"type", required_argument, NULL, OPT_TYPE}, {"dist", required_argument, NULL, OPT_DIST},
      {"seed", required_argument, NULL, OPT_SEED}, {"order", required_argument, NULL, OPT_ORDER},
      {"layout", required_argument, NULL, OPT_LAYOUT},
      {"chunk", required_argument, NULL, OPT_CHUNK}, {"attrs", no_argument, NULL, OPT_ATTRS},
      {"force", no_argument, NULL, OPT_FORCE}, {"append", no_argument, NULL, OPT_APPEND},
      {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  int rc = H5G_OK, have_count = 0, have_type = 0, opt;
  *help = 0;
  memset(o, 0, sizeof *o);
  o->seed = 1;
  o->chunk = 65536;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":d:h", long_options, NULL)) != -1) {
    switch (opt) {
    case 'd': o->path = optarg; break;
    case 'h': *help = 1; goto done;
    case OPT_COUNT:
      if (parse_count(optarg, &o->count) != 0)
        H5G_FAIL(H5G_ERR_USAGE, "invalid --count '%s' (a non-negative integer)", optarg);
      have_count = 1;
      break;
    case OPT_TYPE: {
      int t = -1;
      for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (strcmp(optarg, type_names[i].name) == 0) t = (int)i;
      if (t < 0) H5G_FAIL(H5G_ERR_USAGE, "unknown --type '%s' (u1..u8, i1..i8, f4, f8)", optarg);
      o->type.cls = type_names[t].cls;
      o->type.width = type_names[t].width;
      have_type = 1;
      break;
    }
    case OPT_DIST: {
      int d = find_name(optarg, dist_names, (int)(sizeof dist_names / sizeof dist_names[0]));
      if (d < 0) H5G_FAIL(H5G_ERR_USAGE, "unknown --dist '%s'", optarg);
      o->dist = (dist_kind)d;
      break;
    }
    case OPT_SEED:
      if (parse_count(optarg, &o->seed) != 0)
        H5G_FAIL(H5G_ERR_USAGE, "invalid --seed '%s' (a non-negative integer)", optarg);
      break;
    case OPT_ORDER:
      if (strcmp(optarg, "le") != 0 && strcmp(optarg, "be") != 0)
        H5G_FAIL(H5G_ERR_USAGE, "invalid --order '%s' (le or be)", optarg);
      o->big_endian = strcmp(optarg, "be") == 0;
      break;
    case OPT_LAYOUT: {
      int l = find_name(optarg, layout_names, (int)(sizeof layout_names / sizeof layout_names[0]));
      if (l < 0) H5G_FAIL(H5G_ERR_USAGE, "unknown --layout '%s'", optarg);
      o->layout = (layout_kind)l;
      break;
    }
    case OPT_CHUNK:
      if (parse_count(optarg, &o->chunk) != 0 || o->chunk == 0 || o->chunk > UINT32_MAX)
        H5G_FAIL(H5G_ERR_USAGE, "invalid --chunk '%s' (1 to 2^32-1 elements)", optarg);
      break;
    case OPT_ATTRS: o->attrs = 1; break;
    case OPT_FORCE: o->force = 1; break;
    case OPT_APPEND: o->append = 1; break;
    case ':': H5G_FAIL(H5G_ERR_USAGE, "option '%s' needs a value", argv[optind - 1]);
    default: H5G_FAIL(H5G_ERR_USAGE, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    H5G_FAIL(H5G_ERR_USAGE, optind >= argc ? "missing OUT.h5" : "expected exactly one OUT.h5");
  o->out = argv[optind];
  if (o->path == NULL) H5G_FAIL(H5G_ERR_USAGE, "missing -d/--dataset");
  if (!have_count) H5G_FAIL(H5G_ERR_USAGE, "missing --count");
  if (!have_type) H5G_FAIL(H5G_ERR_USAGE, "missing --type");
  if (o->force && o->append) H5G_FAIL(H5G_ERR_USAGE, "--force and --append exclude each other");
done:
  return rc;
}

/* ---- values --------------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* Random word `stream` (0..3) of element `index`. */
static uint64_t random_word(uint64_t seed, uint64_t index, unsigned stream) {
  return mix64(mix64(seed) + (index * 4 + stream + 1) * 0x9e3779b97f4a7c15u);
}

/* Uniform in (0, 1]. */
static double unit_interval(uint64_t r) { return (double)((r >> 11) + 1) * 0x1.0p-53; }

static uint64_t float_bits(double v, unsigned width) {
  if (width == 4) {
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
  }
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

/* Integer bits for `offset` from the middle of the type's range (0 for signed types, 2^(bits-1)
 * for unsigned); |offset| must stay below 2^(bits-1). Stores truncate to the width. */
static uint64_t centered_int_bits(const h5g_keyspec *t, int64_t offset) {
  uint64_t center = t->cls == H5G_KEY_SIGNED ? 0 : (uint64_t)1 << (8 * t->width - 1);
  return center + (uint64_t)offset;
}

/* Type extremes and their neighbours for the "special" integer distribution. */
static uint64_t special_int_bits(const h5g_keyspec *t, uint64_t pick) {
  unsigned bits = 8 * t->width;
  uint64_t all = bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
  uint64_t top = (uint64_t)1 << (bits - 1);
  /* signed: min, min+1, -1, 0, 1, max-1, max; unsigned: 0, 1, 2, mid-1, mid, max-1, max */
  const uint64_t signed_values[] = {top, top + 1, all, 0, 1, top - 2, top - 1};
  const uint64_t unsigned_values[] = {0, 1, 2, top - 1, top, all - 1, all};
  return t->cls == H5G_KEY_SIGNED ? signed_values[pick % 7] : unsigned_values[pick % 7];
}

/* The raw bits (host order, low `width` bytes) of element `index`. */
static uint64_t element_bits(const gen_options *o, uint64_t index) {
  const h5g_keyspec *t = &o->type;
  const int is_float = t->cls == H5G_KEY_FLOAT;
  const unsigned bits = 8 * t->width;
  const uint64_t r0 = random_word(o->seed, index, 0), r1 = random_word(o->seed, index, 1);
  switch (o->dist) {
  case DIST_UNIFORM:
    if (!is_float) return r0;
    { /* log-uniform magnitude over 2^-40 .. 2^41, random sign */
      double magnitude = ldexp(1.0 + unit_interval(r1), (int)(r0 % 81) - 40);
      return float_bits((r0 >> 63) ? -magnitude : magnitude, t->width);
    }
  case DIST_NORMAL: { /* Box-Muller; |z| < 8.6, so the integer offset stays in range */
    double z = sqrt(-2.0 * log(unit_interval(r0))) * cos(2.0 * PI * unit_interval(r1));
    if (is_float) return float_bits(100.0 * z, t->width);
    return centered_int_bits(t, (int64_t)floor(z * ldexp(1.0, (int)bits - 5)));
  }
  case DIST_ZIPF: { /* Pareto tail with P(k) ~ k^-1.5: heavy runs of small values */
    double k = floor(1.0 / (unit_interval(r0) * unit_interval(r0)));
    double cap = is_float ? 1e30 : ldexp(1.0, (int)bits - 1) - 1.0;
    if (k > cap) k = cap;
    return is_float ? float_bits(k, t->width) : (uint64_t)k;
  }
  case DIST_SORTED:
  case DIST_REVERSE: { /* monotone in the index: t in [0, 1) */
    uint64_t pos = o->dist == DIST_SORTED ? index : o->count - 1 - index;
    double u = (double)pos / (double)o->count;
    if (is_float) return float_bits(-1e6 + 2e6 * u, t->width);
    return centered_int_bits(t, (int64_t)floor((u - 0.5) * ldexp(1.0, (int)bits - 1)));
  }
  case DIST_EQUAL: return is_float ? float_bits(-3.25, t->width) : 42;
  case DIST_FEW: {
    static const double float_values[FEW_DISTINCT] = {-1e3, -2.5, 0.0, 1.0, 3.5, 7.0, 1e3};
    static const int64_t int_offsets[FEW_DISTINCT] = {-60, -1, 0, 1, 2, 17, 60};
    unsigned pick = (unsigned)(r0 % FEW_DISTINCT);
    return is_float ? float_bits(float_values[pick], t->width) : centered_int_bits(t, int_offsets[pick]);
  }
  case DIST_SPECIAL: /* half arbitrary bit patterns, half from the table of special values */
    if (r0 & 1) return r1;
    if (!is_float) return special_int_bits(t, r1);
    if (t->width == 4) return special_f4[r1 % (sizeof special_f4 / sizeof special_f4[0])];
    return special_f8[r1 % (sizeof special_f8 / sizeof special_f8[0])];
  }
  return 0;
}

static void store_bits(void *buf, size_t i, unsigned width, uint64_t bits) {
  switch (width) {
  case 1: ((uint8_t *)buf)[i] = (uint8_t)bits; break;
  case 2: ((uint16_t *)buf)[i] = (uint16_t)bits; break;
  case 4: ((uint32_t *)buf)[i] = (uint32_t)bits; break;
  default: ((uint64_t *)buf)[i] = bits; break;
  }
}

/* ---- HDF5 ----------------------------------------------------------------------------------- */

static hid_t memory_type(const h5g_keyspec *t) {
  if (t->cls == H5G_KEY_FLOAT) return t->width == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  static const int log2_width[9] = {0, 0, 1, 0, 2, 0, 0, 0, 3};
  hid_t unsigned_types[4] = {H5T_NATIVE_UINT8, H5T_NATIVE_UINT16, H5T_NATIVE_UINT32,
                             H5T_NATIVE_UINT64};
  hid_t signed_types[4] = {H5T_NATIVE_INT8, H5T_NATIVE_INT16, H5T_NATIVE_INT32,
                           H5T_NATIVE_INT64};
  int w = log2_width[t->width];
  return t->cls == H5G_KEY_SIGNED ? signed_types[w] : unsigned_types[w];
}

static hid_t file_type(const h5g_keyspec *t, int big_endian) {
  if (t->cls == H5G_KEY_FLOAT) {
    if (t->width == 4) return big_endian ? H5T_IEEE_F32BE : H5T_IEEE_F32LE;
    return big_endian ? H5T_IEEE_F64BE : H5T_IEEE_F64LE;
  }
  static const int log2_width[9] = {0, 0, 1, 0, 2, 0, 0, 0, 3};
  hid_t types[2][2][4] = {
      {{H5T_STD_U8LE, H5T_STD_U16LE, H5T_STD_U32LE, H5T_STD_U64LE},
       {H5T_STD_U8BE, H5T_STD_U16BE, H5T_STD_U32BE, H5T_STD_U64BE}},
      {{H5T_STD_I8LE, H5T_STD_I16LE, H5T_STD_I32LE, H5T_STD_I64LE},
       {H5T_STD_I8BE, H5T_STD_I16BE, H5T_STD_I32BE, H5T_STD_I64BE}}};
  return types[t->cls == H5G_KEY_SIGNED][big_endian != 0][log2_width[t->width]];
}

#define CHECK_H5(call, what)                                                                      \
  do {                                                                                            \
    if ((call) < 0) H5G_FAIL(H5G_ERR_RUNTIME, "%s (%s:%s)", (what), o->out, o->path);             \
  } while (0)

/* Attributes for tests of attribute copying: one of each kind h5gsort must carry over. */
static int write_attributes(const gen_options *o, hid_t dset) {
  int rc = H5G_OK;
  hid_t scalar = H5I_INVALID_HID, vector = H5I_INVALID_HID, fixed = H5I_INVALID_HID,
        vlen = H5I_INVALID_HID, attr = H5I_INVALID_HID;
  const int32_t scale = -7;
  const double calibration[3] = {1.5, -2.25, 1e-300};
  const char units[8] = "counts";
  const char *note = "written by h5gsort-gen";
  const hsize_t three = 3;

  CHECK_H5(scalar = H5Screate(H5S_SCALAR), "cannot create attribute space");
  CHECK_H5(vector = H5Screate_simple(1, &three, NULL), "cannot create attribute space");
  CHECK_H5(fixed = H5Tcopy(H5T_C_S1), "cannot create string type");
  CHECK_H5(H5Tset_size(fixed, sizeof units), "cannot set string size");
  CHECK_H5(vlen = H5Tcopy(H5T_C_S1), "cannot create string type");
  CHECK_H5(H5Tset_size(vlen, H5T_VARIABLE), "cannot set string size");

  CHECK_H5(attr = H5Acreate2(dset, "scale", H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT),
           "cannot create attribute 'scale'");
  CHECK_H5(H5Awrite(attr, H5T_NATIVE_INT32, &scale), "cannot write attribute 'scale'");
  CHECK_H5(H5Aclose(attr), "cannot close attribute");
  CHECK_H5(attr = H5Acreate2(dset, "calibration", H5T_IEEE_F64BE, vector, H5P_DEFAULT, H5P_DEFAULT),
           "cannot create attribute 'calibration'");
  CHECK_H5(H5Awrite(attr, H5T_NATIVE_DOUBLE, calibration), "cannot write attribute 'calibration'");
  CHECK_H5(H5Aclose(attr), "cannot close attribute");
  CHECK_H5(attr = H5Acreate2(dset, "units", fixed, scalar, H5P_DEFAULT, H5P_DEFAULT),
           "cannot create attribute 'units'");
  CHECK_H5(H5Awrite(attr, fixed, units), "cannot write attribute 'units'");
  CHECK_H5(H5Aclose(attr), "cannot close attribute");
  CHECK_H5(attr = H5Acreate2(dset, "note", vlen, scalar, H5P_DEFAULT, H5P_DEFAULT),
           "cannot create attribute 'note'");
  CHECK_H5(H5Awrite(attr, vlen, &note), "cannot write attribute 'note'");
  CHECK_H5(H5Aclose(attr), "cannot close attribute");
  attr = H5I_INVALID_HID;
done:
  if (attr >= 0) H5Aclose(attr);
  if (vlen >= 0) H5Tclose(vlen);
  if (fixed >= 0) H5Tclose(fixed);
  if (vector >= 0) H5Sclose(vector);
  if (scalar >= 0) H5Sclose(scalar);
  return rc;
}

static int create_dataset(const gen_options *o, hid_t file, hid_t *dset) {
  int rc = H5G_OK;
  hid_t space = H5I_INVALID_HID, lcpl = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
  hsize_t dims = o->count, maxdims = o->count;

  CHECK_H5(lcpl = H5Pcreate(H5P_LINK_CREATE), "cannot create property list");
  CHECK_H5(H5Pset_create_intermediate_group(lcpl, 1), "cannot set intermediate groups");
  CHECK_H5(dcpl = H5Pcreate(H5P_DATASET_CREATE), "cannot create property list");
  if (o->layout != LAYOUT_CONTIGUOUS) {
    /* A fixed-size dataset needs chunk <= size; an empty one is made extendible instead. */
    hsize_t chunk = o->count == 0 ? o->chunk : (o->chunk < o->count ? o->chunk : o->count);
    if (o->count == 0) maxdims = H5S_UNLIMITED;
    CHECK_H5(H5Pset_chunk(dcpl, 1, &chunk), "cannot set chunking");
    if (o->layout == LAYOUT_GZIP) {
      CHECK_H5(H5Pset_shuffle(dcpl), "cannot set shuffle filter");
      CHECK_H5(H5Pset_deflate(dcpl, 6), "cannot set deflate filter");
    }
  }
  CHECK_H5(space = H5Screate_simple(1, &dims, &maxdims), "cannot create dataspace");
  CHECK_H5(*dset = H5Dcreate2(file, o->path, file_type(&o->type, o->big_endian), space, lcpl, dcpl,
                              H5P_DEFAULT),
           "cannot create dataset (does it exist already?)");
done:
  if (space >= 0) H5Sclose(space);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (lcpl >= 0) H5Pclose(lcpl);
  return rc;
}

/* Generates and writes this rank's slice in blocks; every rank makes the same number of
 * collective writes (an empty selection once its slice is done). */
static int write_slice(const gen_options *o, hid_t dset, int rank, int nranks) {
  int rc = H5G_OK;
  hid_t dxpl = H5I_INVALID_HID, filespace = H5I_INVALID_HID, memspace = H5I_INVALID_HID;
  void *buf = NULL;
  const uint64_t q = o->count / (uint64_t)nranks, rem = o->count % (uint64_t)nranks;
  const uint64_t lo = (uint64_t)rank * q + (uint64_t)rank * rem / (uint64_t)nranks;
  const uint64_t hi = (uint64_t)(rank + 1) * q + (uint64_t)(rank + 1) * rem / (uint64_t)nranks;
  const uint64_t largest_slice = q + (rem != 0);
  const uint64_t nblocks = (largest_slice + BLOCK_ELEMS - 1) / BLOCK_ELEMS;
  const size_t buf_elems = (size_t)(hi - lo < BLOCK_ELEMS ? hi - lo : BLOCK_ELEMS);

  buf = malloc(buf_elems * o->type.width);
  CHECK_ALLOC(buf, buf_elems * o->type.width);
  CHECK_H5(dxpl = H5Pcreate(H5P_DATASET_XFER), "cannot create property list");
  CHECK_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "cannot set collective transfer");
  CHECK_H5(filespace = H5Dget_space(dset), "cannot get dataspace");
  for (uint64_t b = 0; b < nblocks; b++) {
    uint64_t start = lo + b * BLOCK_ELEMS;
    hsize_t n = start < hi ? (hsize_t)(hi - start < BLOCK_ELEMS ? hi - start : BLOCK_ELEMS) : 0;
    hsize_t offset = start;
    for (hsize_t i = 0; i < n; i++)
      store_bits(buf, (size_t)i, o->type.width, element_bits(o, start + i));
    CHECK_H5(memspace = H5Screate_simple(1, n ? &n : &(hsize_t){1}, NULL),
             "cannot create dataspace");
    if (n == 0) {
      CHECK_H5(H5Sselect_none(memspace), "cannot select");
      CHECK_H5(H5Sselect_none(filespace), "cannot select");
    } else {
      CHECK_H5(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, &offset, NULL, &n, NULL),
               "cannot select hyperslab");
    }
    CHECK_H5(H5Dwrite(dset, memory_type(&o->type), memspace, filespace, dxpl, buf),
             "cannot write dataset");
    CHECK_H5(H5Sclose(memspace), "cannot close dataspace");
    memspace = H5I_INVALID_HID;
  }
done:
  if (memspace >= 0) H5Sclose(memspace);
  if (filespace >= 0) H5Sclose(filespace);
  if (dxpl >= 0) H5Pclose(dxpl);
  free(buf);
  return rc;
}

static int generate(const gen_options *o, int rank, int nranks) {
  int rc = H5G_OK;
  hid_t fapl = H5I_INVALID_HID, file = H5I_INVALID_HID, dset = H5I_INVALID_HID;
  /* Rank 0 decides "exists?" before any rank may create the file. */
  int exists = rank == 0 && access(o->out, F_OK) == 0;
  MPI_Bcast(&exists, 1, MPI_INT, 0, MPI_COMM_WORLD);

  if (exists && !o->force && !o->append)
    H5G_FAIL(H5G_ERR_USAGE, "%s exists (use --force to replace it or --append to add to it)",
             o->out);
  CHECK_H5(fapl = H5Pcreate(H5P_FILE_ACCESS), "cannot create property list");
  CHECK_H5(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "cannot set MPI-IO access");
  if (exists && o->append)
    CHECK_H5(file = H5Fopen(o->out, H5F_ACC_RDWR, fapl), "cannot open file");
  else
    CHECK_H5(file = H5Fcreate(o->out, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "cannot create file");
  CHECK(create_dataset(o, file, &dset));
  CHECK(write_slice(o, dset, rank, nranks));
  if (o->attrs) CHECK(write_attributes(o, dset));
  /* A failed close has still released the handle: never close it twice. */
  herr_t closed = H5Dclose(dset);
  dset = H5I_INVALID_HID;
  CHECK_H5(closed, "cannot close dataset");
  closed = H5Fclose(file);
  file = H5I_INVALID_HID;
  CHECK_H5(closed, "cannot write the file");
done:
  if (dset >= 0) H5Dclose(dset);
  if (file >= 0) H5Fclose(file);
  if (fapl >= 0) H5Pclose(fapl);
  return rc;
}

int main(int argc, char **argv) {
  gen_options o;
  int rank = 0, nranks = 1, help = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

  int rc = parse_options(argc, argv, &o, &help);
  if (rc == H5G_OK && help) {
    if (rank == 0) usage(stdout);
  } else if (rc == H5G_OK) {
    rc = generate(&o, rank, nranks);
  } else if (rank == 0) {
    usage(stderr);
  }

  /* Every rank exits with the worst code; the lowest failing rank prints its message once. */
  int worst = rc, first_failing = rc != H5G_OK ? rank : nranks;
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &first_failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rc != H5G_OK && rank == first_failing)
    fprintf(stderr, "h5gsort-gen: error: %s\n", h5g_error_message());
  MPI_Finalize();
  return worst;
}
