/* The helper (io/h5io.h: h5g_helper_*, h5g_populate_*; tuning in io/populate.h): a process forked
 * before MPI_Init that serves the rank over a socket. It makes the pages of one range of one file
 * (MADV_POPULATE_WRITE) until done or told to stop, and it holds the descriptors the rank hands
 * it until the rank has ended, then closes them: whatever their last close releases (the GPU
 * driver's context, kernels/backend_context.cu) is released after the rank's exit, not in it. */
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
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/h5io.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels refuse it: nothing is made */
#endif

/* What the rank says, one byte each (a job's range follows its byte; descriptors come with
 * theirs), and the helper's one answer. */
enum { TELL_JOB = 'J', TELL_STOP = 'S', TELL_DESCRIPTORS = 'D', ANSWER_STOPPED = 'A' };

typedef struct {
  off_t offset;
  uint64_t bytes;
  int workers;
  char path[PATH_MAX];
} populate_job;

/* The rank's side: the helper's pid and the socket to it (-1: none); whether it was told a range,
 * told to stop populating, and said it had; whether it holds descriptors (then it ends after this
 * process, not waited for). */
static pid_t helper = -1;
static int to_helper = -1;
static int job_told, stop_told, stop_heard, holds_descriptors;

/* The helper's side: the mapping its workers populate, each its share, until `stop`. */
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

/* The helper's populating: its range's mapping and workers. */
typedef struct {
  worker_share shares[H5G_POPULATE_WORKERS];
  pthread_t ids[H5G_POPULATE_WORKERS];
  int stop, started, told;
  char *start;
  size_t bytes;
} populating;

static int receive_job(int socket_fd, populate_job *job) {
  size_t got = 0;
  while (got < sizeof *job) {
    ssize_t n = read(socket_fd, (char *)job + got, sizeof *job - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    got += (size_t)n;
  }
  job->path[PATH_MAX - 1] = '\0';
  return job->workers >= 1 && job->workers <= H5G_POPULATE_WORKERS;
}

/* The range is allocated first, as the write's mapping is (io/direct.c: on tmpfs that makes the
 * pages themselves), then its workers start. */
static void populate_begin(const populate_job *job, populating *p) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  off_t begin = job->offset / (off_t)page * (off_t)page;
  p->bytes = (size_t)(job->offset - begin) + job->bytes;
  int fd = open(job->path, O_RDWR | O_CLOEXEC);
  if (fd >= 0 && fallocate(fd, 0, begin, (off_t)p->bytes) == 0) {
    void *start = mmap(NULL, p->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, begin);
    p->start = start == MAP_FAILED ? NULL : start;
  }
  if (fd >= 0) close(fd); /* the mapping keeps the file */
  if (!p->start) return;
  (void)madvise(p->start, p->bytes, MADV_HUGEPAGE); /* as the write maps it (io/direct.c) */
  for (; p->started < job->workers; p->started++) {
    p->shares[p->started] =
        (worker_share){p->start, p->bytes, page, job->workers, p->started, &p->stop};
    if (pthread_create(&p->ids[p->started], NULL, populate_share, &p->shares[p->started]) != 0)
      break;
  }
}

/* Its workers stop within a step; the pages they made stay in the page cache. */
static void populate_end(populating *p) {
  __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < p->started; i++) pthread_join(p->ids[i], NULL);
  p->started = 0;
  if (p->start) munmap(p->start, p->bytes);
  p->start = NULL;
}

/* Room for the descriptors of one message, aligned as a control message header. */
typedef union {
  char bytes[CMSG_SPACE(sizeof(int) * H5G_HELPER_DESCRIPTORS)];
  struct cmsghdr align;
} descriptor_room;

/* A message of the bytes `part` names, with `control_bytes` of `room` (0: none) beside them. */
static struct msghdr message(struct iovec *part, descriptor_room *room, size_t control_bytes) {
  struct msghdr m;
  memset(&m, 0, sizeof m);
  m.msg_iov = part;
  m.msg_iovlen = 1;
  m.msg_control = control_bytes ? room->bytes : NULL;
  m.msg_controllen = control_bytes;
  return m;
}

/* One byte from the rank into *tag, the descriptors that came with it added to held[] (those
 * past H5G_HELPER_DESCRIPTORS closed); 0 once the rank has ended. */
static int receive_tag(int socket_fd, char *tag, int *held, int *nheld) {
  descriptor_room room;
  struct iovec part = {tag, 1};
  struct msghdr m = message(&part, &room, sizeof room.bytes);
  ssize_t n;
  do n = recvmsg(socket_fd, &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  for (struct cmsghdr *c = n == 1 ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < count; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (*nheld < H5G_HELPER_DESCRIPTORS) held[(*nheld)++] = fd;
      else close(fd);
    }
  }
  return n == 1;
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

/* The helper's life: what the rank tells it, until the rank has ended (its socket reads as closed
 * only after the kernel has torn down the rank's memory, whose mappings of a descriptor's file
 * keep it open: the helper's close is then the last one). Forked with SIGINT and SIGTERM
 * blocked: their default actions are restored before they are let through, so the rank's
 * handlers never run here. */
static _Noreturn void helper_main(int socket_fd, const sigset_t *unblocked) {
  populating p;
  populate_job job;
  int held[H5G_HELPER_DESCRIPTORS], nheld = 0;
  char tag, stopped = ANSWER_STOPPED;
  memset(&p, 0, sizeof p);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  sigprocmask(SIG_SETMASK, unblocked, NULL);
  keep_only_socket(socket_fd);
  while (receive_tag(socket_fd, &tag, held, &nheld)) {
    if (tag == TELL_JOB) {
      if (!receive_job(socket_fd, &job)) break;
      if (!p.told) populate_begin(&job, &p); /* one range, and none after a stop */
      p.told = 1;
    } else if (tag == TELL_STOP) {
      p.told = 1;
      populate_end(&p);
      if (send(socket_fd, &stopped, 1, MSG_NOSIGNAL) != 1) break;
    }
  }
  populate_end(&p);
  for (int i = 0; i < nheld; i++) close(held[i]);
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

int h5g_helper_fork(void) {
  int fds[2];
  sigset_t blocked, unblocked;
  if (helper > 0 || !one_thread() || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return 0;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  sigprocmask(SIG_BLOCK, &blocked, &unblocked);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    helper_main(fds[1], &unblocked);
  }
  sigprocmask(SIG_SETMASK, &unblocked, NULL);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return 0;
  }
  helper = pid;
  to_helper = fds[0];
  job_told = stop_told = stop_heard = holds_descriptors = 0;
  return 1;
}

/* Sends bytes [0, size) and, with the first, the descriptors given (MSG_NOSIGNAL: a helper gone
 * is no SIGPIPE for the rank). 1 when all went. */
static int tell(const void *bytes, size_t size, const int *fds, int count) {
  descriptor_room room;
  size_t sent = 0;
  if (to_helper < 0 || count < 0 || count > H5G_HELPER_DESCRIPTORS) return 0;
  memset(&room, 0, sizeof room);
  while (sent < size) {
    struct iovec part = {(char *)bytes + sent, size - sent};
    const int with_fds = sent == 0 && count > 0;
    struct msghdr m =
        message(&part, &room, with_fds ? CMSG_SPACE(sizeof(int) * (size_t)count) : 0);
    if (with_fds) {
      struct cmsghdr *c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
      memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)count);
    }
    ssize_t n = sendmsg(to_helper, &m, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    sent += (size_t)n;
  }
  return 1;
}

int h5g_populate_ready(void) { return to_helper >= 0 && !job_told && !stop_told; }

int h5g_populate_start(const char *path, off_t offset, uint64_t bytes, int workers) {
  char tag = TELL_JOB;
  populate_job job;
  if (!h5g_populate_ready() || bytes == 0 || strlen(path) >= sizeof job.path) return 0;
  memset(&job, 0, sizeof job);
  job.offset = offset;
  job.bytes = bytes;
  job.workers = workers < 1 ? 1 : workers > H5G_POPULATE_WORKERS ? H5G_POPULATE_WORKERS : workers;
  strcpy(job.path, path);
  job_told = 1;
  /* the tag, then the job: the helper reads them in turn */
  return tell(&tag, 1, NULL, 0) && tell(&job, sizeof job, NULL, 0);
}

void h5g_populate_stop(void) {
  char tag = TELL_STOP;
  if (to_helper < 0 || stop_told) return;
  stop_told = 1;
  if (!tell(&tag, 1, NULL, 0)) stop_heard = 1; /* gone: nothing to wait for */
}

void h5g_populate_finish(void) {
  char answer;
  h5g_populate_stop();
  while (to_helper >= 0 && !stop_heard) {
    ssize_t n = read(to_helper, &answer, 1);
    if (n < 0 && errno == EINTR) continue;
    stop_heard = 1; /* its answer, or its end */
  }
}

int h5g_helper_hand_over(const int *fds, int count) {
  char tag = TELL_DESCRIPTORS;
  int placeholder = -1, done = 0;
  if (count < 1 || count > H5G_HELPER_DESCRIPTORS) return 0;
  /* The numbers stay taken, for whatever still calls on them before the exit, by an eventfd that
   * never reads as ready: a thread polling one of them sleeps (on /dev/null, always ready, the
   * CUDA driver's event thread spun a core until the exit). */
  placeholder = eventfd(0, EFD_CLOEXEC);
  if (placeholder < 0 || !tell(&tag, 1, fds, count)) goto done;
  for (int i = 0; i < count; i++) (void)dup3(placeholder, fds[i], O_CLOEXEC);
  holds_descriptors = done = 1;
done:
  if (placeholder >= 0) close(placeholder);
  return done;
}

void h5g_helper_end(void) {
  if (holds_descriptors) return; /* it ends after this process */
  if (to_helper >= 0) close(to_helper);
  to_helper = -1;
  while (helper > 0 && waitpid(helper, NULL, 0) < 0 && errno == EINTR)
    continue;
  helper = -1;
}
