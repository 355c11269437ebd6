/* The raw I/O bound of bench/e2e.sh: the bytes h5gsort reads and writes, moved without HDF5 or
 * MPI. Reads BYTES at OFFSET of IN with THREADS threads of pread, then writes them to a new file
 * OUT with THREADS threads, and prints the seconds of each.
 *   bench_raw_io IN OFFSET BYTES OUT THREADS [WRITE [TOUCH]]
 * WRITE: how the output is written (issue 15, item 3):
 *   pwrite  buffered pwrite, each thread its part (default; as h5gsort writes)
 *   mmap    the file sized first (fallocate), mapped shared, each thread copies its part in
 *           (one copy each: no pieces, no huge-page advice, unlike h5gsort's io/direct.c)
 *   mmap-huge       the same with io/direct.c's huge-page advice (large page-cache folios)
 *   mmap-populated  mmap-huge, the threads first populating their parts' pages
 *           (MADV_POPULATE_WRITE, Linux 5.14), timed apart and printed as "populate": what the
 *           copy costs where the output's pages were made beforehand (in time that is idle, as
 *           a wait for the GPU context)
 *   direct  O_DIRECT pwrite from the 4 KiB-aligned buffer (the tail below 4 KiB buffered)
 * TOUCH: prefault (default): the buffer is made resident by the threads before the timed read;
 *   none: the read's own page faults are timed with it (what a fresh buffer costs). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { MAX_THREADS = 256, BLOCK = 4096 };
typedef enum { TOUCH, READ, WRITE, COPY_IN, POPULATE } action;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

typedef struct {
  action what;
  int fd;
  char *buf, *mapped; /* mapped: COPY_IN's destination */
  size_t bytes;
  off_t offset;
  int error;
} part;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *move(void *arg) {
  part *p = arg;
  if (p->what == TOUCH) { /* make the part resident */
    memset(p->buf, 0, p->bytes);
    return NULL;
  }
  if (p->what == COPY_IN) {
    memcpy(p->mapped + p->offset, p->buf, p->bytes);
    return NULL;
  }
  if (p->what == POPULATE) {
    if (p->bytes && madvise(p->mapped + p->offset, p->bytes, MADV_POPULATE_WRITE) != 0)
      p->error = errno;
    return NULL;
  }
  for (size_t done = 0; done < p->bytes;) {
    ssize_t n = p->what == WRITE
                    ? pwrite(p->fd, p->buf + done, p->bytes - done, p->offset + (off_t)done)
                    : pread(p->fd, p->buf + done, p->bytes - done, p->offset + (off_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      p->error = n < 0 ? errno : EIO;
      return NULL;
    }
    done += (size_t)n;
  }
  return NULL;
}

/* [0, bytes) of buf with `threads` threads, each a BLOCK-aligned part at file_offset + its
 * position (COPY_IN: into mapped + that). */
static int move_all(action what, int fd, char *mapped, char *buf, size_t bytes, off_t file_offset,
                    int threads) {
  pthread_t ids[MAX_THREADS];
  part parts[MAX_THREADS];
  size_t each = ((bytes + (size_t)threads - 1) / (size_t)threads + BLOCK - 1) / BLOCK * BLOCK;
  int error = 0;
  for (int i = 0; i < threads; i++) {
    size_t begin = (size_t)i * each < bytes ? (size_t)i * each : bytes;
    parts[i] = (part){what, fd, buf + begin, mapped, bytes - begin < each ? bytes - begin : each,
                      file_offset + (off_t)begin, 0};
    if (pthread_create(&ids[i], NULL, move, &parts[i]) != 0) return ENOMEM;
  }
  for (int i = 0; i < threads; i++) {
    pthread_join(ids[i], NULL);
    if (!error) error = parts[i].error;
  }
  return error;
}

/* Seconds the populate of mmap-populated took (0 in the other modes). */
static double populate_seconds;

static int write_out(const char *path, const char *mode, char *buf, size_t bytes, int threads) {
  int error = 0;
  if (strncmp(mode, "mmap", 4) == 0) {
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    char *mapped = NULL;
    if (fd < 0) return errno;
    if (bytes && (error = posix_fallocate(fd, 0, (off_t)bytes)) == 0 &&
        (mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
      error = errno;
      mapped = NULL;
    }
    if (mapped && strcmp(mode, "mmap") != 0) (void)madvise(mapped, bytes, MADV_HUGEPAGE);
    if (!error && strcmp(mode, "mmap-populated") == 0) {
      double start = now();
      error = move_all(POPULATE, fd, mapped, buf, bytes, 0, threads);
      populate_seconds = now() - start;
    }
    if (!error) error = move_all(COPY_IN, fd, mapped, buf, bytes, 0, threads);
    if (mapped) munmap(mapped, bytes);
    return close(fd) != 0 && !error ? errno : error;
  }
  int direct = strcmp(mode, "direct") == 0;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
  if (fd < 0) return errno;
  size_t aligned = direct ? bytes / BLOCK * BLOCK : bytes;
  error = move_all(WRITE, fd, NULL, buf, aligned, 0, threads);
  if (!error && aligned < bytes) { /* the tail, buffered */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_DIRECT);
    error = move_all(WRITE, fd, NULL, buf + aligned, bytes - aligned, (off_t)aligned, 1);
  }
  return close(fd) != 0 && !error ? errno : error;
}

int main(int argc, char **argv) {
  if (argc < 6 || argc > 8) {
    fprintf(stderr, "usage: bench_raw_io IN OFFSET BYTES OUT THREADS "
                    "[pwrite|mmap|mmap-huge|mmap-populated|direct [prefault|none]]\n");
    return 2;
  }
  off_t offset = (off_t)strtoll(argv[2], NULL, 10);
  size_t bytes = (size_t)strtoull(argv[3], NULL, 10);
  int threads = atoi(argv[5]);
  const char *mode = argc > 6 ? argv[6] : "pwrite";
  int prefault = argc <= 7 || strcmp(argv[7], "none") != 0;
  if (threads < 1 || threads > MAX_THREADS) threads = 1;
  char *buf = aligned_alloc(2 << 20, (bytes + (2 << 20) - 1) / (2 << 20) * (2 << 20) + (2 << 20));
  if (!buf) return 1;
  madvise(buf, bytes, MADV_HUGEPAGE);
  int in = open(argv[1], O_RDONLY);
  if (in < 0) {
    perror("open");
    return 1;
  }
  /* resident first, by the same threads, as h5gsort's helper threads make its slice buffers */
  int error = prefault ? move_all(TOUCH, -1, NULL, buf, bytes, 0, threads) : 0;
  double t0 = now();
  if (!error) error = move_all(READ, in, NULL, buf, bytes, offset, threads);
  double t1 = now();
  if (!error) error = write_out(argv[4], mode, buf, bytes, threads);
  double t2 = now();
  if (error) {
    fprintf(stderr, "bench_raw_io: %s\n", strerror(error));
    return 1;
  }
  printf("read %.3f write %.3f (populate %.3f) threads %d bytes %zu write_mode %s touch %s\n",
         t1 - t0, t2 - t1 - populate_seconds, populate_seconds, threads, bytes, mode,
         prefault ? "prefault" : "none");
  close(in);
  free(buf);
  return 0;
}
