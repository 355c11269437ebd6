/* The raw I/O bound of bench/e2e.sh: the bytes h5gsort reads and writes, moved without HDF5 or
 * MPI. Reads BYTES at OFFSET of IN with THREADS threads of pread into memory made resident
 * first (by the same threads), then writes them to a new file OUT with THREADS threads of pwrite (buffered, as
 * h5gsort writes), and prints the seconds of each.
 *   bench_raw_io IN OFFSET BYTES OUT THREADS */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int fd, writing;
  char *buf;
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
  if (p->fd < 0) { /* the touch pass: make the part resident */
    memset(p->buf, 0, p->bytes);
    return NULL;
  }
  for (size_t done = 0; done < p->bytes;) {
    ssize_t n = p->writing ? pwrite(p->fd, p->buf + done, p->bytes - done, p->offset + (off_t)done)
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

/* Moves [0, bytes) of buf to or from the file at file_offset with `threads` threads. */
static int move_all(int fd, int writing, char *buf, size_t bytes, off_t file_offset, int threads) {
  pthread_t ids[256];
  part parts[256];
  size_t each = (bytes / (size_t)threads + 4095) / 4096 * 4096;
  int error = 0;
  for (int i = 0; i < threads; i++) {
    size_t begin = (size_t)i * each < bytes ? (size_t)i * each : bytes;
    parts[i] = (part){fd, writing, buf + begin, bytes - begin < each ? bytes - begin : each,
                      file_offset + (off_t)begin, 0};
    if (pthread_create(&ids[i], NULL, move, &parts[i]) != 0) return ENOMEM;
  }
  for (int i = 0; i < threads; i++) {
    pthread_join(ids[i], NULL);
    if (!error) error = parts[i].error;
  }
  return error;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: bench_raw_io IN OFFSET BYTES OUT THREADS\n");
    return 2;
  }
  off_t offset = (off_t)strtoll(argv[2], NULL, 10);
  size_t bytes = (size_t)strtoull(argv[3], NULL, 10);
  int threads = atoi(argv[5]);
  if (threads < 1 || threads > 256) threads = 1;
  char *buf = malloc(bytes ? bytes : 1);
  if (!buf) return 1;
  int in = open(argv[1], O_RDONLY), out = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0) {
    perror("open");
    return 1;
  }
  /* resident first, by the same threads, as h5gsort's helper threads make its slice buffers */
  int error = move_all(-1, 0, buf, bytes, 0, threads);
  double t0 = now();
  if (!error) error = move_all(in, 0, buf, bytes, offset, threads);
  double t1 = now();
  if (!error) error = move_all(out, 1, buf, bytes, 0, threads);
  if (close(out) != 0 && !error) error = errno;
  double t2 = now();
  if (error) {
    fprintf(stderr, "bench_raw_io: %s\n", strerror(error));
    return 1;
  }
  printf("read %.3f write %.3f threads %d bytes %zu\n", t1 - t0, t2 - t1, threads, bytes);
  close(in);
  free(buf);
  return 0;
}
