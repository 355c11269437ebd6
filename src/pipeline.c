/* The h5gsort pipeline on each rank (docs/design-notes.md, "Architecture"): validate, plan, read
 * and sort the runs, exact splitters, exchange, merge, write to a temporary file, carry, verify,
 * commit. The phases live in files of their own (src/run.h); this file only orders them. Every
 * step ends in an agreement, so an error on one rank reaches every rank before the next collective
 * call. */
#include "src/pipeline.h"

#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/scratch_memory.h"
#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/splitters.h"
#include "mpi/topology.h"
#include "src/interrupt.h"
#include "src/carry.h"
#include "src/exchange_runs.h"
#include "src/local_sort.h"
#include "src/merge_runs.h"
#include "src/passes.h"
#include "src/plan.h"
#include "src/read.h"
#include "src/report_gather.h"
#include "src/resume.h"
#include "src/run.h"
#include "src/sizing.h"
#include "src/timeline.h"
#include "src/top.h"
#include "src/unique.h"
#include "src/validate.h"
#include "src/verify_output.h"
#include "src/write.h"

/* What the phases make, each part made or changed only by the phases whose headers say so: the
 * verdict (src/validate.h) and the plan (src/plan.h), const once made; the extent (cut by
 * src/top.h and src/unique.h); the keys and their buffers (made by src/plan.h). */
typedef struct {
  h5g_verdict verdict;
  h5g_plan plan;
  h5g_extent extent;
  h5g_data data;
  h5g_resume resume; /* made by src/resume.h */
} run_state;

/* The bytes of the whole job each phase moves, for --progress (0: none to tell): the keys (the
 * merge's only where there is one: one rank's one run moves nothing), and what is written (fewer
 * with --top and --unique: set again once they cut the extent). The carry sets its own. */
static void set_phase_bytes(h5g_run *r, const run_state *s) {
  uint64_t keys = s->verdict.info.n * s->plan.ks.width;
  r->phase_bytes[H5G_PHASE_READ] = r->phase_bytes[H5G_PHASE_TRANSFORM] = keys;
  r->phase_bytes[H5G_PHASE_SORT] = keys;
  r->phase_bytes[H5G_PHASE_EXCHANGE] = r->size > 1 ? keys : 0;
  r->phase_bytes[H5G_PHASE_MERGE] = r->size > 1 || s->plan.nruns > 1 ? keys : 0;
  r->phase_bytes[H5G_PHASE_WRITE] = s->extent.out_total * s->plan.ks.width;
}

void h5g_step_begin(h5g_run *r, h5g_phase phase) {
  h5g_report_phase(phase);
  if (r->rank == 0)
    h5g_progress_phase(&r->progress, phase, r->metrics.seconds, r->phase_bytes[phase]);
  h5g_fault_point(r, h5g_phase_name(phase));
  h5g_timeline_phase((int)phase, h5g_phase_name(phase));
  r->step_start = MPI_Wtime();
}

int h5g_step_end(h5g_run *r, h5g_phase phase, int status) {
  int rc = h5g_agree(r->comm, status);
  r->metrics.seconds[phase] += MPI_Wtime() - r->step_start;
  return rc;
}

/* This rank's GPU context (of the GPU its place on the node picks) starts being made in the
 * background, so that it is ready when "setup" needs it; meanwhile rank 0 inspects the input and
 * the plan is made. Not with --backend cpu; with auto it may be made on a GPU that the plan then
 * leaves unused. */
static int start_context(h5g_run *r, int local_rank) {
  return r->opt->backend != H5G_BACKEND_CPU ? h5g_cuda_warmup_start(local_rank, &r->warmup)
                                            : H5G_OK;
}

/* The GPU context is made (or could not be: an error only when the plan uses the GPU). */
static int join_context(h5g_run *r, const h5g_plan *plan) {
  double start = MPI_Wtime();
  int rc = h5g_cuda_warmup_finish(r->warmup, plan->use_cuda, &r->metrics.startup.context);
  r->warmup = NULL;
  r->metrics.startup.context_waited = MPI_Wtime() - start;
  h5g_timeline_mark("gpu_context_ready");
  return rc;
}

/* The input and its keys open (a table's rows kept by the read where it keeps them). */
static int open_input(h5g_run *r, run_state *s) {
  int rc = H5G_OK;
  STEP(r, H5G_PHASE_READ, h5g_read_open_file(r));
  STEP(r, H5G_PHASE_READ, h5g_read_open_keys(r, &s->verdict));
  STEP(r, H5G_PHASE_READ, h5g_read_keep_rows(r, &s->verdict, &s->plan, &s->data));
done:
  return rc;
}

/* A spilling run records its runs as they are sorted (src/resume.h, AT_SORT). */
typedef struct {
  const h5g_run *r;
  run_state *s;
} sorted_record;

static int record_sorted(void *ctx, size_t upto) {
  sorted_record *k = ctx;
  run_state *s = k->s;
  int rc = h5g_resume_record_sorted(&s->plan, &s->resume, &s->data, &s->extent, upto,
                                    s->data.run_checksums[upto]);
  if (rc == H5G_OK) h5g_fault_point(k->r, "run-sorted");
  return rc;
}

/* Read every run (a later pass of keys of several words: hand it over from the slice buffer)
 * but those a resume kept sorted; on the device paths the GPU sorts run j while run j + 1 is
 * read, once the slice buffer is pinned that far (a run read before is handed over then). */
static int read_and_sort(h5g_run *r, run_state *s, int word, int first_pass) {
  int rc = H5G_OK;
  const h5g_plan *plan = &s->plan;
  const h5g_data *d = &s->data;
  sorted_record record = {r, s};
  h5g_sorted_runs kept = {s->resume.resuming == H5G_RESUME_AT_SORT ? s->resume.sorted_runs : 0,
                          s->resume.records & 1u << H5G_RESUME_AT_SORT ? record_sorted : NULL,
                          &record};
  if (first_pass) CHECK(open_input(r, s));
  CHECK(h5g_read_runs(r, &s->verdict, plan, d, word, first_pass, &kept)); /* its steps agreed */
  STEP(r, H5G_PHASE_BUFFERS, h5g_buffers_wait_all(d->set)); /* what the read did not hide */
  if (plan->path == H5G_PATH_HOST) {
    uint64_t from = plan->run_offsets[kept.first];
    STEP(r, H5G_PHASE_TRANSFORM, r->be->transform(r->be, (char *)d->keys + from * plan->ks.width,
                                                  plan->n - from, &plan->ks, 0));
    STEP(r, H5G_PHASE_SORT, h5g_sort_runs(r, plan, d, &kept));
  } else if (!plan->sort_is_output) {
    STEP(r, H5G_PHASE_SORT, h5g_sort_wait_runs(r, plan, &kept)); /* the host cuts or merges them */
  }
done:
  return rc;
}

/* A spilling run records the sorted runs before their merge (src/resume.h), where the keys take
 * one pass (else the passes' order is part of the state) and the merge leaves the runs as they
 * are (one of a single call, within the backend's budget, writes over them). Every rank's merge
 * must leave them so: the record is collective, and the merges' sizes differ between ranks. */
static int record_runs(h5g_run *r, run_state *s, const uint64_t *offsets, size_t nruns) {
  int rc = H5G_OK;
  if (!s->resume.eligible || (s->verdict.composed && s->verdict.layout.words > 1) || nruns < 2)
    goto done; /* the same on every rank */
  int mine =
      offsets[nruns] > r->be->capacity(r->be, s->plan.ks.width, s->data.sorted_values != NULL);
  int every = 0;
  CHECK_MPI(MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, r->comm));
  if (!every) goto done;
  STEP(r, H5G_PHASE_MERGE, h5g_resume_record(r, &s->plan, &s->resume, &s->data, &s->extent,
                                             H5G_RESUME_AT_MERGE, offsets, nruns));
  h5g_resume_recorded(&s->resume, H5G_RESUME_AT_MERGE);
  h5g_fault_point(r, "runs-kept"); /* the GPU merges in one call: a kill within it, from here */
done:
  return rc;
}

/* The sorted runs of every rank become each rank's sorted share of the output. */
static int split_exchange_merge(h5g_run *r, run_state *s, int word) {
  int rc = H5G_OK;
  const h5g_plan *plan = &s->plan;
  h5g_data *d = &s->data;
  if (r->size == 1) {
    CHECK(record_runs(r, s, d->runs, plan->nruns));
    h5g_resume_drop_sorted(&s->resume); /* the merge may write over the runs */
    STEP(r, H5G_PHASE_MERGE, h5g_merge_runs_at(r, plan, d, d->runs, plan->nruns));
    goto done;
  }
  STEP(r, H5G_PHASE_CONNECT, h5g_transport_wait(r->transport)); /* what the read did not hide */
  /* top K distinct: after the sort, by h5g_top_keep; keys of several words: in the last pass */
  if (r->opt->top >= 0 && !r->opt->unique && word == 0)
    STEP(r, H5G_PHASE_SPLITTERS, h5g_top_cuts(r, &s->verdict, plan, d, &s->extent));
  else
    STEP(r, H5G_PHASE_SPLITTERS, h5g_exact_cuts(r->comm, d->keys, plan->ks.width, d->runs,
                                                plan->nruns, s->extent.total, d->cuts));
  /* several runs are packed and received into the slice buffer (src/exchange_runs.c) */
  if (plan->nruns > 1) h5g_resume_drop_sorted(&s->resume);
  CHECK(h5g_agree(r->comm, h5g_exchange_runs(r, plan, &s->extent, d)));
  CHECK(record_runs(r, s, d->recv_offsets, (size_t)r->size * plan->nruns));
  h5g_resume_drop_sorted(&s->resume); /* the merge writes into the slice buffer */
  STEP(r, H5G_PHASE_MERGE, h5g_merge_received(r, plan, d));
done:
  return rc;
}

/* Every pass (one, unless the keys take several composed words: src/passes.c) sorts the slice
 * into this rank's share of the output. */
static int sort_passes(h5g_run *r, run_state *s) {
  int rc = H5G_OK;
  const h5g_verdict *v = &s->verdict;
  const h5g_plan *plan = &s->plan;
  int words = v->composed ? v->layout.words : 1;
  for (int word = words - 1; word >= 0; word--) {
    if (word < words - 1)
      CHECK(h5g_agree(r->comm, h5g_passes_next(r, v, plan, &s->extent, &s->data, word)));
    CHECK(h5g_agree(r->comm, read_and_sort(r, s, word, word == words - 1)));
    if (word == 0) STEP(r, H5G_PHASE_SORT, h5g_unique_runs(r, v, plan, &s->data, &s->extent));
    CHECK(h5g_agree(r->comm, split_exchange_merge(r, s, word)));
  }
  if (words > 1) CHECK(h5g_agree(r->comm, h5g_passes_finish(r, v, plan, &s->extent, &s->data)));
done:
  return rc;
}

/* The host buffers' unpinning, begun before the write, is over (the report tells how long it
 * took and how much of it the write did not hide). */
static int wait_unpinned(h5g_run *r, const h5g_data *d) {
  double start = MPI_Wtime();
  r->metrics.teardown.unpin = h5g_buffers_unpin_wait(d->set);
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

/* Collective, --verify: the input's checksum summed over the ranks (taken here, after the
 * write: a GPU's part waits for its stream, which would hold the write back behind the whole
 * copy back), the temporary file as closed (filtered chunks some ranks kept are stored only
 * then: io/h5io.h, h5g_io_finish_file), opened again and read back. */
static int verify_written(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                          const h5g_extent *e) {
  int rc = H5G_OK;
  STEP(r, H5G_PHASE_VERIFY, h5g_read_checksum(r));
  CHECK(h5g_io_open_file(r->comm, v->tmp_path, 0, &r->out_file));
  CHECK(h5g_agree(r->comm, h5g_verify_output(r, v, plan, e)));
  rc = h5g_io_close_file(r->out_file);
  r->out_file = NULL;
  CHECK(h5g_agree(r->comm, rc));
done:
  return rc;
}

/* Everything is written to the temporary file, closed, and the report made; only then is the
 * output committed, so a run that fails leaves no output and a run that commits succeeds. */
static int write_and_commit(h5g_run *r, run_state *s, double start, h5g_report *rep) {
  int rc = H5G_OK;
  const h5g_verdict *v = &s->verdict;
  const h5g_plan *plan = &s->plan;
  const h5g_extent *e = &s->extent;
  h5g_data *d = &s->data;
  /* the resident path's GPU did it; a share recorded had it done */
  if (plan->path != H5G_PATH_DEVICE_RESIDENT && s->resume.resuming != H5G_RESUME_AT_WRITE)
    STEP(r, H5G_PHASE_TRANSFORM, r->be->transform(r->be, d->sorted, e->out_n, &plan->ks, 1));
  /* a resident share is recorded once it is all back from the GPU (its write then no longer
   * overlaps the copy back); one resumed from is back already */
  if (plan->path == H5G_PATH_DEVICE_RESIDENT && (s->resume.records & 1u << H5G_RESUME_AT_WRITE)) {
    if (s->resume.resuming != H5G_RESUME_AT_WRITE)
      STEP(r, H5G_PHASE_WRITE, h5g_merge_wait(r, plan, e));
    d->share_on_host = 1;
  }
  STEP(r, H5G_PHASE_TRANSFORM,
       h5g_resume_record(r, plan, &s->resume, d, e, H5G_RESUME_AT_WRITE, NULL, 0));
  h5g_resume_recorded(&s->resume, H5G_RESUME_AT_WRITE);
  /* No GPU copy is issued from or into the host buffers after this (the resident path has issued
   * its copies back): they are unpinned behind the write, not in the tear-down. A streamed run's
   * ring takes its copies back during the write: unpinned in the tear-down, where its few slots
   * take little time (bench/RESULTS.md, "Streamed runs: a ring of pinned slots"). */
  if (!plan->streamed) h5g_buffers_unpin_start(d->set);
  CHECK(h5g_write_start(r, v, plan, e)); /* its steps agreed */
  CHECK(h5g_agree(r->comm, h5g_write_keys(r, v, plan, e, d)));
  CHECK(h5g_agree(r->comm, h5g_carry_all(r, v, plan, e, d)));
  h5g_data_free_table_rows(d);
  STEP(r, H5G_PHASE_WRITE, h5g_write_close(r, v));
  if (r->opt->verify) CHECK(verify_written(r, v, plan, e));
  STEP(r, H5G_PHASE_WRITE, wait_unpinned(r, d));
  STEP(r, H5G_PHASE_WRITE, close_input(r));
  STEP(r, H5G_PHASE_WRITE, h5g_write_references(r, v));
  CHECK(h5g_agree(r->comm, h5g_report_gather(r, v, plan, e, MPI_Wtime() - start, rep)));
  if (r->opt->report) /* a run that then fails to commit gets a failure report (src/main.c) */
    CHECK(h5g_agree(r->comm, r->rank == 0 ? h5g_report_write_json(rep, r->opt, 0, r->opt->report)
                                          : H5G_OK));
  h5g_timeline_mark("report_written");
  h5g_interrupt_hold();
  STEP(r, H5G_PHASE_WRITE, h5g_write_commit(r, v));
  h5g_timeline_mark("commit_done");
  h5g_interrupt_committed();
  h5g_interrupt_release();
done:
  return rc;
}

/* After the report: the host buffers (unpinned by now, unless the run failed), the backend, the
 * transport, then the rest of the run's state. */
static void tear_down(h5g_run *r, run_state *s) {
  h5g_buffers_free(s->data.set);
  s->data.set = NULL;
  if (r->be) r->be->destroy(r->be);
  r->be = NULL;
  h5g_transport_close(r->transport);
  r->transport = NULL;
  h5g_data_free(&s->data);
  h5g_plan_free(&s->plan);
}

/* The verdict, the plan and the tables, up to the host buffers (--plan stops before them). */
static int make_plan(h5g_run *r, run_state *s) {
  int rc = H5G_OK;
  /* the rank's place on its node: the context's GPU, then the plan's (h5g_plan_node) */
  STEP(r, H5G_PHASE_VALIDATE,
       h5g_local_rank(r->comm, &s->plan.local_rank, &s->plan.ranks_on_node));
  STEP(r, H5G_PHASE_VALIDATE, start_context(r, s->plan.local_rank));
  STEP(r, H5G_PHASE_VALIDATE, h5g_validate(r, &s->verdict));
  STEP(r, H5G_PHASE_VALIDATE, h5g_share_verdict(r, &s->verdict, &s->extent));
  h5g_plan_share(r, &s->verdict, &s->plan);
  STEP(r, H5G_PHASE_SETUP, h5g_plan_node(r, &s->plan));
  STEP(r, H5G_PHASE_SETUP, h5g_plan_devices(r, &s->plan));
  STEP(r, H5G_PHASE_CONNECT, h5g_plan_transport(r, &s->plan));
  STEP(r, H5G_PHASE_SETUP, join_context(r, &s->plan));
  STEP(r, H5G_PHASE_SETUP, h5g_plan_backend(r, &s->plan));
  STEP(r, H5G_PHASE_BUFFERS, h5g_plan_runs(r, &s->verdict, &s->plan));
  STEP(r, H5G_PHASE_BUFFERS, h5g_sizing_spill(r, &s->verdict, &s->plan));
  STEP(r, H5G_PHASE_BUFFERS, h5g_plan_tables(r, &s->plan, &s->data));
  set_phase_bytes(r, s); /* the runs known */
done:
  return rc;
}

int h5g_pipeline_run(MPI_Comm comm, const h5g_options *opt, h5g_report *rep) {
  int rc = H5G_OK;
  h5g_run run, *r = &run;
  run_state state, *s = &state;
  memset(r, 0, sizeof *r);
  memset(s, 0, sizeof *s);
  r->comm = comm;
  r->opt = opt;
  MPI_Comm_rank(comm, &r->rank);
  MPI_Comm_size(comm, &r->size);
  double start = MPI_Wtime();
  r->metrics.startup.mpi_init = rep->startup.mpi_init;
  h5g_progress_start(&r->progress, opt->progress && r->rank == 0, opt->progress_seconds);

  CHECK(make_plan(r, s)); /* its steps agreed */
  if (opt->plan) { /* --plan: nothing is read or written */
    STEP(r, H5G_PHASE_BUFFERS, h5g_sizing_print_plan(r, &s->verdict, &s->plan, &s->extent));
    goto done;
  }
  STEP(r, H5G_PHASE_BUFFERS, h5g_sizing_check(r, &s->verdict, &s->plan));
  CHECK(h5g_resume_open(r, &s->verdict, &s->plan, &s->resume)); /* its steps agreed */
  STEP(r, H5G_PHASE_BUFFERS, h5g_plan_buffers(r, &s->verdict, &s->plan, &s->resume, &s->data));
  if (s->resume.resuming) { /* the state a killed run kept, checked */
    CHECK(h5g_resume_restore(r, &s->plan, &s->resume, &s->data, &s->extent));
    if (!s->resume.resuming) { /* it failed: the run starts over in buffers of its own plan */
      h5g_buffers_free(s->data.set);
      s->data.set = NULL;
      STEP(r, H5G_PHASE_BUFFERS,
           h5g_plan_buffers(r, &s->verdict, &s->plan, &s->resume, &s->data));
    }
  }
  if (s->resume.resuming == H5G_RESUME_AT_WRITE) {
    CHECK(h5g_agree(comm, open_input(r, s)));
  } else {
    if (s->resume.resuming == H5G_RESUME_AT_MERGE) {
      const h5g_resume_kept *runs = &s->resume.kept[H5G_RESUME_AT_MERGE];
      CHECK(h5g_agree(comm, open_input(r, s)));
      STEP(r, H5G_PHASE_MERGE, h5g_merge_runs_at(r, &s->plan, &s->data, runs->run_offsets,
                                                 runs->nruns));
    } else {
      CHECK(h5g_agree(comm, sort_passes(r, s)));
    }
    if (opt->unique)
      CHECK(h5g_agree(comm, h5g_unique(r, &s->verdict, &s->plan, &s->data, &s->extent)));
    if (opt->top >= 0) STEP(r, H5G_PHASE_MERGE, h5g_top_keep(r, &s->extent));
  }
  set_phase_bytes(r, s); /* what --top and --unique kept */
  CHECK(h5g_agree(comm, write_and_commit(r, s, start, rep)));
  h5g_progress_finish(&r->progress, r->metrics.seconds);
done:
  if (rc != H5G_OK) h5g_write_name_output(opt, &s->verdict);
  h5g_progress_stop(&r->progress);
  /* every rank is here together (rc was agreed), so the collective closes match */
  h5g_io_close_file(r->out_file);
  if (r->tmp_created && r->rank == 0) unlink(s->verdict.tmp_path);
  if (r->rank == 0) h5g_files_drop_temp_lock(); /* once the temporary is renamed or gone */
  h5g_interrupt_temp(NULL, 0);
  h5g_interrupt_release(); /* a failed commit: a signal held meanwhile is an interrupt */
  h5g_keyset_close(r->keys_in);
  h5g_io_close_file(r->in_file);
  h5g_cuda_warmup_finish(r->warmup, 0, NULL); /* a run that stopped before "setup" */
  h5g_resume_close(r, &s->resume, rc == H5G_OK);
  tear_down(r, s);
  h5g_scratch_use(NULL); /* the scratch files went with the buffers */
  return rc;
}
