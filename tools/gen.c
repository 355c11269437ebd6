/* h5gsort-gen: writes a numeric test/benchmark dataset in parallel.
 *
 *   mpiexec -n P h5gsort-gen OUT.h5 -d /path/to/ds --count N --type T --dist D --seed S
 *
 * Element i's value depends only on (seed, i): a counter-based generator (splitmix64's mixer
 * over seed and index), so the file is the same whatever the rank count. Rank r writes the rows
 * [r*N/P, (r+1)*N/P) through io/ (collective writes), in blocks so memory stays bounded. Ranks
 * agree on every error before the next collective call, exit with the same code, and a failed
 * run leaves no OUT behind (unless --append).
 *
 * Besides 1-D arrays it writes the inputs of record sorts:
 * - `--row-shape K[,L...]`: an N x K (x L ...) array; element i is the i-th in C (row-major)
 *   order, so row r holds elements r*K*L... onwards.
 * - `--table`: a 1-D compound table, packed (no padding, fields at odd offsets), one record per
 *   row r:  row u64 = r | det u16 = detector number 0..96 (many repeats) | name 5-byte string
 *   "r" + 4 hex digits of r | KEY = element r of --type/--dist | x f64 uniform in (-1, 1].
 *   KEY's field name is "key" unless --key-field names it. Byte order follows --order. */
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

#include "base/error.h"
#include "base/keys.h"
#include "io/h5check.h"
#include "io/h5io.h"
#include "mpi/agree.h"

#define BLOCK_BYTES ((uint64_t)1 << 25) /* bytes generated and written per collective call */
#define FEW_DISTINCT 7
#define DETECTORS 97
#define NAME_BYTES 5
#define PI 3.14159265358979323846

typedef enum {
  DIST_UNIFORM, DIST_NORMAL, DIST_ZIPF, DIST_SORTED, DIST_REVERSE, DIST_EQUAL, DIST_FEW,
  DIST_SPECIAL, DIST_INDEX
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
  int row_rank;                      /* dimensions of one row: 0 for a 1-D dataset */
  hsize_t row_dims[H5S_MAX_RANK - 1];
  uint64_t row_elems;                /* elements per row (1 unless --row-shape) */
  int table;
  const char *key_field;
} gen_options;

/* The packed record of --table: offsets of its fields after the key (whose width varies). */
enum { FIELD_ROW = 0, FIELD_DET = 8, FIELD_NAME = 10, FIELD_KEY = FIELD_NAME + NAME_BYTES };

static const char *const dist_names[] = {"uniform", "normal", "zipf",    "sorted", "reverse",
                                         "equal",   "few",    "special", "index"};
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
          "                        index (element i holds i, truncated to the type)\n"
          "  --seed S              generator seed (default 1); values depend on (seed, index) only\n"
          "  --order le|be         byte order of the file type (default le)\n"
          "  --layout L            contiguous (default), chunked or gzip (shuffle + deflate)\n"
          "  --chunk K             chunk length in rows (default 65536)\n"
          "  --row-shape K[,L...]  N x K (x L ...) array: rows of K (x L ...) elements\n"
          "  --table               1-D compound table {row u8, det u2, name S5, KEY T, x f8},\n"
          "                        packed; KEY follows --type and --dist\n"
          "  --key-field NAME      name of the KEY field of --table (default key)\n"
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

/* "K[,L...]" into o->row_dims; every size positive. */
static int parse_row_shape(const char *text, gen_options *o) {
  char item[32];
  o->row_rank = 0;
  o->row_elems = 1;
  while (*text != '\0') {
    size_t len = strcspn(text, ",");
    uint64_t size;
    if (len == 0 || len >= sizeof item || o->row_rank == H5S_MAX_RANK - 1) return -1;
    memcpy(item, text, len);
    item[len] = '\0';
    if (parse_count(item, &size) != 0 || size == 0 || size > UINT32_MAX / o->row_elems) return -1;
    o->row_dims[o->row_rank++] = size;
    o->row_elems *= size;
    text += len + (text[len] == ',');
    if (text[-1] == ',' && *text == '\0') return -1;
  }
  return o->row_rank > 0 ? 0 : -1;
}

static int find_name(const char *text, const char *const *names, int count) {
  for (int i = 0; i < count; i++)
    if (strcmp(text, names[i]) == 0) return i;
  return -1;
}

/* Parses argv into *o. Returns H5G_ERR_USAGE with a message, or H5G_OK; *help set for -h. */
static int parse_options(int argc, char **argv, gen_options *o, int *help) {
  enum { OPT_COUNT = 256, OPT_TYPE, OPT_DIST, OPT_SEED, OPT_ORDER, OPT_LAYOUT, OPT_CHUNK,
         OPT_ATTRS, OPT_FORCE, OPT_APPEND, OPT_ROW_SHAPE, OPT_TABLE, OPT_KEY_FIELD };
  static const struct option long_options[] = {
      {"dataset", required_argument, NULL, 'd'}, {"count", required_argument, NULL, OPT_COUNT},
      {"type", required_argument, NULL, OPT_TYPE}, {"dist", required_argument, NULL, OPT_DIST},
      {"seed", required_argument, NULL, OPT_SEED}, {"order", required_argument, NULL, OPT_ORDER},
      {"layout", required_argument, NULL, OPT_LAYOUT},
      {"chunk", required_argument, NULL, OPT_CHUNK}, {"attrs", no_argument, NULL, OPT_ATTRS},
      {"force", no_argument, NULL, OPT_FORCE}, {"append", no_argument, NULL, OPT_APPEND},
      {"row-shape", required_argument, NULL, OPT_ROW_SHAPE},
      {"table", no_argument, NULL, OPT_TABLE},
      {"key-field", required_argument, NULL, OPT_KEY_FIELD},
      {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  int rc = H5G_OK, have_count = 0, have_type = 0, opt;
  *help = 0;
  memset(o, 0, sizeof *o);
  o->seed = 1;
  o->chunk = 65536;
  o->row_elems = 1;
  o->key_field = "key";
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
    case OPT_ROW_SHAPE:
      if (parse_row_shape(optarg, o) != 0)
        H5G_FAIL(H5G_ERR_USAGE, "invalid --row-shape '%s' (K[,L...]: up to %d positive sizes)",
                 optarg, H5S_MAX_RANK - 1);
      break;
    case OPT_TABLE: o->table = 1; break;
    case OPT_KEY_FIELD: o->key_field = optarg; break;
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
  if (o->table && o->row_rank > 0) H5G_FAIL(H5G_ERR_USAGE, "--table and --row-shape exclude each other");
  if (o->table && (o->key_field[0] == '\0' || strcmp(o->key_field, "row") == 0 ||
                   strcmp(o->key_field, "det") == 0 || strcmp(o->key_field, "name") == 0 ||
                   strcmp(o->key_field, "x") == 0))
    H5G_FAIL(H5G_ERR_USAGE, "--key-field '%s' is empty or names another field", o->key_field);
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
    const uint64_t elements = o->count * o->row_elems;
    uint64_t pos = o->dist == DIST_SORTED ? index : elements - 1 - index;
    double u = (double)pos / (double)elements;
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
  case DIST_INDEX: return is_float ? float_bits((double)index, t->width) : index;
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

/* A C string type of `size` bytes (H5T_VARIABLE: variable length). */
static int string_type(const gen_options *o, size_t size, hid_t *type) {
  int rc = H5G_OK;
  CHECK_H5(*type = H5Tcopy(H5T_C_S1), "cannot create string type (%s:%s)", o->out, o->path);
  CHECK_H5(H5Tset_size(*type, size), "cannot set string size (%s:%s)", o->out, o->path);
done:
  return rc;
}

/* The string types of the attributes: 8 bytes, variable length. */
static int attribute_types(const gen_options *o, hid_t *fixed, hid_t *vlen) {
  int rc = H5G_OK;
  CHECK(string_type(o, 8, fixed));
  CHECK(string_type(o, H5T_VARIABLE, vlen));
done:
  return rc;
}

/* Attributes for tests of attribute copying: one of each kind h5gsort must carry over. */
static int write_attributes(const gen_options *o, h5g_dset *dset) {
  int rc = H5G_OK;
  hid_t fixed = H5I_INVALID_HID, vlen = H5I_INVALID_HID;
  const int32_t scale = -7;
  const double calibration[3] = {1.5, -2.25, 1e-300};
  const char units[8] = "counts";
  const char *note = "written by h5gsort-gen";

  /* local calls, agreed on before the collective attribute writes */
  CHECK(h5g_agree(MPI_COMM_WORLD, attribute_types(o, &fixed, &vlen)));
  CHECK(h5g_io_write_attribute(dset, "scale", H5T_STD_I32LE, H5T_NATIVE_INT32, 0, &scale));
  CHECK(h5g_io_write_attribute(dset, "calibration", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, 3,
                               calibration));
  CHECK(h5g_io_write_attribute(dset, "units", fixed, fixed, 0, units));
  CHECK(h5g_io_write_attribute(dset, "note", vlen, vlen, 0, &note));
done:
  if (vlen >= 0) H5Tclose(vlen);
  if (fixed >= 0) H5Tclose(fixed);
  return rc;
}

/* The --table record type, packed: with the file's member types (in_file) or native ones. */
static int table_type(const gen_options *o, int in_file, hid_t *type) {
  int rc = H5G_OK;
  hid_t name = H5I_INVALID_HID;
  const int be = in_file && o->big_endian;
  const size_t x_offset = FIELD_KEY + o->type.width;
  hid_t u64 = in_file ? (be ? H5T_STD_U64BE : H5T_STD_U64LE) : H5T_NATIVE_UINT64;
  hid_t u16 = in_file ? (be ? H5T_STD_U16BE : H5T_STD_U16LE) : H5T_NATIVE_UINT16;
  hid_t f64 = in_file ? (be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE) : H5T_NATIVE_DOUBLE;
  hid_t key = in_file ? file_type(&o->type, o->big_endian) : memory_type(&o->type);

  *type = H5I_INVALID_HID;
  CHECK(string_type(o, NAME_BYTES, &name));
  CHECK_H5(H5Tset_strpad(name, H5T_STR_NULLPAD), "cannot set string padding (%s:%s)", o->out,
           o->path);
  CHECK_H5(*type = H5Tcreate(H5T_COMPOUND, x_offset + sizeof(double)),
           "cannot create compound (%s:%s)", o->out, o->path);
  CHECK_H5(H5Tinsert(*type, "row", FIELD_ROW, u64), "cannot insert field 'row' (%s:%s)", o->out,
           o->path);
  CHECK_H5(H5Tinsert(*type, "det", FIELD_DET, u16), "cannot insert field 'det' (%s:%s)", o->out,
           o->path);
  CHECK_H5(H5Tinsert(*type, "name", FIELD_NAME, name), "cannot insert field 'name' (%s:%s)",
           o->out, o->path);
  CHECK_H5(H5Tinsert(*type, o->key_field, FIELD_KEY, key), "cannot insert the key field (%s:%s)",
           o->out, o->path);
  CHECK_H5(H5Tinsert(*type, "x", x_offset, f64), "cannot insert field 'x' (%s:%s)", o->out,
           o->path);
done:
  if (name >= 0) H5Tclose(name);
  if (rc != H5G_OK && *type >= 0) H5Tclose(*type);
  return rc;
}

/* A filtered big-endian dataset takes its rows in file byte order: parallel HDF5 writes filtered
 * data only collectively, and a type conversion turns a collective write independent. */
static int rows_in_file_order(const gen_options *o) {
  return o->layout == LAYOUT_GZIP && o->big_endian && !o->table;
}

/* The dataset's file and memory types (local calls). */
static int dataset_types(const gen_options *o, hid_t *file, hid_t *mem) {
  int rc = H5G_OK;
  if (o->table) {
    CHECK(table_type(o, 1, file));
    CHECK(table_type(o, 0, mem));
  } else {
    CHECK_H5(*file = H5Tcopy(file_type(&o->type, o->big_endian)), "cannot copy type (%s:%s)",
             o->out, o->path);
    CHECK_H5(*mem = H5Tcopy(rows_in_file_order(o) ? *file : memory_type(&o->type)),
             "cannot copy type (%s:%s)", o->out, o->path);
  }
done:
  return rc;
}

/* Bytes of one row in memory (and in the file: tables are packed). */
static size_t row_bytes(const gen_options *o) {
  if (o->table) return FIELD_KEY + o->type.width + sizeof(double);
  return (size_t)o->row_elems * o->type.width;
}

/* Row `row` of the dataset, in memory layout, into buf. */
static void fill_row(const gen_options *o, uint64_t row, unsigned char *buf) {
  if (!o->table) {
    for (uint64_t k = 0; k < o->row_elems; k++) {
      unsigned char *e = buf + k * o->type.width;
      store_bits(buf, (size_t)k, o->type.width, element_bits(o, row * o->row_elems + k));
      for (unsigned a = 0, b = o->type.width - 1; rows_in_file_order(o) && a < b; a++, b--) {
        unsigned char t = e[a];
        e[a] = e[b];
        e[b] = t;
      }
    }
    return;
  }
  const uint16_t det = (uint16_t)(random_word(o->seed, row, 2) % DETECTORS);
  const double x = 2.0 * unit_interval(random_word(o->seed, row, 3)) - 1.0;
  uint64_t key; /* its first `width` bytes hold the key */
  char name[NAME_BYTES + 1];
  snprintf(name, sizeof name, "r%04x", (unsigned)(row & 0xffffu));
  store_bits(&key, 0, o->type.width, element_bits(o, row));
  memcpy(buf + FIELD_ROW, &row, sizeof row);
  memcpy(buf + FIELD_DET, &det, sizeof det);
  memcpy(buf + FIELD_NAME, name, NAME_BYTES);
  memcpy(buf + FIELD_KEY, &key, o->type.width);
  memcpy(buf + FIELD_KEY + o->type.width, &x, sizeof x);
}

/* Generates and writes this rank's rows [r*N/P, (r+1)*N/P) in blocks of BLOCK_BYTES; every rank
 * makes the same number of collective writes (empty ones once its rows are done). */
static int write_slice(const gen_options *o, h5g_dset *dset, int rank, int nranks) {
  int rc = H5G_OK;
  const size_t bytes_per_row = row_bytes(o);
  const uint64_t block_rows = BLOCK_BYTES / bytes_per_row ? BLOCK_BYTES / bytes_per_row : 1;
  const uint64_t q = o->count / (uint64_t)nranks, rem = o->count % (uint64_t)nranks;
  const uint64_t lo = (uint64_t)rank * q + (uint64_t)rank * rem / (uint64_t)nranks;
  const uint64_t hi = (uint64_t)(rank + 1) * q + (uint64_t)(rank + 1) * rem / (uint64_t)nranks;
  const uint64_t largest_slice = q + (rem != 0);
  const uint64_t nblocks = (largest_slice + block_rows - 1) / block_rows;
  const size_t buf_rows = (size_t)(hi - lo < block_rows ? hi - lo : block_rows);
  unsigned char *buf = malloc(buf_rows * bytes_per_row);

  CHECK(h5g_agree_alloc(MPI_COMM_WORLD, buf != NULL, buf_rows * bytes_per_row));
  for (uint64_t b = 0; b < nblocks; b++) {
    uint64_t start = lo + b * block_rows;
    uint64_t n = start < hi ? (hi - start < block_rows ? hi - start : block_rows) : 0;
    for (uint64_t i = 0; i < n; i++) fill_row(o, start + i, buf + i * bytes_per_row);
    CHECK(h5g_io_write(dset, start, n, buf));
  }
done:
  free(buf);
  return rc;
}

/* Creates (or, with --append, opens) OUT and writes the dataset. Every step agrees before the
 * collective call that follows, so all ranks leave together; a file this run created is removed
 * when it fails. */
static int generate(const gen_options *o, int rank, int nranks) {
  int rc = H5G_OK, created = 0;
  h5g_file *file = NULL;
  h5g_dset *dset = NULL;
  hid_t ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
  hsize_t dims[H5S_MAX_RANK];
  const h5g_io_storage storage = {o->layout == LAYOUT_CONTIGUOUS ? H5G_IO_CONTIGUOUS : H5G_IO_CHUNKED,
                                  o->chunk, o->layout == LAYOUT_GZIP, o->layout == LAYOUT_GZIP ? 6 : 0};
  /* Rank 0 decides "exists?" before any rank may create the file. */
  int exists = rank == 0 && access(o->out, F_OK) == 0;
  CHECK_MPI(MPI_Bcast(&exists, 1, MPI_INT, 0, MPI_COMM_WORLD));

  if (exists && !o->force && !o->append)
    H5G_FAIL(H5G_ERR_USAGE, "%s exists (use --force to replace it or --append to add to it)",
             o->out);
  if (exists && o->append) {
    CHECK(h5g_io_open_file(MPI_COMM_WORLD, o->out, 1, &file));
  } else {
    CHECK(h5g_io_create_file(MPI_COMM_WORLD, o->out, &file));
    created = 1;
  }
  dims[0] = o->count;
  for (int k = 0; k < o->row_rank; k++) dims[k + 1] = o->row_dims[k];
  CHECK(h5g_agree(MPI_COMM_WORLD, dataset_types(o, &ftype, &mtype)));
  CHECK(h5g_io_create(file, o->path, ftype, mtype, 1 + o->row_rank, dims, &storage, &dset));
  CHECK(write_slice(o, dset, rank, nranks));
  if (o->attrs) CHECK(write_attributes(o, dset));
done:
  if (ftype >= 0) H5Tclose(ftype);
  if (mtype >= 0) H5Tclose(mtype);
  /* Every rank is here with the same status (each step agreed): the closes are collective. */
  if (h5g_io_close(dset) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  if (h5g_io_close_file(file) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  if (rc != H5G_OK && created && rank == 0) unlink(o->out);
  return rc;
}

int main(int argc, char **argv) {
  gen_options o;
  int rank = 0, nranks = 1, help = 0;
  /* as in h5gsort: no shared file pointers, whose Open MPI components break on long paths */
  setenv("OMPI_MCA_sharedfp", "^lockedfile,sm", 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  h5g_io_quiet();

  int rc = parse_options(argc, argv, &o, &help);
  if (rc == H5G_OK && help) {
    if (rank == 0) usage(stdout);
  } else if (rc == H5G_OK) {
    rc = generate(&o, rank, nranks);
  } else if (rank == 0) {
    usage(stderr);
  }

  /* Every rank exits with the same code; rank 0 prints the lowest failing rank's message. */
  rc = h5g_agree(MPI_COMM_WORLD, rc);
  if (rc != H5G_OK && rank == 0) fprintf(stderr, "h5gsort-gen: error: %s\n", h5g_error_message());
  MPI_Finalize();
  return rc;
}
