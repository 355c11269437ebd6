/* The handling of the signals that end a run (src/interrupt.h): a handler that only unlinks,
 * writes and exits. */
#include "src/interrupt.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/report.h"

/* Read by the handler: written before the handler can see them half-done (a path is complete
 * before `temp_set` turns it on). */
static char temp_path[PATH_MAX];
/* What Open MPI's MPI-IO ("individual" shared file pointers, made by every rank that opens the
 * temporary file) puts beside it: "<temp>.data.<rank>", "<temp>.metadata.<rank>". */
static char side_path[PATH_MAX + 32];
static int my_rank, ranks;
static volatile sig_atomic_t temp_set, committed, is_rank0, finished, finished_rc, mpi_up;
/* Around the commit: a signal that lands on another thread (the main thread blocks them, but a
 * process-directed signal goes to any thread that does not: MPI's and CUDA's; base/parallel.c's
 * kept workers block them) is kept in `pending` and raised again on the main thread at release. */
static volatile sig_atomic_t holding, pending;
/* Rank 0 with --report: where the report goes and its text up to the phase (src/report.h). */
static const char *_Atomic report_path, *_Atomic report_head;
/* A run that can be resumed (src/resume.h): its scratch to remove, or rank 0's line on where it
 * is kept */
static const char *const *_Atomic scratch_files;
static const char *_Atomic scratch_dir, *_Atomic kept_line;

void h5g_interrupt_temp(const char *path, int nranks) {
  temp_set = 0;
  if (!path) return;
  if (strlen(path) >= sizeof temp_path) return; /* never: h5g_files_temp_name keeps it shorter */
  memcpy(temp_path, path, strlen(path) + 1);
  ranks = nranks;
  atomic_signal_fence(memory_order_seq_cst); /* the path is whole before the handler may read it */
  temp_set = 1;
}

/* The signals that end a run cleanly: Ctrl-C, scancel and mpiexec's forwarding (INT, TERM), a
 * closed terminal or session (HUP), Slurm's --signal=USR1@T warning that time is nearly up,
 * passed on by mpiexec (USR1, USR2), a CPU time limit (XCPU), with the names the error line
 * gives them. */
static const struct {
  int number;
  const char *name;
} interrupt_signals[] = {{SIGINT, "SIGINT"},   {SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"},
                         {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}, {SIGXCPU, "SIGXCPU"}};
enum { INTERRUPT_SIGNALS = sizeof interrupt_signals / sizeof interrupt_signals[0] };

static sigset_t interrupts(void) {
  sigset_t set;
  sigemptyset(&set);
  for (int i = 0; i < INTERRUPT_SIGNALS; i++) sigaddset(&set, interrupt_signals[i].number);
  return set;
}

void h5g_interrupt_hold(void) {
  sigset_t set = interrupts();
  holding = 1;
  atomic_thread_fence(memory_order_seq_cst);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
}

void h5g_interrupt_release(void) {
  sigset_t set = interrupts();
  holding = 0;
  atomic_thread_fence(memory_order_seq_cst);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  if (pending) raise(pending);
}

void h5g_interrupt_report(const char *path, const char *head) {
  atomic_store(&report_head, NULL); /* never a path with another's head */
  atomic_store(&report_path, path);
  atomic_store(&report_head, head);
}

void h5g_interrupt_scratch(const char *const *files, const char *dir, const char *kept) {
  atomic_store(&scratch_files, NULL);
  atomic_store(&kept_line, kept);
  atomic_store(&scratch_dir, dir);
  atomic_store(&scratch_files, files);
}

void h5g_interrupt_committed(void) { committed = 1; }

void h5g_interrupt_finished(int rc) {
  finished_rc = rc;
  finished = 1;
}

/* Removes "<temp><kind><rank>" ("<temp><kind>" for rank -1) (async-signal-safe: no stdio). */
static void unlink_side(const char *kind, int rank) {
  char digits[16];
  size_t len = strlen(temp_path), klen = strlen(kind), n = 0;
  if (rank >= 0)
    do digits[n++] = (char)('0' + rank % 10); while ((rank /= 10) > 0);
  if (len + klen + n >= sizeof side_path) return;
  memcpy(side_path, temp_path, len);
  memcpy(side_path + len, kind, klen);
  for (size_t i = 0; i < n; i++) side_path[len + klen + i] = digits[n - 1 - i];
  side_path[len + klen + n] = '\0';
  unlink(side_path);
}

/* Writes all of `text` (async-signal-safe; a failed write gives up). */
static void put(int fd, const char *text, size_t len) {
  for (ssize_t wrote = 0; len > 0; text += wrote, len -= (size_t)wrote)
    if ((wrote = write(fd, text, len)) <= 0) return;
}

/* Rank 0 with --report: the report of the interrupted run, ending in `message` (the error line's,
 * `len` bytes). Non-blocking: a FIFO nobody reads is left without one, the run not held. */
static void write_report(const char *message, size_t len) {
  const char *path = atomic_load(&report_path), *head = atomic_load(&report_head);
  if (!head) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const char *phase = h5g_report_phase_now();
  put(fd, head, strlen(head));
  put(fd, phase, strlen(phase));
  put(fd, H5G_REPORT_INTERRUPTED_ERROR, strlen(H5G_REPORT_INTERRUPTED_ERROR));
  put(fd, message, len);
  put(fd, H5G_REPORT_INTERRUPTED_END, strlen(H5G_REPORT_INTERRUPTED_END));
  close(fd);
}

/* Only async-signal-safe calls: unlink, open, write, close, nanosleep, _exit (and lock-free
 * atomics). */
static void on_signal(int sig) {
  if (holding) {
    pending = sig;
    atomic_thread_fence(memory_order_seq_cst);
    if (holding) return; /* else the release has passed its look at `pending`: handle it here */
  }
  /* A committed run goes on to MPI_Finalize and exits 0: a rank that left without it would
   * make the launcher fail the job whose output is in place. */
  if (committed || (finished && finished_rc == 0)) return;
  if (finished) _exit(finished_rc);
  /* While MPI starts nothing is written yet, and the signal is most often the launcher ending
   * the ranks left after one failed to start (it says why): no line blaming a signal. */
  if (!mpi_up) _exit(1);
  /* each rank its own; rank 0 every rank's too (mpirun may kill the others before they run
   * this, once rank 0 has exited) */
  for (int r = is_rank0 ? 0 : my_rank; temp_set && r < (is_rank0 ? ranks : my_rank + 1); r++) {
    unlink_side(".data.", r);
    unlink_side(".metadata.", r);
  }
  const char *const *files = atomic_load(&scratch_files);
  for (int i = 0; files && files[i]; i++) unlink(files[i]);
  if (files) rmdir(atomic_load(&scratch_dir)); /* the last of its node's ranks */
  if (is_rank0) {
    if (temp_set) {
      unlink(temp_path);
      unlink_side(".lock", -1); /* io/h5io.h, h5g_files_hold_temp_lock */
    }
    size_t prefix = strlen("h5gsort: error: "); /* the report takes the message after it */
    char line[80] = "h5gsort: error: interrupted (signal ";
    size_t len = strlen(line);
    if (sig >= 10) line[len++] = (char)('0' + sig / 10);
    line[len++] = (char)('0' + sig % 10);
    for (int i = 0; i < INTERRUPT_SIGNALS; i++) {
      if (interrupt_signals[i].number != sig) continue;
      line[len++] = ',';
      line[len++] = ' ';
      memcpy(line + len, interrupt_signals[i].name, strlen(interrupt_signals[i].name));
      len += strlen(interrupt_signals[i].name);
    }
    line[len++] = ')';
    write_report(line + prefix, len - prefix); /* first: stderr may be gone */
    line[len++] = '\n';
    if (write(STDERR_FILENO, line, len) < 0) _exit(1);
    const char *kept = atomic_load(&kept_line);
    if (kept) put(STDERR_FILENO, kept, strlen(kept));
  } else {
    /* mpirun ends the ranks left once one exits: the others give rank 0 time to report first
     * (it exits at once, and mpirun then ends them). Without the wait a SIGTERM at "read" now
     * and then ended with no line where many ranks shared few cores. */
    struct timespec rank0_first = {2, 0};
    nanosleep(&rank0_first, NULL);
  }
  _exit(1);
}

void h5g_interrupt_install(int rank, int mpi_started) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigfillset(&sa.sa_mask); /* one handler at a time */
  sa.sa_flags = SA_RESTART; /* a handler that returns (a held signal) must not fail others' calls */
  is_rank0 = rank == 0;
  my_rank = rank;
  mpi_up = mpi_started;
  for (int i = 0; i < INTERRUPT_SIGNALS; i++) {
    /* one the run was started to ignore (nohup, a background job's SIGINT) stays ignored; one an
     * MPI library took in MPI_Init is taken back (MPICH's SIGUSR1, UCX's SIGHUP debug report):
     * these signals stop the run under every MPI */
    struct sigaction was;
    if (sigaction(interrupt_signals[i].number, NULL, &was) == 0 &&
        !(was.sa_flags & SA_SIGINFO) && was.sa_handler == SIG_IGN)
      continue;
    sigaction(interrupt_signals[i].number, &sa, NULL);
  }
  /* a reader of stdout or stderr that went away (`| head`) fails those writes, which the run
   * ignores: it never ends a run, whose output is what matters */
  signal(SIGPIPE, SIG_IGN);
}

int h5g_interrupt_launcher_rank(void) {
  static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                      "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *value = getenv(names[i]);
    if (value && *value) return atoi(value);
  }
  return 0; /* started alone */
}
