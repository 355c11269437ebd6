#include "src/options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "src/option_table.h"

int h5g_options_moves_records(const h5g_options *opt) {
  return opt->ncarry > 0 || opt->index_out != NULL || opt->key_field != NULL ||
         opt->nkey_columns > 0;
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
                      opt->norder ? opt->key_descending[i] : opt->descending, opt->na_position};
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

/* getopt_long's tables, made from h5g_option_table: a long option returns 256 + its index. */
enum { LONG_BASE = 256 };
static void getopt_tables(struct option *longs, char *shorts) {
  char *s = shorts;
  *s++ = ':'; /* a missing value returns ':' */
  for (int i = 0; i < h5g_option_count; i++) {
    const h5g_option_spec *o = &h5g_option_table[i];
    int has = h5g_option_value_optional(o) ? optional_argument
              : o->value                   ? required_argument
                                           : no_argument;
    longs[i] = (struct option){o->name, has, NULL, LONG_BASE + i};
    if (o->short_name) {
      *s++ = o->short_name;
      if (o->value) *s++ = ':';
      if (has == optional_argument) *s++ = ':';
    }
  }
  longs[h5g_option_count] = (struct option){NULL, 0, NULL, 0};
  *s = '\0';
}

/* The table's index of what getopt_long returned, -1 for none. */
static int option_index(int c) {
  if (c >= LONG_BASE && c < LONG_BASE + h5g_option_count) return c - LONG_BASE;
  for (int i = 0; c > 0 && i < h5g_option_count; i++)
    if (h5g_option_table[i].short_name == c) return i;
  return -1;
}

/* How many long options `arg` ("--pre[=value]") is a prefix of: getopt_long refuses a prefix of
 * several, as it refuses an unknown option. */
static int prefix_matches(const char *arg) {
  if (strncmp(arg, "--", 2) != 0) return 0;
  size_t len = strcspn(arg + 2, "=");
  int count = 0;
  for (int i = 0; i < h5g_option_count; i++)
    count += strncmp(h5g_option_table[i].name, arg + 2, len) == 0;
  return count;
}

int h5g_options_parse(int argc, char **argv, h5g_options *opt) {
  int rc = H5G_OK;
  struct option longs[64];
  char shorts[2 * 64 + 2];
  if (h5g_option_count >= 64) H5G_FAIL(H5G_ERR_RUNTIME, "the option table outgrew the parser");
  getopt_tables(longs, shorts);
  memset(opt, 0, sizeof *opt);
  opt->top = -1;
  opt->argc = argc;
  opt->argv = (const char *const *)argv;
  opterr = 0; /* errors are reported once, by rank 0, in our own words */
  optind = 0; /* glibc: 0 also resets its place inside a cluster of short options, so a second
                parse in one process starts clean */
  int c;
  while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
    int i = option_index(c);
    if (c == ':') H5G_FAIL(H5G_ERR_USAGE, "option %s needs a value", argv[optind - 1]);
    if (i < 0 && prefix_matches(argv[optind - 1]) > 1)
      H5G_FAIL(H5G_ERR_USAGE, "ambiguous option '%s': it begins several long options; give more "
               "of it (see --help)", argv[optind - 1]);
    if (i < 0) H5G_FAIL(H5G_ERR_USAGE, "unknown option '%s' (see --help)", argv[optind - 1]);
    CHECK(h5g_option_table[i].set(opt, optarg));
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
  CHECK(h5g_options_check(opt));
done:
  return rc;
}
