/* The rules between h5gsort's options (src/option_table.h: h5g_options_check), in one place:
 * each option is parsed alone (src/option_table.c), then these decide whether they go together. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "src/option_table.h"

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

/* Every dataset the run writes needs a path of its own, none inside another. */
static int check_written(const h5g_options *opt) {
  int rc = H5G_OK, nwritten = 0;
  const char *written[H5G_MAX_WRITTEN];
  char *targets[H5G_MAX_CARRY] = {0};
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
done:
  for (int i = 0; i < H5G_MAX_CARRY; i++) free(targets[i]);
  return rc;
}

int h5g_options_check(h5g_options *opt) {
  int rc = H5G_OK;
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
  CHECK(check_written(opt));
  if (opt->quiet && opt->verbose) opt->verbose = 0;
done:
  return rc;
}
