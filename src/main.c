/* h5gsort: sort a 1-D numeric HDF5 dataset across MPI ranks. */
#define _GNU_SOURCE /* pthread_setattr_default_np */
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "kernels/cuda_backend.h"
#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/launch.h"
#include "src/about.h"
#include "src/check.h"
#include "src/interrupt.h"
#include "base/error.h"
#include "src/options.h"
#include "src/pipeline.h"
#include "src/report.h"
#include "src/timeline.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The stack a rank takes: MPI_Init, HDF5 and the pipeline on the main thread, deflate and the
 * copies on the threads (`ulimit -s 48` crashed the main thread; 64 KiB ran), with room. */
enum { STACK_BYTES = 1 << 20 };

/* A stack limit below STACK_BYTES is raised for this process as far as the hard limit allows
 * (the kernel grows the main thread's stack up to the limit of the moment; threads made later
 * are given as much). Fails (before MPI_Init: the message is printed by the caller) when the hard
 * limit is below. */
static int ensure_stack(void) {
  int rc = H5G_OK;
  struct rlimit limit;
  if (getrlimit(RLIMIT_STACK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur >= STACK_BYTES)
    goto done;
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < STACK_BYTES)
    H5G_FAIL(H5G_ERR_RUNTIME, "the stack limit (ulimit -s, hard) is %llu KiB, below the %d KiB "
             "a rank needs", (unsigned long long)limit.rlim_max >> 10, STACK_BYTES >> 10);
  limit.rlim_cur = STACK_BYTES;
  if (setrlimit(RLIMIT_STACK, &limit) != 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot raise the stack limit (ulimit -s) to the %d KiB a rank "
             "needs: %s", STACK_BYTES >> 10, strerror(errno));
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) == 0) {
    if (pthread_attr_setstacksize(&attr, STACK_BYTES) == 0) pthread_setattr_default_np(&attr);
    pthread_attr_destroy(&attr);
  }
done:
  return rc;
}

/* -v: the start-up outside the phases. */
static void print_startup(const h5g_report *rep) {
  const h5g_startup *up = &rep->startup;
  printf("  (start-up: MPI_Init %.3f s", up->mpi_init);
  if (strcmp(rep->backend, "cuda") == 0)
    printf("; GPU context %.3f s, made behind validate, %.3f s of it waited for in setup",
           up->context, up->context_waited);
  printf(")\n");
}

static void print_summary(const h5g_options *opt, const h5g_report *rep) {
  if (opt->quiet) return;
  double rate = rep->total_seconds > 0 ? (double)rep->n / rep->total_seconds / 1e6 : 0.0;
  char kept[64] = "";
  if (rep->rows_written != rep->n)
    snprintf(kept, sizeof kept, ", %llu kept", (unsigned long long)rep->rows_written);
  printf("h5gsort: sorted %llu %s keys on %d rank%s (%s: %s) in %.3f s (%.1f M keys/s)%s%s\n",
         (unsigned long long)rep->n, rep->type_name, rep->ranks, rep->ranks == 1 ? "" : "s",
         rep->backend, rep->devices, rep->total_seconds, rate, kept,
         rep->verified ? ", verified" : "");
  if (opt->verbose) {
    for (int p = 0; p < H5G_PHASE_COUNT; p++)
      printf("  %-10s %9.3f s\n", h5g_phase_name((h5g_phase)p), rep->seconds[p]);
    if (rep->runs_per_rank > 1)
      printf("  (out of core: %llu sorted runs per rank, merged in chunks)\n",
             (unsigned long long)rep->runs_per_rank);
    if (rep->ring_slots)
      printf("  (streamed: the keys went to the GPU and came back through %d pinned slots of "
             "%.4g MiB, no slice-sized host buffer)\n", rep->ring_slots,
             (double)rep->slot_bytes / 1048576.0);
    if (rep->carried_on_gpu)
      printf("  (carried rows put in order on the GPU, where the sort left their source "
             "indices)\n");
    char nodes[512], library[128];
    h5g_report_nodes(rep, nodes, sizeof nodes);
    h5g_mpi_library(library, sizeof library);
    printf("  %d node%s: %s\n  I/O policy: %s\n  MPI: %s\n", rep->nodes,
           rep->nodes == 1 ? "" : "s", nodes, rep->io_policy, library);
    for (int r = 0; rep->rank_info && r < rep->ranks && r < 16; r++) {
      const h5g_rank_info *info = &rep->rank_info[r];
      printf("  rank %d on %s: CPUs %s (%d of %d), %d I/O threads\n", r, info->host,
             info->cpu_list, info->cpus, info->cpus_online, info->io_threads);
    }
    if (h5g_report_starved_ranks(rep))
      printf("  (%d rank%s may run on one CPU while the node has more: the launcher bound it to one "
             "core, so its file I/O and host work share it; give each rank its share with "
             "`mpirun --bind-to none` or `--map-by slot:PE=N`, or `srun --cpus-per-task=N`)\n",
             h5g_report_starved_ranks(rep), h5g_report_starved_ranks(rep) == 1 ? "" : "s");
    if (rep->h2d_seconds > 0 || rep->d2h_seconds > 0)
      printf("  (GPU work within those: h2d %.3f s, d2h %.3f s, kernels %.3f s; %.3f s of it "
             "hidden behind file I/O)\n", rep->h2d_seconds, rep->d2h_seconds, rep->kernel_seconds,
             rep->hidden_seconds);
    print_startup(rep);
  }
  fflush(stdout);
}

/* Rank 0: whether a runtime failure or an interrupt leaves a report at --report, checked before
 * any work: a path that fails the check (INPUT, OUTPUT, no directory) is an input error, which
 * the validation reports, and gets none. --plan writes its own report there, fit or not. */
static int reports_failure(const h5g_options *opt, int rc) {
  if (rc != H5G_OK || !opt->report || opt->help || opt->version || opt->check || opt->plan)
    return 0;
  if (h5g_files_check_report(opt->report, opt->input, opt->output) == H5G_OK) return 1;
  h5g_error_clear(); /* found again, and said, by the validation */
  return 0;
}

static void free_command(char **command) {
  for (int i = 0; command && command[i]; i++) free(command[i]); /* argc may have changed since */
  free(command);
}

/* One life cycle under every launcher (mpiexec, srun, a singleton) and every MPI: signal handlers;
 * the process-wide settings that must precede any thread; the command line; MPI_Init; the run
 * (whose GPU context is made in a thread behind the input's validation); MPI_Finalize. */
int main(int argc, char **argv) {
  h5g_timeline_mark("main");
  double start = now_seconds(); /* MPI_Init's time counts from here */
  int rank = 0, rc = H5G_OK;
  h5g_options opt;
  h5g_report rep = {0};
  h5g_report_start(&rep); /* first: a run that fails at once reports its start too */
  /* A file-size limit must surface as a write error (exit 1), not kill the rank. */
  signal(SIGXFSZ, SIG_IGN);
  /* before MPI_Init, whose stack would overflow; a failure ends the run once the command line
   * is parsed (for its report) */
  int stack_rc = ensure_stack();
  /* the interrupts (src/interrupt.h) from the start, the rank as the launcher gives it until
   * MPI_Init tells (until then a signal ends the rank quietly) */
  h5g_interrupt_install(h5g_interrupt_launcher_rank(), 0);
  /* before any thread starts, so that no reader sees a setting half made */
  int settings_made = h5g_mpi_before_init() == 0;
  h5g_cuda_environment();
  /* the command line as given, for the report: before getopt permutes argv and the option
   * parser splits lists (--carry, --order, ...) in place */
  char **command = calloc((size_t)argc + 1, sizeof *command);
  for (int i = 0; command && i < argc; i++) command[i] = strdup(argv[i]);
  rc = h5g_options_parse(argc, argv, &opt); /* every rank parses the same argv alike */
  if (command) opt.argv = (const char *const *)command;
  if (stack_rc != H5G_OK) { /* a job's ranks share their limit: rank 0 says */
    if (h5g_interrupt_launcher_rank() == 0) {
      h5g_error_put_line("h5gsort: error: ", h5g_error_message(), stderr);
      if (reports_failure(&opt, rc)) h5g_report_write_json(&rep, &opt, stack_rc, opt.report);
    }
    free_command(command);
    return 1;
  }
  int thread_level = 0; /* helper threads (NCCL set-up, the GPU context, I/O) never call MPI */
  h5g_timeline_mark("mpi_init");
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &thread_level);
  h5g_timeline_mark("mpi_init_done");
  rep.startup.mpi_init = now_seconds() - start;
  h5g_mpi_pmix_nodelay();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  h5g_interrupt_install(rank, 1);
  h5g_io_quiet();
  /* a rank's own failure before MPI_Init reaches every rank (a command-line error is every
   * rank's alike) */
  if (rc == H5G_OK)
    rc = h5g_agree(MPI_COMM_WORLD,
                   settings_made ? H5G_OK
                                 : h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                 "out of host memory setting OMPI_MCA_sharedfp"));
  int report_failure = rank == 0 && reports_failure(&opt, rc);
  char *interrupted = report_failure ? h5g_report_interrupted_head(&rep, &opt) : NULL;
  if (interrupted) h5g_interrupt_report(opt.report, interrupted);

  if (rc == H5G_OK && opt.help) {
    if (rank == 0) h5g_options_usage(stdout);
  } else if (rc == H5G_OK && opt.version) {
    if (rank == 0) h5g_about_version(stdout);
  } else if (rc == H5G_OK && opt.check) {
    rc = h5g_check_run(MPI_COMM_WORLD, &opt);
  } else if (rc == H5G_OK) {
    rc = h5g_pipeline_run(MPI_COMM_WORLD, &opt, &rep);
    h5g_timeline_mark("pipeline_done");
    if (rc == H5G_OK && rank == 0 && !opt.plan) print_summary(&opt, &rep);
  }
  /* Test hook (tests/faults): with H5GSORT_TEST_LEAKS set, an HDF5 object left open on any
   * path, success or failure, fails the run. */
  long open_objects = h5g_io_open_objects();
  if (getenv("H5GSORT_TEST_LEAKS") && open_objects != 0) {
    fprintf(stderr, "h5gsort: rank %d leaked %ld HDF5 objects\n", rank, open_objects);
    if (rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  }
  h5g_interrupt_finished(rc);
  if (rc != H5G_OK && rank == 0) {
    h5g_error_put_line("h5gsort: error: ", h5g_error_message(), stderr);
    if (opt.verbose && h5g_error_origin()[0]) fprintf(stderr, "  at %s\n", h5g_error_origin());
  }
  /* no rank leaves before rank 0 has said why: a launcher ends the ranks left once one exits
   * non-zero (MPICH's hydra), and now and then took rank 0 before its line (every rank is
   * here: rc was agreed, and the barrier does not ask whether it failed) */
  MPI_Barrier(MPI_COMM_WORLD);
  /* a runtime failure leaves a report of what ran, where and why it failed (bad input leaves
   * nothing) */
  if (rc == H5G_ERR_RUNTIME && report_failure) h5g_report_write_json(&rep, &opt, rc, opt.report);
  /* `interrupted` stays allocated until exit: a signal's handler on another thread may still
   * be writing it out (it reaches it through the handler's pointer) */
  h5g_report_free(&rep);
  free_command(command);
  h5g_timeline_mark("mpi_finalize");
  MPI_Finalize();
  h5g_timeline_mark("mpi_finalize_done");
  h5g_timeline_mark("exit");
  if (rank == 0) h5g_timeline_write(opt.input, opt.output);
  return rc;
}
