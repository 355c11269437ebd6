/* The options of h5gsort in one table (src/option_table.h): each option's name, value, what it
 * sets and its help text. The parser (src/options.c), --help and the man page h5gsort(1)
 * (src/manpage.c) are all made from it, so they cannot drift apart. */
#include "src/option_table.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/manual.h"
#include "base/size_parse.h"
#include "src/about.h"

/* Index of `arg` among three option words, -1 if none. */
static int word_index(const char *arg, const char *const words[3]) {
  for (int i = 0; i < 3; i++)
    if (strcmp(arg, words[i]) == 0) return i;
  return -1;
}

int h5g_options_normalize_path(char *path, const char *option) {
  int rc = H5G_OK;
  char *out = path;
  const char *in = path;
  if (path[0] != '/') goto done; /* refused later as not absolute */
  for (const char *c = path; (c = strstr(c, "..")); c += 2)
    if (c[-1] == '/' && (c[2] == '/' || c[2] == '\0'))
      H5G_FAIL(H5G_ERR_USAGE, "%s: '..' in a dataset path is refused: HDF5 reads it as a link "
               "named '..', not the group above ('%s')", option, path);
  while (*in) {
    while (*in == '/') in++;
    const char *end = strchr(in, '/');
    size_t len = end ? (size_t)(end - in) : strlen(in);
    if (len == 0 || (len == 1 && in[0] == '.')) {
      /* nothing */
    } else {
      *out++ = '/';
      memmove(out, in, len);
      out += len;
    }
    in += len;
  }
  if (out == path) *out++ = '/';
  *out = '\0';
done:
  return rc;
}

/* A comma-separated list `arg` of an option, split in place into list[*count...]. */
static int split_list(char *arg, const char *option, const char *what, const char **list, int max,
                      int *count) {
  int rc = H5G_OK;
  if (arg[0] == '\0' || arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
    H5G_FAIL(H5G_ERR_USAGE, "%s takes a comma-separated list of %s, not '%s'", option, what, arg);
  for (char *save = NULL, *item = strtok_r(arg, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    if (*count == max) H5G_FAIL(H5G_ERR_USAGE, "%s takes at most %d %s", option, max, what);
    list[(*count)++] = item;
  }
done:
  return rc;
}

/* ---- what each option sets ---------------------------------------------------------------- */

static int set_dataset(h5g_options *opt, char *v) {
  int rc = H5G_OK;
  if (opt->ndatasets == H5G_MAX_KEYS)
    H5G_FAIL(H5G_ERR_USAGE, "at most %d keys (-d) can be given", H5G_MAX_KEYS);
  CHECK(h5g_options_normalize_path(v, "-d"));
  opt->datasets[opt->ndatasets++] = v;
  opt->dataset = opt->datasets[0];
done:
  return rc;
}

/* An option that names a dataset path of OUTPUT or INPUT: normalized, kept. */
#define PATH_SETTER(name, field, option)                                                          \
  static int name(h5g_options *opt, char *v) {                                                    \
    opt->field = v;                                                                               \
    return h5g_options_normalize_path(v, option);                                                 \
  }
PATH_SETTER(set_output_dataset, output_dataset, "--output-dataset")
PATH_SETTER(set_index_out, index_out, "--index-out")
PATH_SETTER(set_counts, counts, "--counts")
PATH_SETTER(set_against_dataset, against_dataset, "--against-dataset")

/* An option that sets a flag or keeps its value as given. */
#define FLAG_SETTER(name, field)                                                                  \
  static int name(h5g_options *opt, char *v) {                                                    \
    (void)v;                                                                                      \
    opt->field = 1;                                                                               \
    return H5G_OK;                                                                                \
  }
#define TEXT_SETTER(name, field)                                                                  \
  static int name(h5g_options *opt, char *v) {                                                    \
    opt->field = v;                                                                               \
    return H5G_OK;                                                                                \
  }
FLAG_SETTER(set_descending, descending)
FLAG_SETTER(set_force, force)
FLAG_SETTER(set_plan, plan)
FLAG_SETTER(set_verify, verify)
FLAG_SETTER(set_stable, stable)
FLAG_SETTER(set_unique, unique)
FLAG_SETTER(set_whole_file, whole_file)
FLAG_SETTER(set_check, check)
FLAG_SETTER(set_quiet, quiet)
FLAG_SETTER(set_verbose, verbose)
FLAG_SETTER(set_help, help)
FLAG_SETTER(set_version, version)
FLAG_SETTER(set_no_spill, no_spill)
FLAG_SETTER(set_resume, resume)
TEXT_SETTER(set_report, report)
TEXT_SETTER(set_against, against)
TEXT_SETTER(set_scratch, scratch)

/* --progress alone: a heartbeat line every 10 s, a few a minute in a batch log. A value from a
 * millisecond to a day; a mistyped one is refused rather than taken for a log that floods or
 * never speaks. */
#define H5G_PROGRESS_SECONDS 10.0
static int set_progress(h5g_options *opt, char *v) {
  char *end = NULL;
  double seconds = v ? strtod(v, &end) : H5G_PROGRESS_SECONDS;
  if (v && (end == v || *end != '\0' || !(seconds >= 1e-3 && seconds <= 86400)))
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__,
                         "--progress takes seconds between lines (0.001 to 86400), as "
                         "--progress=5, not '%s'", v);
  opt->progress = 1;
  opt->progress_seconds = seconds;
  return H5G_OK;
}

static int set_backend(h5g_options *opt, char *v) {
  static const char *const words[] = {"auto", "cuda", "cpu"}; /* h5g_backend_choice order */
  int which = word_index(v, words);
  if (which < 0)
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__,
                         "--backend takes auto, cuda or cpu, not '%s'", v);
  opt->backend = (h5g_backend_choice)which;
  return H5G_OK;
}

static int set_exchange(h5g_options *opt, char *v) {
  static const char *const words[] = {"auto", "mpi", "nccl"}; /* h5g_exchange_choice order */
  int which = word_index(v, words);
  if (which < 0)
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__,
                         "--exchange takes auto, mpi or nccl, not '%s'", v);
  opt->exchange = (h5g_exchange_choice)which;
  return H5G_OK;
}

/* A size such as 512M into *bytes, for option `name`. */
static int parse_size(const char *name, const char *v, uint64_t *bytes) {
  if (h5g_parse_size(v, bytes) == 0 && *bytes) return H5G_OK;
  return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__,
                       "--%s takes a size such as 512M or 4G, not '%s'", name, v);
}
static int set_device_memory(h5g_options *opt, char *v) {
  return parse_size("device-memory", v, &opt->device_memory);
}
static int set_host_memory(h5g_options *opt, char *v) {
  return parse_size("host-memory", v, &opt->host_memory);
}

static int set_io_threads(h5g_options *opt, char *v) {
  char *end = NULL;
  long threads = strtol(v, &end, 10);
  if (end == v || *end || threads < 1 || threads > 1024)
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__,
                         "--io-threads takes a number of threads from 1 to 1024, not '%s'", v);
  opt->io_threads = (int)threads;
  return H5G_OK;
}

static int set_layout(h5g_options *opt, char *v) {
  static const char *const words[] = {"keep", "contiguous", "chunked"}; /* h5g_layout_choice */
  int which = word_index(v, words);
  if (which < 0)
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__,
                         "--layout takes keep, contiguous or chunked, not '%s'", v);
  opt->storage.layout = (h5g_layout_choice)which;
  return H5G_OK;
}

static int set_chunk(h5g_options *opt, char *v) {
  char *end = NULL;
  unsigned long long rows = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
  if (!end || *end || rows == 0 || rows == ULLONG_MAX)
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__,
                         "--chunk takes a number of rows from 1 up, not '%s'", v);
  opt->storage.chunk_rows = rows;
  return H5G_OK;
}

/* --compress keep|none|gzip[=LEVEL] */
static int set_compress(h5g_options *opt, char *v) {
  int rc = H5G_OK;
  h5g_io_storage_choice *storage = &opt->storage;
  static const char *const words[] = {"keep", "none", "gzip"}; /* h5g_compress_choice order */
  int which = word_index(v, words);
  storage->gzip_level = which == H5G_COMPRESS_GZIP ? 6 : 0; /* 6: zlib's own default */
  if (which < 0 && strncmp(v, "gzip=", 5) == 0) {
    if (v[5] < '0' || v[5] > '9' || v[6] != '\0')
      H5G_FAIL(H5G_ERR_USAGE, "--compress gzip takes a level from 0 to 9, not '%s'", v + 5);
    which = H5G_COMPRESS_GZIP;
    storage->gzip_level = v[5] - '0';
  }
  if (which < 0) H5G_FAIL(H5G_ERR_USAGE, "--compress takes keep, none or gzip[=0-9], not '%s'", v);
  storage->compress = (h5g_compress_choice)which;
done:
  return rc;
}

static int set_carry(h5g_options *opt, char *v) {
  int rc = H5G_OK;
  int first = opt->ncarry;
  CHECK(split_list(v, "--carry", "paths", opt->carry, H5G_MAX_CARRY, &opt->ncarry));
  for (int i = first; i < opt->ncarry; i++) {
    char *path = (char *)opt->carry[i];
    if (path[0] != '/') H5G_FAIL(H5G_ERR_USAGE, "--carry paths must be absolute, not '%s'", path);
    CHECK(h5g_options_normalize_path(path, "--carry"));
    if (strcmp(path, "/") == 0) H5G_FAIL(H5G_ERR_USAGE, "--carry paths must name a dataset, not '/'");
  }
done:
  return rc;
}

static int set_key_field(h5g_options *opt, char *v) {
  int rc = H5G_OK;
  opt->nkey_fields = 0;
  CHECK(split_list(v, "--key-field", "field names", opt->key_fields, H5G_MAX_KEYS,
                   &opt->nkey_fields));
  opt->key_field = opt->key_fields[0];
done:
  return rc;
}

/* --key-column J[,J2...]: 0-based column numbers. */
static int set_key_column(h5g_options *opt, char *v) {
  int rc = H5G_OK;
  const char *items[H5G_MAX_KEYS];
  int count = 0;
  CHECK(split_list(v, "--key-column", "column numbers", items, H5G_MAX_KEYS, &count));
  for (int i = 0; i < count; i++) {
    char *end = NULL;
    long column = items[i][0] >= '0' && items[i][0] <= '9' ? strtol(items[i], &end, 10) : -1;
    if (!end || *end || column < 0 || column > INT_MAX)
      H5G_FAIL(H5G_ERR_USAGE, "--key-column takes column numbers from 0 up, not '%s'", items[i]);
    opt->key_columns[i] = (int)column;
  }
  opt->nkey_columns = count;
done:
  return rc;
}

/* --order asc|desc[,...] */
static int set_order(h5g_options *opt, char *v) {
  int rc = H5G_OK;
  const char *items[H5G_MAX_KEYS];
  int count = 0;
  CHECK(split_list(v, "--order", "directions", items, H5G_MAX_KEYS, &count));
  for (int i = 0; i < count; i++) {
    if (strcmp(items[i], "asc") != 0 && strcmp(items[i], "desc") != 0)
      H5G_FAIL(H5G_ERR_USAGE, "--order takes asc or desc for each key, not '%s'", items[i]);
    opt->key_descending[i] = strcmp(items[i], "desc") == 0;
  }
  opt->norder = count;
done:
  return rc;
}

/* --na-position first|last (pandas' name); not given: numpy's place (H5G_NA_DEFAULT). */
static int set_na_position(h5g_options *opt, char *v) {
  if (strcmp(v, "first") != 0 && strcmp(v, "last") != 0)
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__,
                         "--na-position takes first or last, not '%s'", v);
  opt->na_position = strcmp(v, "first") == 0 ? H5G_NA_FIRST : H5G_NA_LAST;
  return H5G_OK;
}

static int set_top(h5g_options *opt, char *v) {
  /* digits only; a K past any N (even past 2^63 - 1) keeps everything */
  size_t digits = strspn(v, "0123456789");
  if (!digits || v[digits])
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__,
                         "--top takes a number of elements from 0 up, not '%s'", v);
  errno = 0;
  long long k = strtoll(v, NULL, 10);
  opt->top = errno == ERANGE ? LLONG_MAX : k;
  return H5G_OK;
}

/* ---- the table ------------------------------------------------------------------------------ */

const h5g_option_spec h5g_option_table[] = {
    {"dataset", 'd', "PATH", set_dataset,
     "key dataset in INPUT (required); give it several times to sort by several keys, in "
     "priority order (the first is the primary key), each written permuted at its own path"},
    {"output-dataset", 0, "PATH", set_output_dataset,
     "dataset path in OUTPUT (default: same as --dataset; groups are created; one -d only)"},
    {"descending", 0, NULL, set_descending, "exact reverse of the ascending order (every key)"},
    {"order", 0, "asc|desc[,...]", set_order,
     "one direction per key (per -d, --key-field field or --key-column column); a descending "
     "key puts NaNs first"},
    {"na-position", 0, "first|last", set_na_position,
     "where the NaNs of every float key go, in either direction (default: numpy's, last "
     "ascending and first descending; integer keys: no effect). Among themselves NaNs keep the "
     "order they have without it: one key sorted alone orders them by bit pattern (positive "
     "NaNs by payload, then negative ones; reversed descending); several keys, table fields, "
     "columns or --unique take every NaN as one value, in input order"},
    {"key-field", 0, "NAME[,NAME]", set_key_field,
     "sort a compound (table) dataset by these numeric fields, in priority order, moving whole "
     "records"},
    {"key-column", 0, "J[,J]", set_key_column,
     "sort the rows of a 2-D dataset (N x M) by these columns (0-based), in priority order, "
     "moving whole rows"},
    {"carry", 0, "PATH[,PATH]", set_carry,
     "datasets with one row per key (any integer or float type, 1-D or N-D) written permuted "
     "like the keys"},
    {"index-out", 0, "PATH", set_index_out, "write the uint64 source index of every output key"},
    {"stable", 0, NULL, set_stable,
     "equal keys keep their input order (always the case when records move)"},
    {"top", 0, "K", set_top,
     "write only the first K elements of the sorted order (every written dataset cut to K "
     "rows), found by exact selection: only those K are exchanged and written (with --unique, "
     "or keys over 16 bytes, after a full sort)"},
    {"unique", 0, NULL, set_unique,
     "one element per distinct key (key tuple), the earliest in the input; -0.0 equals +0.0, "
     "all NaNs are one value"},
    {"counts", 0, "PATH", set_counts, "with --unique: the uint64 count of each kept key"},
    {"layout", 0, "keep|contiguous|chunked", set_layout,
     "output storage (default keep: the input's layout, chunk length and filters, like "
     "h5repack; contiguous or compact input gives contiguous output)"},
    {"chunk", 0, "ROWS", set_chunk, "chunk length in rows (implies chunked)"},
    {"compress", 0, "keep|none|gzip[=L]", set_compress,
     "filters: the input's, none (chunking kept), or shuffle + deflate level L (0-9, default 6; "
     "implies chunked)"},
    {"whole-file", 0, NULL, set_whole_file,
     "OUTPUT is a copy of INPUT with the sorted dataset(s) written into it (without it, root "
     "and group attributes on the written paths are still copied)"},
    {"force", 0, NULL, set_force, "replace OUTPUT if it exists; OUTPUT may equal INPUT"},
    {"backend", 0, "auto|cuda|cpu", set_backend,
     "auto: the GPU when one is visible, else the CPU"},
    {"exchange", 0, "auto|mpi|nccl", set_exchange,
     "how ranks exchange keys (auto: MPI on one node, measured faster; NCCL across nodes when "
     "every rank has a GPU of its own)"},
    {"device-memory", 0, "SIZE", set_device_memory,
     "working-memory cap per rank, e.g. 512M (larger slices are sorted out of core)"},
    {"host-memory", 0, "SIZE", set_host_memory,
     "host memory the job may use on each node (default: its cgroup limit, or MemAvailable)"},
    {"scratch", 0, "DIR", set_scratch,
     "where a rank whose share needs more host memory than that spills: its large buffers "
     "become files there, which the kernel writes out and reads back as memory runs short "
     "(default: $TMPDIR when it has room, else OUTPUT's directory; where the sorted keys are in "
     "them, they are named, in a directory of this OUTPUT's, so that a killed run can be resumed: removed "
     "when the run succeeds)"},
    {"no-spill", 0, NULL, set_no_spill,
     "stop instead of spilling when a share does not fit the host memory (what would fit is "
     "said)"},
    {"resume", 0, NULL, set_resume,
     "go on from what a killed spilling run of the same command kept in scratch: its sorted "
     "runs (the run goes on from their merge) or its sorted share (from the write), checked "
     "against their records and checksums; anything that does not match is discarded and the "
     "run starts over"},
    {"io-threads", 0, "N", set_io_threads,
     "host threads per rank for file I/O (default: the CPUs this rank may run on)"},
    {"plan", 0, NULL, set_plan,
     "validate INPUT and OUTPUT, print the memory, disk, I/O path and runs of every rank, whether "
     "one rank's slice streams, and a time estimate, then stop (exit 0 when the run would fit)"},
    {"verify", 0, NULL, set_verify, "re-check order, count and checksum after writing"},
    {"report", 0, "FILE.json", set_report, "per-phase timings and sizes as JSON"},
    {"check", 0, NULL, set_check,
     "verify-only: FILE's dataset is in order; with --against, it holds the same keys as "
     "INPUT's (count and checksum)"},
    {"against", 0, "INPUT.h5", set_against, "with --check: the input to compare with"},
    {"against-dataset", 0, "PATH", set_against_dataset,
     "with --check: the dataset of --against (default: the same as -d)"},
    {"quiet", 'q', NULL, set_quiet, "print nothing but errors"},
    {"verbose", 'v', NULL, set_verbose, "print a summary and error origins"},
    {"progress", 0, "[=SECONDS]", set_progress,
     "rank 0 prints each phase to stderr once it is over (bytes, seconds, rate); on a terminal "
     "also the one under way, elsewhere (a launcher's pipe, a log) a line on it every SECONDS "
     "(default 10) with its bytes so far and rate"},
    {"help", 'h', NULL, set_help, "this text"},
    {"version", 0, NULL, set_version, "print the version"},
};
const int h5g_option_count = (int)(sizeof h5g_option_table / sizeof *h5g_option_table);

const char *const h5g_option_synopsis[] = {
    "mpiexec -n P h5gsort [OPTIONS] INPUT.h5 OUTPUT.h5 -d /path/to/keys [-d ...]",
    "mpiexec -n P h5gsort --check FILE.h5 -d /path [--against INPUT.h5 [--against-dataset /path]]",
    NULL};
const char *const h5g_option_summary =
    "Sorts a 1-D integer or float HDF5 dataset across MPI ranks (one GPU per rank when "
    "available) and writes one globally sorted dataset.";

void h5g_options_usage(FILE *out) {
  for (int i = 0; h5g_option_synopsis[i]; i++)
    fprintf(out, "%s %s\n", i ? "      " : "usage:", h5g_option_synopsis[i]);
  fputc('\n', out);
  h5g_help_wrap(out, h5g_option_summary, 0, 0);
  fputc('\n', out);
  for (int i = 0; i < h5g_option_count; i++) {
    const h5g_option_spec *o = &h5g_option_table[i];
    h5g_help_option(out, o->short_name, o->name, o->value, o->help);
  }
  fputc('\n', out);
  h5g_help_items(out, "Exit codes", h5g_about_exit_statuses);
  fputc('\n', out);
  h5g_help_examples(out, h5g_about_examples, H5G_HELP_EXAMPLES);
}
