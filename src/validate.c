/* Phase "validate": rank 0 inspects the input, the output path and the carried datasets, then
 * every rank takes the verdict and its share of the keys. Bad input stops every rank here, before
 * any file is opened collectively. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/topology.h"
#include "src/carry.h"
#include "src/validate.h"

void h5g_input_stamp(const struct stat *st, h5g_verdict *v) {
  v->input_size = (long long)st->st_size;
  v->input_mtime_sec = (long long)st->st_mtim.tv_sec;
  v->input_mtime_nsec = (long long)st->st_mtim.tv_nsec;
}

/* The output storage of every dataset written, resolved now so that chunks HDF5 cannot take stop
 * the run before work; where OUTPUT starts as a copy of INPUT, also where each lands in it
 * (io/h5io.h: h5g_io_inspect_storage); carried_row_bytes[i]: carried dataset i's row, as
 * inspected once before. */
static int check_storage(const h5g_options *opt, const uint64_t *carried_row_bytes,
                         h5g_verdict *v) {
  int rc = H5G_OK, filtered = 0;
  char *target = NULL;
  uint64_t rows = opt->top >= 0 && (uint64_t)opt->top < v->info.n ? (uint64_t)opt->top : v->info.n;
  h5g_io_target in_copy = {NULL, rows, opt->unique}, *at = NULL;
  if (v->in_place || opt->whole_file) at = &in_copy;
  for (int i = 0; i < opt->ndatasets; i++) {
    in_copy.path = h5g_options_key_output(opt, i);
    CHECK(h5g_io_inspect_storage(opt->input, opt->datasets[i], &opt->storage, 1, at, &filtered));
    v->keys_filtered |= filtered;
    /* a table's or a 2-D dataset's whole rows, else each key dataset's keys */
    if (filtered) v->filtered_row_bytes += v->composed && !opt->key_field && !opt->nkey_columns
                                              ? v->layout.key[i].width
                                              : v->info.row_bytes;
  }
  in_copy.path = opt->index_out;
  if (opt->index_out)
    CHECK(h5g_io_inspect_storage(opt->input, opt->dataset, &opt->storage, 0, at,
                                 &v->index_filtered));
  if (v->index_filtered) v->filtered_row_bytes += sizeof(uint64_t);
  in_copy.path = opt->counts;
  if (opt->counts)
    CHECK(h5g_io_inspect_storage(opt->input, opt->dataset, &opt->storage, 0, at, &filtered));
  if (opt->counts && filtered) v->filtered_row_bytes += sizeof(uint64_t);
  for (int i = 0; i < opt->ncarry; i++) {
    free(target);
    target = h5g_options_carry_target(opt, opt->carry[i]);
    CHECK_ALLOC(target, strlen(opt->carry[i]) + 1);
    in_copy.path = target;
    CHECK(h5g_io_inspect_storage(opt->input, opt->carry[i], &opt->storage, 1, at, &filtered));
    if (filtered) v->filtered_row_bytes += carried_row_bytes[i];
  }
done:
  free(target);
  return rc;
}

/* No path the run writes is a file an input dataset's data lie in (an external link's target,
 * a virtual dataset's source): OUTPUT (unless in place, where INPUT is OUTPUT), the report and
 * the temporary file. */
static int check_sources(const h5g_options *opt, const h5g_verdict *v) {
  int rc = H5G_OK;
  const char *written[] = {v->in_place ? NULL : opt->output, opt->report, v->tmp_path};
  for (int i = 0; i < opt->ndatasets; i++)
    CHECK(h5g_io_inspect_sources(opt->input, opt->datasets[i], written, 3));
  for (int i = 0; i < opt->ncarry; i++)
    CHECK(h5g_io_inspect_sources(opt->input, opt->carry[i], written, 3));
done:
  return rc;
}

/* Lines that name the datasets left in the input's order (-v: every one). */
enum { UNMOVED_LINES = 8 };

typedef struct {
  const h5g_options *opt;
  int seen;
} unmoved_warnings;

static void warn_unmoved(void *ctx, const char *path, int coordinate) {
  unmoved_warnings *w = ctx;
  if (w->seen++ >= UNMOVED_LINES && !w->opt->verbose) return;
  if (coordinate)
    fprintf(stderr, "h5gsort: warning: the coordinate %s of %s (a dimension scale of its rows) is "
            "not carried: its values stay in the input's order in OUTPUT (--carry %s moves it "
            "with the keys)\n", path, w->opt->dataset, path);
  else
    fprintf(stderr, "h5gsort: warning: %s has as many rows as the keys but is not carried: it "
            "stays in the input's order in OUTPUT (--carry %s moves it with the keys)\n", path,
            path);
}

/* --whole-file and in place, where OUTPUT starts as a copy of INPUT: the datasets of the keys'
 * length that the run does not move stay beside the sorted keys in the input's order, which
 * nothing else would tell (a new OUTPUT holds only what is moved). */
static int warn_unmoved_datasets(const h5g_options *opt, const h5g_verdict *v) {
  int rc = H5G_OK, nwritten = 0, count = 0;
  const char *written[H5G_MAX_WRITTEN], *moved[H5G_MAX_WRITTEN + H5G_MAX_KEYS + H5G_MAX_CARRY];
  char *targets[H5G_MAX_CARRY] = {0};
  unmoved_warnings w = {opt, 0};
  /* one row or none: every order is the sorted one */
  if (opt->quiet || !(v->in_place || opt->whole_file) || v->info.n < 2) goto done;
  CHECK(h5g_options_written(opt, written, targets, &nwritten));
  for (int i = 0; i < nwritten; i++) moved[count++] = written[i];
  for (int i = 0; i < opt->ndatasets; i++) moved[count++] = opt->datasets[i];
  for (int i = 0; i < opt->ncarry; i++) moved[count++] = opt->carry[i];
  CHECK(h5g_io_inspect_unmoved(opt->input, opt->dataset, v->info.n, moved, count, warn_unmoved,
                               &w));
  if (w.seen > UNMOVED_LINES && !opt->verbose)
    fprintf(stderr, "h5gsort: warning: and %d more datasets of the keys' length stay in the "
            "input's order (-v names them)\n", w.seen - UNMOVED_LINES);
done:
  for (int i = 0; i < H5G_MAX_CARRY; i++) free(targets[i]);
  return rc;
}

int h5g_validate(const h5g_run *r, h5g_verdict *v) {
  int rc = H5G_OK;
  const h5g_options *opt = r->opt;
  struct stat input;
  if (r->rank != 0) goto done;
  /* the paths the run writes first: none may be an input, whatever happens next (a run that
   * fails at run time writes its report) */
  CHECK(h5g_files_check_output(opt->input, opt->output, opt->force, &v->in_place));
  if (opt->report) CHECK(h5g_files_check_report(opt->report, opt->input, opt->output));
  CHECK(h5g_files_temp_name(opt->output, v->tmp_path, sizeof v->tmp_path));
  CHECK(h5g_files_check_temp(v->tmp_path, opt->input));
  v->composed = h5g_options_composed(opt);
  if (v->composed)
    CHECK(h5g_keyset_inspect(opt, opt->input, &v->layout, &v->info));
  else
    CHECK(h5g_io_inspect(opt->input, opt->dataset, opt->key_field, -1, &v->info));
  /* the widest row moved by source index: a carried dataset's or batch's, a table's, a 2-D
   * dataset's */
  v->moved_row_bytes = opt->key_field || opt->nkey_columns ? v->layout.key[0].row_bytes : 0;
  if (v->composed && !opt->key_field && !opt->nkey_columns)
    for (int i = 0; i < v->layout.count; i++)
      if (h5g_keyset_fetched(&v->layout, i) && v->layout.key[i].width > v->moved_row_bytes)
        v->moved_row_bytes = v->layout.key[i].width;
  for (int i = 0; i < opt->ncarry; i++)
    CHECK(h5g_io_inspect_rows(opt->input, opt->carry[i], v->info.n, &v->carried_row_bytes[i]));
  for (int i = 0, n; i < opt->ncarry; i += n) { /* the batches src/carry.c moves them in */
    uint64_t bytes = 0;
    n = h5g_carry_batch(v->carried_row_bytes, opt->ncarry, i);
    for (int j = i; j < i + n; j++) bytes += v->carried_row_bytes[j];
    if (bytes > v->moved_row_bytes) v->moved_row_bytes = bytes;
  }
  CHECK(check_storage(opt, v->carried_row_bytes, v));
  CHECK(check_sources(opt, v));
  /* whole records move as bytes: into a new OUTPUT only where they hold no references */
  if ((opt->key_field || opt->nkey_columns) && !v->in_place && !opt->whole_file)
    CHECK(h5g_io_inspect_no_references(opt->input, opt->dataset));
  if (stat(opt->input, &input) != 0)
    H5G_FAIL(H5G_ERR_USAGE, "cannot stat the input: %s (%s)", strerror(errno), opt->input);
  if (opt->ncarry || opt->key_field || opt->nkey_columns ||
      (v->composed && h5g_keyset_by_index(&v->layout)))
    v->carried_bytes = (unsigned long long)input.st_size;
  h5g_input_stamp(&input, v);
  CHECK(warn_unmoved_datasets(opt, v));
  int stale = opt->plan ? 0 : h5g_files_remove_stale(opt->output, opt->input); /* --plan: nothing */
  if (stale && opt->verbose)
    fprintf(stderr, "h5gsort: removed %d temporary file%s left by killed runs beside %s\n", stale,
            stale == 1 ? "" : "s", opt->output);
done:
  return rc;
}

/* Collective: the verdict to every rank, and the extent of the output before --top or --unique
 * cut it. */
int h5g_share_verdict(const h5g_run *r, h5g_verdict *v, h5g_extent *extent) {
  int rc = H5G_OK;
  CHECK_MPI(MPI_Bcast(v, (int)sizeof *v, MPI_BYTE, 0, r->comm));
  uint64_t n = v->info.n, offset = h5g_share_begin((uint64_t)r->rank, n, (uint64_t)r->size);
  uint64_t mine = h5g_share_begin((uint64_t)r->rank + 1, n, (uint64_t)r->size) - offset;
  *extent = (h5g_extent){n, offset, mine, n};
done:
  return rc;
}
