/* fallocate(2) is a Linux call */
#define _GNU_SOURCE
#include "io/direct.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/parallel.h"

/* A shared writable mapping of the file bytes a mapped write covers. */
typedef struct {
  char *start;  /* NULL: none (write with pwrite) */
  size_t bytes;
  off_t begin;  /* the page-aligned file offset it starts at */
} file_mapping;

typedef struct {
  int fd, writing, error;
  char *buf;
  size_t bytes;
  off_t offset;
  const file_mapping *map; /* mapped writes: copied into it; else NULL */
} part;

/* A page of a shared mapping that the kernel cannot provide (an I/O error reading the edge page,
 * the file truncated by another process, a copy-on-write file system out of space) raises SIGBUS
 * in the thread that touches it: that thread's copy jumps back and reports EIO instead of killing
 * the rank. volatile: the stores around the memcpy must stay (at -O3 they were optimised away). */
static __thread sigjmp_buf *volatile bus_jump;
static __thread const file_mapping *volatile bus_map;
static struct sigaction saved_bus; /* the action before ours: every other SIGBUS goes there */

static void on_bus_error(int sig, siginfo_t *info, void *context) {
  const file_mapping *m = bus_map;
  char *at = info ? (char *)info->si_addr : NULL;
  if (bus_jump && m && at >= m->start && at < m->start + m->bytes) siglongjmp(*bus_jump, 1);
  if (saved_bus.sa_flags & SA_SIGINFO) {
    saved_bus.sa_sigaction(sig, info, context);
  } else if (saved_bus.sa_handler != SIG_DFL && saved_bus.sa_handler != SIG_IGN) {
    saved_bus.sa_handler(sig);
  } else { /* the default action: the faulting access runs again without our handler */
    sigaction(sig, &saved_bus, NULL);
  }
}

static void copy_into_mapping(part *p) {
  sigjmp_buf jump;
  if (sigsetjmp(jump, 1)) { /* 1: the signal mask comes back too, SIGBUS unblocked */
    bus_jump = NULL;
    bus_map = NULL;
    p->error = EIO;
    return;
  }
  bus_map = p->map;
  bus_jump = &jump;
  memcpy(p->map->start + (p->offset - p->map->begin), p->buf, p->bytes);
  bus_jump = NULL;
  bus_map = NULL;
}

static void *move_part(void *arg) {
  part *p = arg;
  if (p->map) {
    copy_into_mapping(p);
    return NULL;
  }
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

/* One piece of a transfer, which part p of its parts moves a share of. */
typedef struct {
  part whole;
  off_t unit; /* each part's share starts and ends on a multiple of it */
  int error;  /* the first part's errno value */
  pthread_mutex_t lock;
} piece_job;

enum { PAGE = 4096 };

off_t h5g_direct_shared_unit(long blksize) {
  off_t block = blksize > 0 ? (off_t)blksize : PAGE;
  return (H5G_DIRECT_SHARED_MIN_BYTES + block - 1) / block * block;
}

void h5g_direct_split(off_t offset, size_t bytes, off_t unit, int part, int parts, off_t *from,
                      off_t *to) {
  off_t first_unit = offset / unit, end = offset + (off_t)bytes;
  size_t unit_from, unit_to;
  h5g_share((size_t)((end + unit - 1) / unit - first_unit), part, parts, &unit_from, &unit_to);
  *from = (first_unit + (off_t)unit_from) * unit;
  *to = (first_unit + (off_t)unit_to) * unit;
  if (*from < offset) *from = offset;
  if (*to > end) *to = end;
  if (*to < *from) *to = *from;
}

off_t h5g_direct_written_end(off_t piece_end, off_t end, off_t unit) {
  return piece_end >= end ? end : piece_end / unit * unit;
}

/* Part p's share: whole units of the file (pages, or a SHARED write's unit), so no two threads
 * write one page or file system block. */
static void move_share(void *arg, int p, int parts) {
  piece_job *job = arg;
  part share = job->whole;
  off_t from, to;
  h5g_direct_split(share.offset, share.bytes, job->unit, p, parts, &from, &to);
  if (to <= from) return;
  share.buf += from - share.offset;
  share.bytes = (size_t)(to - from);
  share.offset = from;
  move_part(&share);
  pthread_mutex_lock(&job->lock);
  if (share.error && !job->error) job->error = share.error;
  pthread_mutex_unlock(&job->lock);
}

/* One piece, split among the threads in units of `unit` bytes of the file (into the mapping
 * when map is not NULL); returns an errno value. */
static int move_piece(int fd, off_t offset, char *buf, size_t bytes, int writing,
                      const file_mapping *map, off_t unit, int threads) {
  piece_job job = {{fd, writing, 0, buf, bytes, offset, map}, unit, 0,
                   PTHREAD_MUTEX_INITIALIZER};
  size_t units = (bytes + (size_t)unit - 1) / (size_t)unit;
  h5g_parallel(units < (size_t)threads ? (int)units : threads, move_share, &job);
  pthread_mutex_destroy(&job.lock);
  return job.error;
}

/* Maps file bytes [offset, offset + bytes) of fd for writing, from the page boundary below. The
 * range's blocks are allocated first (which also extends the file to its end), so no page of it
 * can fail for want of space once mapped. Returns an errno value; a file system without
 * fallocate (EOPNOTSUPP) or a failed mmap leaves m->start NULL: pwrite then. */
static int map_for_writing(int fd, off_t offset, size_t bytes, file_mapping *m) {
  m->start = NULL;
  m->begin = offset / PAGE * PAGE;
  m->bytes = (size_t)(offset - m->begin) + bytes;
  if (fallocate(fd, 0, m->begin, (off_t)m->bytes) != 0)
    return errno == ENOSPC || errno == EFBIG || errno == EDQUOT || errno == EIO ? errno : 0;
  void *p = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, m->begin);
  if (p == MAP_FAILED) return 0;
  /* Large page-cache folios: copied in 128 MiB pieces, threads fault a mapping in one 4 KiB
   * page at a time without this advice, many times slower
   * (bench/RESULTS.md, "How to write the output"). Advice only: where it is refused the copy
   * still works. */
  (void)madvise(p, m->bytes, MADV_HUGEPAGE);
  m->start = p;
  return 0;
}

int h5g_direct_transfer(const char *path, off_t offset, char *buf, uint64_t rows, size_t row_bytes,
                        h5g_direct_how how, int threads, uint64_t max_piece_bytes,
                        h5g_io_piece_fn each, void *ctx, const char *where) {
  int rc = H5G_OK, error = 0, writing = how != H5G_DIRECT_READ;
  uint64_t piece_bytes = max_piece_bytes < H5G_DIRECT_PIECE_BYTES ? max_piece_bytes
                                                                  : H5G_DIRECT_PIECE_BYTES;
  uint64_t piece = piece_bytes / row_bytes ? piece_bytes / row_bytes : 1;
  int fd = -1;
  off_t unit = PAGE, hold = 1, end = offset + (off_t)(rows * row_bytes), written = offset;
  uint64_t moved = 0; /* rows whose piece was reported moved */
  struct stat st;
  file_mapping map = {NULL, 0, 0};
  struct sigaction bus_action = {.sa_sigaction = on_bus_error, .sa_flags = SA_SIGINFO};
  if (threads < 1) threads = 1;
  if (rows == 0) goto done;
  fd = open(path, how == H5G_DIRECT_READ ? O_RDONLY : how == H5G_DIRECT_MAPPED ? O_RDWR : O_WRONLY);
  if (fd < 0 && how == H5G_DIRECT_MAPPED) { /* a mapping needs read access too: pwrite then */
    how = H5G_DIRECT_PWRITE;
    fd = open(path, O_WRONLY);
  }
  if (fd < 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot open the file for direct %s: %s (%s)",
             writing ? "writing" : "reading", strerror(errno), where);
  if (how == H5G_DIRECT_MAPPED) {
    error = map_for_writing(fd, offset, rows * row_bytes, &map);
    if (error)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot write the dataset: %s (%s)", strerror(error), where);
    if (map.start) {
      sigemptyset(&bus_action.sa_mask);
      sigaction(SIGBUS, &bus_action, &saved_bus);
    }
  }
  if (how == H5G_DIRECT_SHARED)
    hold = unit = h5g_direct_shared_unit(fstat(fd, &st) == 0 ? (long)st.st_blksize : 0);
  for (uint64_t first = 0; first < rows; first += piece) {
    uint64_t count = rows - first < piece ? rows - first : piece;
    if (each) CHECK(each(ctx, first, count, 0));
    off_t to = h5g_direct_written_end(offset + (off_t)((first + count) * row_bytes), end, hold);
    error = to > written ? move_piece(fd, written, buf + (written - offset), (size_t)(to - written),
                                      writing, map.start ? &map : NULL, unit, threads)
                         : 0;
    if (error)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot %s the dataset: %s (%s)", writing ? "write" : "read",
               strerror(error), where);
    /* the piece's writeback begun now, behind the next pieces, so the fdatasync below waits
     * for the last ones only (a hint: where it fails, fdatasync does all of it) */
    if (how == H5G_DIRECT_SHARED && to > written)
      sync_file_range(fd, written, to - written, SYNC_FILE_RANGE_WRITE);
    if (to > written) written = to;
    for (; moved < first + count; moved += piece) { /* the pieces now wholly in the file */
      uint64_t n = rows - moved < piece ? rows - moved : piece;
      if (offset + (off_t)((moved + n) * row_bytes) > written) break;
      if (each) CHECK(each(ctx, moved, n, 1));
    }
  }
  /* the rank's bytes on stable storage (an NFS server's) before the ranks agree on the write */
  if (how == H5G_DIRECT_SHARED && fdatasync(fd) != 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot write the dataset: fdatasync: %s (%s)", strerror(errno),
             where);
done:
  if (map.start) {
    /* the pages stay in the page cache, dirty, as pwrite leaves them: munmap only unmaps */
    munmap(map.start, map.bytes);
    sigaction(SIGBUS, &saved_bus, NULL);
  }
  if (fd >= 0 && close(fd) != 0 && rc == H5G_OK)
    rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "cannot close the file: %s (%s)",
                       strerror(errno), where);
  return rc;
}
