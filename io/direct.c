#include "io/direct.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"

enum { MAX_THREADS = 256 };

typedef struct {
  int fd, writing, error;
  char *buf;
  size_t bytes;
  off_t offset;
} part;

static void *move_part(void *arg) {
  part *p = arg;
  for (size_t done = 0; done < p->bytes;) {
    ssize_t n = p->writing ? pwrite(p->fd, p->buf + done, p->bytes - done, p->offset + (off_t)done)
                           : pread(p->fd, p->buf + done, p->bytes - done, p->offset + (off_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      p->error = n < 0 ? errno : EIO; /* 0: the file ends inside the dataset */
      break;
    }
    done += (size_t)n;
  }
  return NULL;
}

/* One piece, split among the threads in page-aligned parts; returns an errno value. */
static int move_piece(int fd, off_t offset, char *buf, size_t bytes, int writing, int threads) {
  pthread_t ids[MAX_THREADS];
  part parts[MAX_THREADS];
  int started[MAX_THREADS] = {0}, error = 0;
  size_t nparts = (size_t)threads, each = (bytes / nparts + 4095) / 4096 * 4096;
  if (each == 0) each = 4096;
  for (size_t i = 0; i < nparts; i++) {
    size_t begin = i * each < bytes ? i * each : bytes;
    parts[i] = (part){fd, writing, 0, buf + begin, bytes - begin < each ? bytes - begin : each,
                      offset + (off_t)begin};
    if (i > 0 && parts[i].bytes) started[i] = pthread_create(&ids[i], NULL, move_part, &parts[i]) == 0;
  }
  move_part(&parts[0]);
  for (size_t i = 1; i < nparts; i++) {
    if (started[i]) pthread_join(ids[i], NULL);
    else move_part(&parts[i]); /* no thread: this one moves it */
  }
  for (size_t i = 0; i < nparts && !error; i++) error = parts[i].error;
  return error;
}

int h5g_direct_transfer(const char *path, off_t offset, char *buf, uint64_t rows, size_t row_bytes,
                        int writing, int threads, h5g_io_piece_fn each, void *ctx,
                        const char *where) {
  int rc = H5G_OK, error = 0;
  uint64_t piece_bytes = h5g_io_piece_bytes() < H5G_DIRECT_PIECE_BYTES ? h5g_io_piece_bytes()
                                                                       : H5G_DIRECT_PIECE_BYTES;
  uint64_t piece = piece_bytes / row_bytes ? piece_bytes / row_bytes : 1;
  int fd = -1;
  if (threads < 1) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if (rows == 0) goto done;
  fd = open(path, writing ? O_WRONLY : O_RDONLY);
  if (fd < 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot open the file for direct %s: %s (%s)",
             writing ? "writing" : "reading", strerror(errno), where);
  for (uint64_t first = 0; first < rows; first += piece) {
    uint64_t count = rows - first < piece ? rows - first : piece;
    if (each) CHECK(each(ctx, first, count, 0));
    error = move_piece(fd, offset + (off_t)(first * row_bytes), buf + first * row_bytes,
                       count * row_bytes, writing, threads);
    if (error)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot %s the dataset: %s (%s)", writing ? "write" : "read",
               strerror(error), where);
    if (each) CHECK(each(ctx, first, count, 1));
  }
done:
  if (fd >= 0 && close(fd) != 0 && rc == H5G_OK)
    rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "cannot close the file: %s (%s)",
                       strerror(errno), where);
  return rc;
}
