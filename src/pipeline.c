/* The h5gsort pipeline on each rank (README "Architecture"): validate, plan, read and sort the
 * runs, exact splitters, exchange, merge, write to a temporary file, carry, verify, commit. The
 * phases live in files of their own (src/run.h); this file only orders them. Every step ends in
 * an agreement, so an error on one rank reaches every rank before the next collective call. */
#include "src/pipeline.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "mpi/agree.h"
#include "mpi/splitters.h"
#include "mpi/topology.h"
#include "src/interrupt.h"
#include "src/run.h"

/* The bytes of the whole job a phase moves, for --progress (0: none to tell). */
static uint64_t phase_bytes(const h5g_run *r, h5g_phase phase) {
  uint64_t keys = r->verdict.info.n * r->plan.ks.width;
  switch (phase) {
  case H5G_PHASE_READ: case H5G_PHASE_TRANSFORM: case H5G_PHASE_SORT: case H5G_PHASE_MERGE:
    return keys;
  case H5G_PHASE_WRITE: return r->extent.out_total * r->plan.ks.width; /* --top, --unique: fewer */
  default: return 0;
  }
}

void h5g_step_begin(h5g_run *r, h5g_phase phase) {
  if (r->rank == 0)
    h5g_progress_phase(&r->progress, phase, r->metrics.seconds, phase_bytes(r, phase));
  h5g_fault_point(r, h5g_phase_name(phase));
  r->step_start = MPI_Wtime();
}

int h5g_step_end(h5g_run *r, h5g_phase phase, int status) {
  int rc = h5g_agree(r->comm, status);
  r->metrics.seconds[phase] += MPI_Wtime() - r->step_start;
  return rc;
}

/* Collective: this rank's GPU context starts being made in the background, so that it is ready
 * when "setup" needs it; meanwhile rank 0 inspects the input and the plan is made. Not with
 * --backend cpu; with auto it may be made on a GPU that the plan then leaves unused. */
static int start_context(h5g_run *r) {
  int rc = H5G_OK, local_rank = 0, local_size = 1;
  if (r->opt->backend == H5G_BACKEND_CPU) goto done;
  CHECK(h5g_local_rank(r->comm, &local_rank, &local_size));
  CHECK(h5g_cuda_warmup_start(local_rank, &r->warmup));
done:
  return rc;
}

/* The GPU context is made (or could not be: an error only when the plan uses the GPU). */
static int join_context(h5g_run *r) {
  double start = MPI_Wtime();
  int rc = h5g_cuda_warmup_finish(r->warmup, r->plan.use_cuda, &r->metrics.startup.context);
  r->warmup = NULL;
  r->metrics.startup.context_waited = MPI_Wtime() - start;
  return rc;
}

/* Read every run (a later pass of keys of several words: hand it over from the slice buffer);
 * on the device paths the GPU sorts run j while run j + 1 is read, once the slice buffer is
 * pinned (the runs read before are handed over then). */
static int read_and_sort(h5g_run *r, int first_pass) {
  int rc = H5G_OK;
  const h5g_plan *plan = &r->plan;
  if (first_pass) {
    STEP(r, H5G_PHASE_READ, h5g_read_open_file(r));
    STEP(r, H5G_PHASE_READ, h5g_read_open_keys(r));
  }
  CHECK(h5g_read_runs(r, r->word, first_pass)); /* its steps agreed */
  STEP(r, H5G_PHASE_BUFFERS, h5g_buffers_wait_all(r->data.set)); /* what the read did not hide */
  if (plan->path == H5G_PATH_HOST) {
    STEP(r, H5G_PHASE_TRANSFORM, r->be->transform(r->be, r->data.keys, plan->n, &plan->ks, 0));
    STEP(r, H5G_PHASE_SORT, h5g_sort_runs(r));
  } else if (!plan->sort_is_output) {
    STEP(r, H5G_PHASE_SORT, h5g_sort_wait_runs(r)); /* the host cuts or merges them */
  }
done:
  return rc;
}

/* The sorted runs of every rank become each rank's sorted share of the output. */
static int split_exchange_merge(h5g_run *r) {
  int rc = H5G_OK;
  const h5g_plan *plan = &r->plan;
  if (r->size == 1) {
    STEP(r, H5G_PHASE_MERGE, h5g_merge_local(r));
    goto done;
  }
  STEP(r, H5G_PHASE_CONNECT, h5g_transport_wait(r->transport)); /* what the read did not hide */
  /* top K distinct: after the sort, by h5g_top_keep; keys of several words: in the last pass */
  if (r->opt->top >= 0 && !r->opt->unique && r->word == 0)
    STEP(r, H5G_PHASE_SPLITTERS, h5g_top_cuts(r));
  else
    STEP(r, H5G_PHASE_SPLITTERS, h5g_exact_cuts(r->comm, r->data.keys, plan->ks.width,
                                                r->data.runs, plan->nruns, r->extent.total,
                                                r->data.cuts));
  CHECK(h5g_agree(r->comm, h5g_exchange_runs(r)));
  STEP(r, H5G_PHASE_MERGE, h5g_merge_received(r));
done:
  return rc;
}

/* Every pass (one, unless the keys take several composed words: src/passes.c) sorts the slice
 * into this rank's share of the output. */
static int sort_passes(h5g_run *r) {
  int rc = H5G_OK;
  int words = r->verdict.composed ? r->verdict.layout.words : 1;
  for (r->word = words - 1; r->word >= 0; r->word--) {
    if (r->word < words - 1) CHECK(h5g_agree(r->comm, h5g_passes_next(r, r->word)));
    CHECK(h5g_agree(r->comm, read_and_sort(r, r->word == words - 1)));
    if (r->word == 0) STEP(r, H5G_PHASE_SORT, h5g_unique_runs(r));
    CHECK(h5g_agree(r->comm, split_exchange_merge(r)));
  }
  r->word = 0;
  if (words > 1) CHECK(h5g_agree(r->comm, h5g_passes_finish(r)));
  if (r->opt->verify) STEP(r, H5G_PHASE_VERIFY, h5g_read_checksum(r));
done:
  return rc;
}

/* The host buffers' unpinning, begun before the write, is over (the report tells how long it
 * took and how much of it the write did not hide). */
static int wait_unpinned(h5g_run *r) {
  double start = MPI_Wtime();
  r->metrics.teardown.unpin = h5g_buffers_unpin_wait(r->data.set);
  r->metrics.teardown.unpin_waited = MPI_Wtime() - start;
  return H5G_OK;
}

/* Collective: the input, read for the last time by h5g_write_close (its attributes), is closed
 * before the report, which can then tell how long that took. */
static int close_input(h5g_run *r) {
  double start = MPI_Wtime();
  int rc = h5g_keyset_close(r->keys_in);
  if (h5g_io_close_file(r->in_file) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  r->in_file = NULL;
  r->metrics.teardown.input_close = MPI_Wtime() - start;
  return rc;
}

/* Everything is written to the temporary file, closed, and the report made; only then is the
 * output committed, so a run that fails leaves no output and a run that commits succeeds. */
static int write_and_commit(h5g_run *r, double start, h5g_report *rep) {
  int rc = H5G_OK;
  if (r->plan.path != H5G_PATH_DEVICE_RESIDENT) /* else the GPU did it */
    STEP(r, H5G_PHASE_TRANSFORM, r->be->transform(r->be, r->data.sorted, r->extent.out_n, &r->plan.ks, 1));
  /* No GPU copy is issued from or into the host buffers after this (the resident path has issued
   * its copies back): they are unpinned behind the write, not in the tear-down. */
  h5g_buffers_unpin_start(r->data.set);
  STEP(r, H5G_PHASE_WRITE, h5g_write_prepare(r));
  STEP(r, H5G_PHASE_WRITE, h5g_write_open(r));
  STEP(r, H5G_PHASE_WRITE, h5g_write_reserve(r));
  CHECK(h5g_agree(r->comm, h5g_write_keys(r)));
  CHECK(h5g_agree(r->comm, h5g_carry_all(r)));
  if (r->opt->verify) CHECK(h5g_agree(r->comm, h5g_verify_output(r)));
  STEP(r, H5G_PHASE_WRITE, h5g_write_close(r));
  STEP(r, H5G_PHASE_WRITE, wait_unpinned(r));
  STEP(r, H5G_PHASE_WRITE, close_input(r));
  STEP(r, H5G_PHASE_WRITE, h5g_write_references(r));
  CHECK(h5g_agree(r->comm, h5g_report_gather(r, MPI_Wtime() - start, rep)));
  if (r->opt->report) /* a run that then fails to commit gets a failure report (src/main.c) */
    CHECK(h5g_agree(r->comm, r->rank == 0 ? h5g_report_write_json(rep, r->opt, 0, r->opt->report)
                                          : H5G_OK));
  h5g_interrupt_hold();
  STEP(r, H5G_PHASE_WRITE, h5g_write_commit(r));
  h5g_interrupt_committed();
  h5g_interrupt_release();
done:
  return rc;
}

/* After the report: the host buffers (unpinned by now, unless the run failed), the backend and
 * the transport, each timed for -v, then the rest of the run's state. */
static void tear_down(h5g_run *r, h5g_teardown *t) {
  double start = MPI_Wtime();
  h5g_buffers_free(r->data.set);
  r->data.set = NULL;
  t->buffers = MPI_Wtime() - start;
  start = MPI_Wtime();
  if (r->be) r->be->destroy(r->be);
  r->be = NULL;
  t->backend = MPI_Wtime() - start;
  start = MPI_Wtime();
  h5g_transport_close(r->transport);
  r->transport = NULL;
  t->transport = MPI_Wtime() - start;
  h5g_run_free(r);
}

int h5g_pipeline_run(MPI_Comm comm, const h5g_options *opt, h5g_report *rep) {
  int rc = H5G_OK;
  h5g_run run, *r = &run;
  memset(r, 0, sizeof *r);
  r->comm = comm;
  r->opt = opt;
  MPI_Comm_rank(comm, &r->rank);
  MPI_Comm_size(comm, &r->size);
  double start = MPI_Wtime();
  r->metrics.start_time = time(NULL);
  r->metrics.startup.mpi_init = rep->startup.mpi_init;
  h5g_progress_start(&r->progress, opt->progress && r->rank == 0);

  STEP(r, H5G_PHASE_VALIDATE, start_context(r));
  STEP(r, H5G_PHASE_VALIDATE, h5g_validate(r));
  STEP(r, H5G_PHASE_VALIDATE, h5g_share_verdict(r));
  STEP(r, H5G_PHASE_SETUP, h5g_plan_devices(r));
  STEP(r, H5G_PHASE_CONNECT, h5g_plan_transport(r));
  STEP(r, H5G_PHASE_SETUP, join_context(r));
  STEP(r, H5G_PHASE_SETUP, h5g_plan_backend(r));
  STEP(r, H5G_PHASE_BUFFERS, h5g_plan_runs(r));
  STEP(r, H5G_PHASE_BUFFERS, h5g_plan_tables(r));
  if (opt->plan) { /* --plan: nothing is read or written */
    STEP(r, H5G_PHASE_BUFFERS, h5g_sizing_print_plan(r));
    goto done;
  }
  STEP(r, H5G_PHASE_BUFFERS, h5g_sizing_check(r));
  STEP(r, H5G_PHASE_BUFFERS, h5g_plan_buffers(r));
  CHECK(h5g_agree(comm, sort_passes(r)));
  if (opt->unique) CHECK(h5g_agree(comm, h5g_unique(r)));
  if (opt->top >= 0) STEP(r, H5G_PHASE_MERGE, h5g_top_keep(r));
  CHECK(h5g_agree(comm, write_and_commit(r, start, rep)));
  h5g_progress_finish(&r->progress, r->metrics.seconds);
done:
  /* every rank is here together (rc was agreed), so the collective closes match */
  h5g_io_close_file(r->out_file);
  if (r->tmp_created && r->rank == 0) unlink(r->verdict.tmp_path);
  h5g_interrupt_temp(NULL, 0);
  h5g_interrupt_release(); /* a failed commit: a signal held meanwhile is an interrupt */
  h5g_keyset_close(r->keys_in);
  h5g_io_close_file(r->in_file);
  double unused;
  h5g_cuda_warmup_finish(r->warmup, 0, &unused); /* a run that stopped before "setup" */
  tear_down(r, &rep->teardown);
  return rc;
}
