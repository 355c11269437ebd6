#include "src/options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/size_parse.h"

enum { OPT_OUTPUT_DATASET = 256, OPT_DESCENDING, OPT_FORCE, OPT_BACKEND, OPT_DEVICE_MEMORY,
       OPT_VERIFY, OPT_REPORT, OPT_PROGRESS, OPT_VERSION, OPT_CHECK, OPT_AGAINST,
       OPT_AGAINST_DATASET, OPT_CARRY, OPT_INDEX_OUT, OPT_STABLE, OPT_KEY_FIELD, OPT_EXCHANGE,
       OPT_IO_THREADS, OPT_LAYOUT, OPT_CHUNK, OPT_COMPRESS, OPT_WHOLE_FILE, OPT_KEY_COLUMN,
       OPT_ORDER, OPT_TOP, OPT_UNIQUE, OPT_COUNTS, OPT_PLAN, OPT_HOST_MEMORY };

/* Index of `arg` among three option words, -1 if none. */
static int word_index(const char *arg, const char *const words[3]) {
  for (int i = 0; i < 3; i++)
    if (strcmp(arg, words[i]) == 0) return i;
  return -1;
}

int h5g_options_moves_records(const h5g_options *opt) {
  return opt->ncarry > 0 || opt->index_out != NULL || opt->key_field != NULL || opt->nkey_columns > 0;
}

int h5g_options_key_count(const h5g_options *opt) {
  if (opt->ndatasets > 1) return opt->ndatasets;
  if (opt->nkey_fields) return opt->nkey_fields;
  return opt->nkey_columns ? opt->nkey_columns : 1;
}

h5g_key_source h5g_options_key(const h5g_options *opt, int i) {
  h5g_key_source k = {opt->ndatasets > 1 ? opt->datasets[i] : opt->dataset,
                      opt->nkey_fields ? opt->key_fields[i] : NULL,
                      opt->nkey_columns ? opt->key_columns[i] : -1,
                      opt->norder ? opt->key_descending[i] : opt->descending};
  return k;
}

const char *h5g_options_key_output(const h5g_options *opt, int i) {
  return opt->ndatasets > 1 ? opt->datasets[i] : opt->output_dataset;
}

int h5g_options_composed(const h5g_options *opt) {
  return h5g_options_key_count(opt) > 1 || opt->nkey_columns || opt->nkey_fields || opt->unique;
}

char *h5g_options_carry_target(const h5g_options *opt, const char *path) {
  char *target = NULL;
  if (strcmp(opt->output_dataset, opt->dataset) == 0) return strdup(path);
  const char *group_end = strrchr(opt->output_dataset, '/');
  const char *base = strrchr(path, '/');
  size_t group = (size_t)(group_end - opt->output_dataset), len = group + strlen(base) + 1;
  if ((target = malloc(len)) == NULL) return NULL;
  memcpy(target, opt->output_dataset, group);
  memcpy(target + group, base, strlen(base) + 1);
  return target;
}

int h5g_options_written(const h5g_options *opt, const char **written, char **targets,
                        int *count) {
  int rc = H5G_OK, n = 0;
  memset(targets, 0, H5G_MAX_CARRY * sizeof *targets);
  written[n++] = opt->output_dataset;
  for (int i = 1; i < opt->ndatasets; i++) written[n++] = opt->datasets[i];
  if (opt->index_out) written[n++] = opt->index_out;
  if (opt->counts) written[n++] = opt->counts;
  for (int i = 0; i < opt->ncarry; i++) {
    targets[i] = h5g_options_carry_target(opt, opt->carry[i]);
    CHECK_ALLOC(targets[i], strlen(opt->carry[i]) + strlen(opt->output_dataset) + 1);
    written[n++] = targets[i];
  }
done:
  *count = n;
  return rc;
}

void h5g_options_usage(FILE *out) {
  fputs("usage: mpiexec -n P h5gsort [OPTIONS] INPUT.h5 OUTPUT.h5 -d /path/to/keys [-d ...]\n"
        "       mpiexec -n P h5gsort --check FILE.h5 -d /path [--against INPUT.h5\n"
        "                            [--against-dataset /path]] [--descending]\n"
        "\n"
        "Sorts a 1-D integer or float HDF5 dataset across MPI ranks (one GPU per rank when\n"
        "available) and writes one globally sorted dataset.\n"
        "\n"
        "  -d, --dataset PATH         key dataset in INPUT (required); give it several times to\n"
        "                             sort by several keys, in priority order (the first is\n"
        "                             the primary key), each written permuted at its own path\n"
        "      --output-dataset PATH  dataset path in OUTPUT (default: same as --dataset; one\n"
        "                             -d only)\n"
        "      --descending           exact reverse of the ascending order (every key)\n"
        "      --order asc|desc[,...] one direction per key (per -d, --key-field field or\n"
        "                             --key-column column); a descending key puts NaNs first\n"
        "      --force                replace OUTPUT if it exists; OUTPUT may equal INPUT\n"
        "      --backend auto|cuda|cpu  auto: the GPU when one is visible, else the CPU\n"
        "      --exchange auto|mpi|nccl  how ranks exchange keys (auto: MPI, measured faster;\n"
        "                             nccl: between GPUs, one GPU per rank)\n"
        "      --device-memory SIZE   working-memory cap per rank, e.g. 512M (larger slices\n"
        "                             are sorted in chunks)\n"
        "      --host-memory SIZE     host memory the job may use on each node (default: its\n"
        "                             cgroup limit, or MemAvailable)\n"
        "      --plan                 validate, print the memory, disk and plan per rank, stop\n"
        "      --io-threads N         host threads per rank for file I/O (default: the CPUs\n"
        "                             this rank may run on)\n"
        "      --verify               re-check order, count and checksum after writing\n"
        "      --report FILE.json     per-phase timings and sizes as JSON\n"
        "      --carry PATH[,PATH]    datasets with one row per key (any integer or float\n"
        "                             type, 1-D or N-D) written permuted like the keys\n"
        "      --index-out PATH       write the uint64 source index of every output key\n"
        "      --key-field NAME[,NAME]  sort a compound (table) dataset by these numeric fields,\n"
        "                             in priority order, moving whole records\n"
        "      --key-column J[,J]     sort the rows of a 2-D dataset (N x M) by these columns\n"
        "                             (0-based), in priority order, moving whole rows\n"
        "      --top K                write only the first K elements of the sorted order\n"
        "                             (every written dataset cut to K rows), found by exact\n"
        "                             selection: only those K are exchanged and written\n"
        "                             (with --unique, or keys over 16 bytes, after a full sort)\n"
        "      --unique               one element per distinct key (key tuple), the earliest\n"
        "                             in the input; -0.0 equals +0.0, all NaNs are one value\n"
        "      --counts PATH          with --unique: the uint64 count of each kept key\n"
        "      --stable               equal keys keep their input order (always the case\n"
        "                             when records move)\n"
        "      --layout keep|contiguous|chunked  output storage (default keep: the input's\n"
        "                             layout, chunk length and filters, like h5repack;\n"
        "                             contiguous or compact input gives contiguous output)\n"
        "      --chunk ROWS           chunk length in rows (implies chunked)\n"
        "      --compress keep|none|gzip[=L]  filters: the input's, none (chunking kept), or\n"
        "                             shuffle + deflate level L (0-9, default 6; implies chunked)\n"
        "      --whole-file           OUTPUT is a copy of INPUT with the sorted dataset(s)\n"
        "                             replaced (without it, root and group attributes on\n"
        "                             the written paths are still copied)\n"
        "      --check                verify-only: FILE's dataset is in order; with --against,\n"
        "                             it holds the same keys as INPUT's (count and checksum)\n"
        "  -q, --quiet                print nothing but errors\n"
        "  -v, --verbose              print a summary and error origins\n"
        "      --progress             rank 0 prints each phase to stderr once it is over (bytes,\n"
        "                             seconds, rate); on a terminal also the one under way\n"
        "  -h, --help                 this text\n"
        "      --version              print the version\n"
        "\n"
        "Exit codes: 0 success, 2 usage or input error, 1 runtime failure.\n",
        out);
}

/* An absolute HDF5 path resolved lexically, in place, as os.path.normpath would: empty and "."
 * components dropped, ".." takes away the component before it ("/.." is "/"). HDF5 itself would
 * look for links named "." and "..", and create a group named ".." for an output path. */
static void normalize_path(char *path) {
  char *out = path;
  const char *in = path;
  if (path[0] != '/') return; /* refused later as not absolute */
  while (*in) {
    while (*in == '/') in++;
    const char *end = strchr(in, '/');
    size_t len = end ? (size_t)(end - in) : strlen(in);
    if (len == 0 || (len == 1 && in[0] == '.')) {
      /* nothing */
    } else if (len == 2 && in[0] == '.' && in[1] == '.') {
      while (out > path && *--out != '/') {}
    } else {
      *out++ = '/';
      memmove(out, in, len);
      out += len;
    }
    in += len;
  }
  if (out == path) *out++ = '/';
  *out = '\0';
}

/* --compress keep|none|gzip[=LEVEL] */
static int parse_compress(const char *arg, h5g_io_storage_choice *storage) {
  int rc = H5G_OK;
  static const char *const words[] = {"keep", "none", "gzip"}; /* h5g_compress_choice order */
  int which = word_index(arg, words);
  storage->gzip_level = which == H5G_COMPRESS_GZIP ? 6 : 0; /* 6: zlib's own default */
  if (which < 0 && strncmp(arg, "gzip=", 5) == 0) {
    if (arg[5] < '0' || arg[5] > '9' || arg[6] != '\0')
      H5G_FAIL(H5G_ERR_USAGE, "--compress gzip takes a level from 0 to 9, not '%s'", arg + 5);
    which = H5G_COMPRESS_GZIP;
    storage->gzip_level = arg[5] - '0';
  }
  if (which < 0)
    H5G_FAIL(H5G_ERR_USAGE, "--compress takes keep, none or gzip[=0-9], not '%s'", arg);
  storage->compress = (h5g_compress_choice)which;
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

/* --key-column J[,J2...]: 0-based column numbers. */
static int parse_columns(char *arg, h5g_options *opt) {
  int rc = H5G_OK;
  const char *items[H5G_MAX_KEYS];
  int count = 0;
  CHECK(split_list(arg, "--key-column", "column numbers", items, H5G_MAX_KEYS, &count));
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
static int parse_order(char *arg, h5g_options *opt) {
  int rc = H5G_OK;
  const char *items[H5G_MAX_KEYS];
  int count = 0;
  CHECK(split_list(arg, "--order", "directions", items, H5G_MAX_KEYS, &count));
  for (int i = 0; i < count; i++) {
    if (strcmp(items[i], "asc") != 0 && strcmp(items[i], "desc") != 0)
      H5G_FAIL(H5G_ERR_USAGE, "--order takes asc or desc for each key, not '%s'", items[i]);
    opt->key_descending[i] = strcmp(items[i], "desc") == 0;
  }
  opt->norder = count;
done:
  return rc;
}

/* The keys: where they come from (several -d, or the fields or columns of one), and one direction
 * for each. */
static int check_keys(h5g_options *opt) {
  int rc = H5G_OK;
  int nkeys = h5g_options_key_count(opt);
  if (opt->ndatasets > 1 && (opt->nkey_fields || opt->nkey_columns))
    H5G_FAIL(H5G_ERR_USAGE, "several -d do not go with --key-field or --key-column: give the "
             "fields or columns of one dataset");
  if (opt->nkey_fields && opt->nkey_columns)
    H5G_FAIL(H5G_ERR_USAGE, "--key-field (a compound table) and --key-column (a 2-D dataset) do "
             "not go together");
  if (opt->ndatasets > 1 && opt->output_dataset)
    H5G_FAIL(H5G_ERR_USAGE, "--output-dataset goes with one -d: with several, each key is "
             "written at its own path");
  if (opt->norder && opt->descending)
    H5G_FAIL(H5G_ERR_USAGE, "give --order or --descending, not both");
  if (opt->norder && opt->norder != nkeys)
    H5G_FAIL(H5G_ERR_USAGE, "--order gives %d direction%s for %d key%s: give one per key",
             opt->norder, opt->norder == 1 ? "" : "s", nkeys, nkeys == 1 ? "" : "s");
  for (int i = 0; i < nkeys; i++) {
    h5g_key_source k = h5g_options_key(opt, i);
    if (k.dataset[0] != '/' || strcmp(k.dataset, "/") == 0)
      H5G_FAIL(H5G_ERR_USAGE, "dataset path must be absolute and name a dataset, not '%s'",
               k.dataset);
    for (int j = 0; j < i; j++) {
      h5g_key_source o = h5g_options_key(opt, j);
      if (strcmp(k.dataset, o.dataset) == 0 && k.column == o.column &&
          (k.field == o.field || (k.field && o.field && strcmp(k.field, o.field) == 0)))
        H5G_FAIL(H5G_ERR_USAGE, "key %d repeats key %d (%s%s%s): give each key once", i + 1, j + 1,
                 k.dataset, k.field ? " field " : "", k.field ? k.field : "");
    }
  }
  /* one key, in a direction of its own: the single-key sort's --descending */
  if (opt->norder && nkeys == 1) opt->descending = opt->key_descending[0];
done:
  return rc;
}

/* Storage options that contradict each other, and output options with --check. */
static int check_storage(const h5g_options *opt) {
  int rc = H5G_OK;
  const h5g_io_storage_choice *s = &opt->storage;
  if (s->layout == H5G_LAYOUT_CONTIGUOUS && s->compress == H5G_COMPRESS_GZIP)
    H5G_FAIL(H5G_ERR_USAGE, "--compress gzip needs chunked storage, not --layout contiguous");
  if (s->layout == H5G_LAYOUT_CONTIGUOUS && s->chunk_rows)
    H5G_FAIL(H5G_ERR_USAGE, "--chunk needs chunked storage, not --layout contiguous");
  if (opt->check && (opt->whole_file || s->layout != H5G_LAYOUT_KEEP || s->chunk_rows ||
                     s->compress != H5G_COMPRESS_KEEP))
    H5G_FAIL(H5G_ERR_USAGE, "--layout, --chunk, --compress and --whole-file do not go with --check");
done:
  return rc;
}

int h5g_options_parse(int argc, char **argv, h5g_options *opt) {
  int rc = H5G_OK, nwritten = 0;
  const char *written[H5G_MAX_WRITTEN];
  char *targets[H5G_MAX_CARRY] = {0};
  static const struct option longs[] = {
      {"dataset", required_argument, NULL, 'd'},
      {"output-dataset", required_argument, NULL, OPT_OUTPUT_DATASET},
      {"descending", no_argument, NULL, OPT_DESCENDING},
      {"force", no_argument, NULL, OPT_FORCE},
      {"backend", required_argument, NULL, OPT_BACKEND},
      {"exchange", required_argument, NULL, OPT_EXCHANGE},
      {"device-memory", required_argument, NULL, OPT_DEVICE_MEMORY},
      {"host-memory", required_argument, NULL, OPT_HOST_MEMORY},
      {"plan", no_argument, NULL, OPT_PLAN},
      {"verify", no_argument, NULL, OPT_VERIFY},
      {"report", required_argument, NULL, OPT_REPORT},
      {"quiet", no_argument, NULL, 'q'},
      {"verbose", no_argument, NULL, 'v'},
      {"progress", no_argument, NULL, OPT_PROGRESS},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, OPT_VERSION},
      {"check", no_argument, NULL, OPT_CHECK},
      {"carry", required_argument, NULL, OPT_CARRY},
      {"index-out", required_argument, NULL, OPT_INDEX_OUT},
      {"stable", no_argument, NULL, OPT_STABLE},
      {"key-field", required_argument, NULL, OPT_KEY_FIELD},
      {"against", required_argument, NULL, OPT_AGAINST},
      {"against-dataset", required_argument, NULL, OPT_AGAINST_DATASET},
      {"io-threads", required_argument, NULL, OPT_IO_THREADS},
      {"layout", required_argument, NULL, OPT_LAYOUT},
      {"chunk", required_argument, NULL, OPT_CHUNK},
      {"compress", required_argument, NULL, OPT_COMPRESS},
      {"whole-file", no_argument, NULL, OPT_WHOLE_FILE},
      {"key-column", required_argument, NULL, OPT_KEY_COLUMN},
      {"order", required_argument, NULL, OPT_ORDER},
      {"top", required_argument, NULL, OPT_TOP},
      {"unique", no_argument, NULL, OPT_UNIQUE},
      {"counts", required_argument, NULL, OPT_COUNTS},
      {NULL, 0, NULL, 0}};
  memset(opt, 0, sizeof *opt);
  opt->top = -1;
  opt->argc = argc;
  opt->argv = (const char *const *)argv;
  opterr = 0; /* errors are reported once, by rank 0, in our own words */
  optind = 0; /* glibc: 0 also resets its place inside a cluster of short options, so a second
                parse in one process starts clean */
  int c;
  while ((c = getopt_long(argc, argv, ":d:qvh", longs, NULL)) != -1) {
    switch (c) {
    case 'd':
      if (opt->ndatasets == H5G_MAX_KEYS)
        H5G_FAIL(H5G_ERR_USAGE, "at most %d keys (-d) can be given", H5G_MAX_KEYS);
      normalize_path(optarg);
      opt->datasets[opt->ndatasets++] = optarg;
      opt->dataset = opt->datasets[0];
      break;
    case OPT_OUTPUT_DATASET:
      normalize_path(optarg);
      opt->output_dataset = optarg;
      break;
    case OPT_DESCENDING: opt->descending = 1; break;
    case OPT_FORCE: opt->force = 1; break;
    case OPT_BACKEND: {
      static const char *const words[] = {"auto", "cuda", "cpu"}; /* h5g_backend_choice order */
      int which = word_index(optarg, words);
      if (which < 0) H5G_FAIL(H5G_ERR_USAGE, "--backend takes auto, cuda or cpu, not '%s'", optarg);
      opt->backend = (h5g_backend_choice)which;
      break;
    }
    case OPT_EXCHANGE: {
      static const char *const words[] = {"auto", "mpi", "nccl"}; /* h5g_exchange_choice order */
      int which = word_index(optarg, words);
      if (which < 0) H5G_FAIL(H5G_ERR_USAGE, "--exchange takes auto, mpi or nccl, not '%s'", optarg);
      opt->exchange = (h5g_exchange_choice)which;
      break;
    }
    case OPT_DEVICE_MEMORY:
      if (h5g_parse_size(optarg, &opt->device_memory) != 0 || opt->device_memory == 0)
        H5G_FAIL(H5G_ERR_USAGE, "--device-memory takes a size such as 512M or 4G, not '%s'",
                 optarg);
      break;
    case OPT_IO_THREADS: {
      char *end = NULL;
      long threads = strtol(optarg, &end, 10);
      if (end == optarg || *end || threads < 1 || threads > 1024)
        H5G_FAIL(H5G_ERR_USAGE, "--io-threads takes a number of threads from 1 to 1024, not '%s'",
                 optarg);
      opt->io_threads = (int)threads;
      break;
    }
    case OPT_LAYOUT: {
      static const char *const words[] = {"keep", "contiguous", "chunked"}; /* h5g_layout_choice */
      int which = word_index(optarg, words);
      if (which < 0)
        H5G_FAIL(H5G_ERR_USAGE, "--layout takes keep, contiguous or chunked, not '%s'", optarg);
      opt->storage.layout = (h5g_layout_choice)which;
      break;
    }
    case OPT_CHUNK: {
      char *end = NULL;
      unsigned long long rows = optarg[0] >= '0' && optarg[0] <= '9' ? strtoull(optarg, &end, 10) : 0;
      if (!end || *end || rows == 0 || rows == ULLONG_MAX)
        H5G_FAIL(H5G_ERR_USAGE, "--chunk takes a number of rows from 1 up, not '%s'", optarg);
      opt->storage.chunk_rows = rows;
      break;
    }
    case OPT_COMPRESS: CHECK(parse_compress(optarg, &opt->storage)); break;
    case OPT_WHOLE_FILE: opt->whole_file = 1; break;
    case OPT_PLAN: opt->plan = 1; break;
    case OPT_HOST_MEMORY:
      if (h5g_parse_size(optarg, &opt->host_memory) != 0 || opt->host_memory == 0)
        H5G_FAIL(H5G_ERR_USAGE, "--host-memory takes a size such as 512M or 4G, not '%s'",
                 optarg);
      break;
    case OPT_VERIFY: opt->verify = 1; break;
    case OPT_REPORT: opt->report = optarg; break;
    case 'q': opt->quiet = 1; break;
    case 'v': opt->verbose = 1; break;
    case OPT_PROGRESS: opt->progress = 1; break;
    case 'h': opt->help = 1; break;
    case OPT_VERSION: opt->version = 1; break;
    case OPT_CHECK: opt->check = 1; break;
    case OPT_CARRY: {
      int first = opt->ncarry;
      CHECK(split_list(optarg, "--carry", "paths", opt->carry, H5G_MAX_CARRY, &opt->ncarry));
      for (int i = first; i < opt->ncarry; i++) {
        char *path = (char *)opt->carry[i];
        if (path[0] != '/') H5G_FAIL(H5G_ERR_USAGE, "--carry paths must be absolute, not '%s'", path);
        normalize_path(path);
        if (strcmp(path, "/") == 0) H5G_FAIL(H5G_ERR_USAGE, "--carry paths must name a dataset, not '/'");
      }
      break;
    }
    case OPT_INDEX_OUT:
      normalize_path(optarg);
      opt->index_out = optarg;
      break;
    case OPT_STABLE: opt->stable = 1; break;
    case OPT_KEY_FIELD:
      opt->nkey_fields = 0;
      CHECK(split_list(optarg, "--key-field", "field names", opt->key_fields, H5G_MAX_KEYS,
                       &opt->nkey_fields));
      opt->key_field = opt->key_fields[0];
      break;
    case OPT_KEY_COLUMN: CHECK(parse_columns(optarg, opt)); break;
    case OPT_ORDER: CHECK(parse_order(optarg, opt)); break;
    case OPT_TOP: {
      /* digits only; a K past any N (even past 2^63 - 1) keeps everything */
      size_t digits = strspn(optarg, "0123456789");
      if (!digits || optarg[digits])
        H5G_FAIL(H5G_ERR_USAGE, "--top takes a number of elements from 0 up, not '%s'", optarg);
      errno = 0;
      long long k = strtoll(optarg, NULL, 10);
      opt->top = errno == ERANGE ? LLONG_MAX : k;
      break;
    }
    case OPT_UNIQUE: opt->unique = 1; break;
    case OPT_COUNTS:
      normalize_path(optarg);
      opt->counts = optarg;
      break;
    case OPT_AGAINST: opt->against = optarg; break;
    case OPT_AGAINST_DATASET:
      normalize_path(optarg);
      opt->against_dataset = optarg;
      break;
    case ':': H5G_FAIL(H5G_ERR_USAGE, "option %s needs a value", argv[optind - 1]);
    default: H5G_FAIL(H5G_ERR_USAGE, "unknown option '%s' (see --help)", argv[optind - 1]);
    }
  }
  if (opt->help || opt->version) goto done;
  if (opt->check) {
    if (argc - optind != 1)
      H5G_FAIL(H5G_ERR_USAGE, "--check takes one file, got %d (see --help)", argc - optind);
    opt->input = argv[optind];
  } else if (opt->against || opt->against_dataset) {
    H5G_FAIL(H5G_ERR_USAGE, "--against goes with --check");
  } else if (argc - optind != 2) {
    H5G_FAIL(H5G_ERR_USAGE, "expected INPUT.h5 and OUTPUT.h5, got %d file argument%s (see --help)",
             argc - optind, argc - optind == 1 ? "" : "s");
  } else {
    opt->input = argv[optind];
    opt->output = argv[optind + 1];
  }
  if (!opt->dataset) H5G_FAIL(H5G_ERR_USAGE, "missing -d/--dataset PATH (see --help)");
  CHECK(check_keys(opt));
  if (!opt->output_dataset) opt->output_dataset = opt->dataset;
  if (opt->output_dataset[0] != '/' || strcmp(opt->output_dataset, "/") == 0)
    H5G_FAIL(H5G_ERR_USAGE, "output dataset path must be absolute and name a dataset, not '%s'",
             opt->output_dataset);
  if (!opt->against_dataset) opt->against_dataset = opt->dataset;
  if (opt->index_out && (opt->index_out[0] != '/' || strcmp(opt->index_out, "/") == 0 ||
                         strcmp(opt->index_out, opt->output_dataset) == 0))
    H5G_FAIL(H5G_ERR_USAGE, "--index-out needs an absolute path other than the output dataset");
  if (opt->check && (opt->ncarry || opt->index_out || opt->top >= 0 || opt->unique || opt->counts))
    H5G_FAIL(H5G_ERR_USAGE, "--carry, --index-out, --top, --unique and --counts do not go with "
             "--check");
  if (opt->counts && !opt->unique) H5G_FAIL(H5G_ERR_USAGE, "--counts goes with --unique");
  if (opt->counts && (opt->counts[0] != '/' || strcmp(opt->counts, "/") == 0))
    H5G_FAIL(H5G_ERR_USAGE, "--counts needs an absolute dataset path, not '%s'", opt->counts);
  CHECK(check_storage(opt));
  /* Every dataset the run writes needs a path of its own, none inside another. */
  for (int i = 0; i < opt->ncarry; i++)
    for (int k = 0; k < opt->ndatasets; k++)
      if (strcmp(opt->carry[i], opt->datasets[k]) == 0)
        H5G_FAIL(H5G_ERR_USAGE, "--carry %s names a key dataset", opt->carry[i]);
  CHECK(h5g_options_written(opt, written, targets, &nwritten));
  for (int i = 0; i < nwritten; i++)
    for (int j = 0; j < i; j++) {
      size_t li = strlen(written[i]), lj = strlen(written[j]);
      int same = strcmp(written[i], written[j]) == 0;
      int nested = (li > lj && strncmp(written[i], written[j], lj) == 0 && written[i][lj] == '/') ||
                   (lj > li && strncmp(written[j], written[i], li) == 0 && written[j][li] == '/');
      if (same || nested)
        H5G_FAIL(H5G_ERR_USAGE, "two outputs would land at %s and %s in OUTPUT: give each its own "
                 "path", written[j], written[i]);
    }
  if (opt->quiet && opt->verbose) opt->verbose = 0;
done:
  for (int i = 0; i < H5G_MAX_CARRY; i++) free(targets[i]);
  return rc;
}
