/* Phase "validate": rank 0 inspects the input, the output path and the carried datasets, then
 * every rank takes the verdict and its share of the keys. Bad input stops every rank here, before
 * any file is opened collectively. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "io/files.h"
#include "mpi/agree.h"
#include "mpi/topology.h"
#include "src/run.h"

void h5g_input_stamp(const struct stat *st, h5g_verdict *v) {
  v->input_size = (long long)st->st_size;
  v->input_mtime_sec = (long long)st->st_mtim.tv_sec;
  v->input_mtime_nsec = (long long)st->st_mtim.tv_nsec;
}

int h5g_validate(h5g_run *r) {
  int rc = H5G_OK;
  const h5g_options *opt = r->opt;
  h5g_verdict *v = &r->verdict;
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
  for (int i = 0; i < opt->ncarry; i++) CHECK(h5g_io_inspect_rows(opt->input, opt->carry[i], v->info.n));
  /* the output storage, resolved now so that chunks HDF5 cannot take stop the run before work */
  int carried_filtered = 0;
  for (int i = 0; i < opt->ndatasets; i++) {
    int filtered = 0;
    CHECK(h5g_io_inspect_storage(opt->input, opt->datasets[i], &opt->storage, 1, &filtered));
    v->keys_filtered |= filtered;
  }
  if (opt->index_out)
    CHECK(h5g_io_inspect_storage(opt->input, opt->dataset, &opt->storage, 0, &v->index_filtered));
  for (int i = 0; i < opt->ncarry; i++)
    CHECK(h5g_io_inspect_storage(opt->input, opt->carry[i], &opt->storage, 1, &carried_filtered));
  if (stat(opt->input, &input) != 0)
    H5G_FAIL(H5G_ERR_USAGE, "cannot stat the input: %s (%s)", strerror(errno), opt->input);
  if (opt->ncarry || opt->key_field || opt->nkey_columns ||
      (v->composed && h5g_keyset_by_index(&v->layout)))
    v->carried_bytes = (unsigned long long)input.st_size;
  h5g_input_stamp(&input, v);
  int stale = h5g_files_remove_stale(opt->output, opt->input);
  if (stale && opt->verbose)
    fprintf(stderr, "h5gsort: removed %d temporary file%s left by killed runs beside %s\n", stale,
            stale == 1 ? "" : "s", opt->output);
done:
  return rc;
}

/* Collective: the verdict to every rank, and what follows from it. */
int h5g_share_verdict(h5g_run *r) {
  int rc = H5G_OK;
  h5g_plan *plan = &r->plan;
  CHECK_MPI(MPI_Bcast(&r->verdict, (int)sizeof r->verdict, MPI_BYTE, 0, r->comm));
  uint64_t n = r->verdict.info.n;
  plan->ks.cls = r->verdict.info.cls;
  plan->ks.width = r->verdict.info.width;
  plan->ks.descending = r->verdict.composed ? 0 : r->opt->descending; /* composed: per key */
  /* --counts: the runs cut down before the exchange send their group sizes as values */
  plan->records = h5g_options_moves_records(r->opt) || r->opt->counts ||
                  (r->verdict.composed && h5g_keyset_by_index(&r->verdict.layout));
  plan->offset = h5g_share_begin((uint64_t)r->rank, n, (uint64_t)r->size);
  plan->n = h5g_share_begin((uint64_t)r->rank + 1, n, (uint64_t)r->size) - plan->offset;
  plan->out_offset = plan->offset;
  plan->out_n = plan->n;
  plan->out_total = n;
  plan->total = n;
done:
  return rc;
}
