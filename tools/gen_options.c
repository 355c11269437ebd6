/* h5gsort-gen's command line (tools/gen.h). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/manual.h"
#include "gen.h"

static const char *const dist_names[] = {"uniform", "normal", "zipf",    "sorted", "reverse",
                                         "equal",   "few",    "special", "index"};
static const char *const layout_names[] = {"contiguous", "chunked", "gzip", "scaleoffset", "nbit"};

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

/* What getopt_long returns for each long option that has no short one. */
enum { OPT_COUNT = 256, OPT_TYPE, OPT_DIST, OPT_SEED, OPT_ORDER, OPT_LAYOUT, OPT_CHUNK,
       OPT_ATTRS, OPT_FORCE, OPT_APPEND, OPT_ROW_SHAPE, OPT_TABLE, OPT_KEY_FIELD, OPT_GZIP_LEVEL };

/* The parser's getopt_long table is made from this one, as --help and h5gsort-gen(1) are. */
const gen_option_spec gen_option_table[] = {
    {"dataset", 'd', "PATH", 'd', "dataset to write (intermediate groups are created)"},
    {"count", 0, "N", OPT_COUNT, "number of elements (0 and N < P allowed)"},
    {"type", 0, "T", OPT_TYPE, "u1 u2 u4 u8 i1 i2 i4 i8 f4 f8"},
    {"dist", 0, "D", OPT_DIST,
     "uniform (default) normal zipf sorted reverse equal few special index (element i holds i, "
     "truncated to the type)"},
    {"seed", 0, "S", OPT_SEED, "generator seed (default 1); values depend on (seed, index) only"},
    {"order", 0, "le|be", OPT_ORDER, "byte order of the file type (default le)"},
    {"layout", 0, "L", OPT_LAYOUT,
     "contiguous (default), chunked, gzip (shuffle + deflate), scaleoffset (integer "
     "scale-offset, minimum bits per chunk) or nbit (n-bit filter on a type of 8 bits less "
     "precision than its size, e.g. u4 of 24 bits; values keep their low bits); these two take "
     "integers of 2+ bytes, no --table"},
    {"chunk", 0, "K", OPT_CHUNK, "chunk length in rows (default 65536)"},
    {"gzip-level", 0, "L", OPT_GZIP_LEVEL, "deflate level of --layout gzip, 0 to 9 (default 6)"},
    {"row-shape", 0, "K[,L...]", OPT_ROW_SHAPE,
     "N x K (x L ...) array: rows of K (x L ...) elements"},
    {"table", 0, NULL, OPT_TABLE,
     "1-D compound table {row u8, det u2, name S5, KEY T, x f8}, packed; KEY follows --type and "
     "--dist"},
    {"key-field", 0, "NAME", OPT_KEY_FIELD, "name of the KEY field of --table (default key)"},
    {"attrs", 0, NULL, OPT_ATTRS, "add attributes (int scalar, float array, strings)"},
    {"force", 0, NULL, OPT_FORCE, "replace OUT if it exists"},
    {"append", 0, NULL, OPT_APPEND, "add the dataset to OUT if it exists"},
    {"help", 'h', NULL, 'h', "this text"},
};
const int gen_option_count = (int)(sizeof gen_option_table / sizeof *gen_option_table);

const char *const gen_synopsis[] = {
    "mpiexec -n P h5gsort-gen OUT.h5 -d PATH --count N --type T [OPTIONS]", NULL};
const char *const gen_summary =
    "Writes a dataset of N elements in parallel, the test and benchmark input of h5gsort: "
    "element i's value depends only on the seed and i, so the file is the same whatever the "
    "number of ranks P. A failed run leaves no OUT behind (unless --append).";

const h5g_manual_item gen_examples[] = {
    {"mpiexec -n 4 h5gsort-gen in.h5 -d /keys --count 100000000 --type f4",
     "100 million uniform float32 keys at /keys of in.h5, written by 4 ranks."},
    {"mpiexec -n 4 h5gsort-gen in.h5 -d /x --count 100000000 --type f8 --append",
     "A dataset of the same length added to in.h5: float64 values to carry with the keys."},
    {"mpiexec -n 2 h5gsort-gen table.h5 -d /events --count 1000000 --type i8 --table",
     "A compound table of a million records, its int64 field key the one to sort by (h5gsort -d "
     "/events --key-field key)."},
    {"h5gsort-gen z.h5 -d /keys --count 1000000 --type u4 --dist zipf --layout gzip",
     "Skewed uint32 keys in gzip chunks, written by a single process."},
    {"h5gsort-gen rows.h5 -d /rows --count 100000 --type i4 --row-shape 3",
     "A 100000 x 3 array (h5gsort --key-column)."},
    {NULL, NULL}};

const h5g_manual_item gen_exit_statuses[] = {
    {"0", "success."},
    {"1", "runtime failure: I/O, out of memory, MPI."},
    {"2", "usage error (the usage is printed too), or OUT exists without --force or --append."},
    {NULL, NULL}};

void gen_usage(FILE *to) {
  fprintf(to, "usage: %s\n\n", gen_synopsis[0]);
  h5g_help_wrap(to, gen_summary, 0, 0);
  fputc('\n', to);
  for (int i = 0; i < gen_option_count; i++) {
    const gen_option_spec *o = &gen_option_table[i];
    h5g_help_option(to, o->short_name, o->name, o->value, o->help);
  }
  fputc('\n', to);
  h5g_help_items(to, "Exit codes", gen_exit_statuses);
  fputc('\n', to);
  h5g_help_examples(to, gen_examples, H5G_HELP_EXAMPLES);
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
int gen_parse_options(int argc, char **argv, gen_options *o, int *help) {
  enum { OPTIONS = sizeof gen_option_table / sizeof *gen_option_table };
  struct option long_options[OPTIONS + 1];
  char short_options[2 * OPTIONS + 2], *s = short_options;
  int rc = H5G_OK, have_count = 0, have_type = 0, opt;
  *s++ = ':'; /* a missing value returns ':' */
  for (int i = 0; i < gen_option_count; i++) {
    const gen_option_spec *g = &gen_option_table[i];
    long_options[i] = (struct option){g->name, g->value ? required_argument : no_argument, NULL,
                                      g->code};
    if (g->short_name) {
      *s++ = g->short_name;
      if (g->value) *s++ = ':';
    }
  }
  long_options[gen_option_count] = (struct option){NULL, 0, NULL, 0};
  *s = '\0';
  *help = 0;
  memset(o, 0, sizeof *o);
  o->seed = 1;
  o->chunk = 65536;
  o->gzip_level = 6;
  o->row_elems = 1;
  o->key_field = "key";
  opterr = 0;
  while ((opt = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
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
    case OPT_GZIP_LEVEL:
      if (optarg[0] < '0' || optarg[0] > '9' || optarg[1] != '\0')
        H5G_FAIL(H5G_ERR_USAGE, "invalid --gzip-level '%s' (0 to 9)", optarg);
      o->gzip_level = optarg[0] - '0';
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
  if ((o->layout == LAYOUT_SCALEOFFSET || o->layout == LAYOUT_NBIT) &&
      (o->table || o->type.cls == H5G_KEY_FLOAT || o->type.width < 2))
    H5G_FAIL(H5G_ERR_USAGE, "--layout %s takes integers of 2 or more bytes, without --table",
             layout_names[o->layout]);
  if (o->table && (o->key_field[0] == '\0' || strcmp(o->key_field, "row") == 0 ||
                   strcmp(o->key_field, "det") == 0 || strcmp(o->key_field, "name") == 0 ||
                   strcmp(o->key_field, "x") == 0))
    H5G_FAIL(H5G_ERR_USAGE, "--key-field '%s' is empty or names another field", o->key_field);
done:
  return rc;
}
