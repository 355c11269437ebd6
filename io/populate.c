/* The populator (io/h5io.h: h5g_populate_*; tuning in io/populate.h): a process forked before
 * MPI_Init, told one range of one file over a socket, whose workers make the range's pages
 * (MADV_POPULATE_WRITE) until done or until the socket closes (h5g_populate_stop, or the rank's
 * end). */
/* fallocate(2), MADV_POPULATE_WRITE, close_range: Linux */
#define _GNU_SOURCE 1
#include "io/populate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/h5io.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels refuse it: nothing is made */
#endif

typedef struct {
  off_t offset;
  uint64_t bytes;
  int workers;
  char path[PATH_MAX];
} populate_job;

/* The rank's side: the populator's pid and the socket to it (-1: none). */
static pid_t populator = -1;
static int to_populator = -1;

/* The populator's side: the mapping its workers populate, each its share, until `stop`. */
typedef struct {
  char *start;
  size_t bytes, page;
  int workers, index;
  int *stop;
} worker_share;

static void *populate_share(void *arg) {
  worker_share *w = arg;
  size_t share = w->bytes / (size_t)w->workers / w->page * w->page;
  size_t from = share * (size_t)w->index;
  size_t bytes = w->index == w->workers - 1 ? w->bytes - from : share;
  for (size_t done = 0; done < bytes && !__atomic_load_n(w->stop, __ATOMIC_RELAXED);) {
    size_t step = bytes - done < H5G_POPULATE_STEP_BYTES ? bytes - done : H5G_POPULATE_STEP_BYTES;
    if (madvise(w->start + from + done, step, MADV_POPULATE_WRITE) != 0) break;
    done += step;
  }
  return NULL;
}

static int receive_job(int socket_fd, populate_job *job) {
  size_t got = 0;
  while (got < sizeof *job) {
    ssize_t n = read(socket_fd, (char *)job + got, sizeof *job - got);
    if (n <= 0) return 0;
    got += (size_t)n;
  }
  job->path[PATH_MAX - 1] = '\0';
  return job->workers >= 1 && job->workers <= H5G_POPULATE_WORKERS;
}

/* Every descriptor but the standard streams (to /dev/null: a launcher waits for a rank's output
 * to close) and the socket: the launcher's (PMI) are the rank's alone. */
static void keep_only_socket(int socket_fd) {
  int null_fd = open("/dev/null", O_RDWR);
  for (int i = 0; null_fd >= 0 && i < 3; i++) dup2(null_fd, i);
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 3u, (unsigned)socket_fd - 1, 0u) == 0 &&
      syscall(SYS_close_range, (unsigned)socket_fd + 1, ~0u, 0u) == 0)
    return;
#endif
  for (int fd = 3; fd < 1024; fd++) /* kernels before 5.9 */
    if (fd != socket_fd) close(fd);
}

/* The populator's life: one job, then the end. Forked with SIGINT and SIGTERM blocked: their
 * default actions are restored before they are let through, so the rank's handlers never run
 * here. The whole range is allocated first, as the write's mapping is (io/direct.c: on tmpfs
 * that makes the pages themselves). */
static _Noreturn void populator_main(int socket_fd, const sigset_t *unblocked) {
  populate_job job;
  worker_share shares[H5G_POPULATE_WORKERS];
  pthread_t ids[H5G_POPULATE_WORKERS];
  int stop = 0, started = 0, fd = -1;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char *start = MAP_FAILED, byte;
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigprocmask(SIG_SETMASK, unblocked, NULL);
  keep_only_socket(socket_fd);
  if (!receive_job(socket_fd, &job)) _exit(0);
  off_t begin = job.offset / (off_t)page * (off_t)page;
  size_t bytes = (size_t)(job.offset - begin) + job.bytes;
  fd = open(job.path, O_RDWR | O_CLOEXEC);
  if (fd >= 0 && fallocate(fd, 0, begin, (off_t)bytes) == 0)
    start = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, begin);
  if (start != MAP_FAILED) {
    (void)madvise(start, bytes, MADV_HUGEPAGE); /* as the write maps it (io/direct.c) */
    for (; started < job.workers; started++) {
      shares[started] = (worker_share){start, bytes, page, job.workers, started, &stop};
      if (pthread_create(&ids[started], NULL, populate_share, &shares[started]) != 0) break;
    }
  }
  while (read(socket_fd, &byte, 1) > 0) /* until the rank stops it or ends */
    continue;
  __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
  if (start != MAP_FAILED) munmap(start, bytes);
  _exit(0);
}

/* 1 when this process runs one thread (/proc/self/status): a fork from several may leave a lock
 * of another thread held in the child (a preloaded tracer's, say), and the child makes threads. */
static int one_thread(void) {
  char line[256];
  int threads = 0;
  FILE *status = fopen("/proc/self/status", "r");
  while (status && fgets(line, sizeof line, status))
    if (sscanf(line, "Threads: %d", &threads) == 1) break;
  if (status) fclose(status);
  return threads == 1;
}

void h5g_populate_fork(void) {
  int fds[2];
  sigset_t blocked, unblocked;
  if (populator > 0 || !one_thread() ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  sigprocmask(SIG_BLOCK, &blocked, &unblocked);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    populator_main(fds[1], &unblocked);
  }
  sigprocmask(SIG_SETMASK, &unblocked, NULL);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return;
  }
  populator = pid;
  to_populator = fds[0];
}

int h5g_populate_ready(void) { return to_populator >= 0; }

int h5g_populate_start(const char *path, off_t offset, uint64_t bytes, int workers) {
  populate_job job;
  if (to_populator < 0 || bytes == 0 || strlen(path) >= sizeof job.path) return 0;
  memset(&job, 0, sizeof job);
  job.offset = offset;
  job.bytes = bytes;
  job.workers = workers < 1 ? 1 : workers > H5G_POPULATE_WORKERS ? H5G_POPULATE_WORKERS : workers;
  strcpy(job.path, path);
  size_t sent = 0;
  while (sent < sizeof job) { /* MSG_NOSIGNAL: a populator gone is no SIGPIPE for the rank */
    ssize_t n = send(to_populator, (char *)&job + sent, sizeof job - sent, MSG_NOSIGNAL);
    if (n <= 0) return 0;
    sent += (size_t)n;
  }
  return 1;
}

void h5g_populate_stop(void) {
  if (to_populator >= 0) close(to_populator);
  to_populator = -1;
}

void h5g_populate_reap(void) {
  h5g_populate_stop();
  while (populator > 0 && waitpid(populator, NULL, 0) < 0 && errno == EINTR)
    continue;
  populator = -1;
}
