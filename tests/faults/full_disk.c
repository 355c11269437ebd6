/* full_disk: an LD_PRELOAD shim for the full-disk tests (faults.full_disk, badinput.full_disk).
 * Writes to a file whose path contains ".h5gsort-" (the temporary output and what MPI-IO puts
 * beside it) fail with ENOSPC once this process has written H5G_SHIM_FULL_AFTER bytes to such
 * files (default 0: the first write fails); fallocate on them fails with ENOSPC, or with
 * EOPNOTSUPP (as on NFS: no reservation, the writes meet the full disk) when H5G_SHIM_FULL_WRITES
 * is non-empty. Each refused call is logged to the file H5G_SHIM_LOG names. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static unsigned long long written; /* to the matching files, by this process */

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))
typedef ssize_t (*write_fn)(int, const void *, size_t);

static void note(const char *call) {
  const char *log = getenv("H5G_SHIM_LOG");
  int fd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
  write_fn real_write = REAL("write", write_fn);
  if (fd < 0) return;
  if (real_write) {
    ssize_t wrote = real_write(fd, call, strlen(call));
    (void)wrote; /* a failed write leaves no line, and the test fails */
  }
  close(fd);
}

static int matches(int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t len = readlink(link, path, sizeof path - 1);
  if (len <= 0) return 0;
  path[len] = '\0';
  return strstr(path, ".h5gsort-") != NULL;
}

/* 1 when a write of `bytes` to fd must fail (errno set); else it is counted. */
static int refuse(int fd, size_t bytes, const char *call) {
  if (!matches(fd)) return 0;
  const char *after = getenv("H5G_SHIM_FULL_AFTER");
  unsigned long long limit = after ? strtoull(after, NULL, 10) : 0;
  if (written + bytes <= limit) {
    written += bytes;
    return 0;
  }
  note(call);
  errno = ENOSPC;
  return 1;
}

static size_t iov_bytes(const struct iovec *iov, int count) {
  size_t bytes = 0;
  for (int i = 0; i < count; i++) bytes += iov[i].iov_len;
  return bytes;
}

ssize_t write(int fd, const void *buf, size_t count) {
  if (refuse(fd, count, "write\n")) return -1;
  return REAL("write", write_fn)(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
  if (refuse(fd, count, "pwrite\n")) return -1;
  return REAL("pwrite", ssize_t (*)(int, const void *, size_t, off_t))(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
  if (refuse(fd, count, "pwrite64\n")) return -1;
  return REAL("pwrite64", ssize_t (*)(int, const void *, size_t, off_t))(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
  if (refuse(fd, iov_bytes(iov, count), "writev\n")) return -1;
  return REAL("writev", ssize_t (*)(int, const struct iovec *, int))(fd, iov, count);
}

ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset) {
  if (refuse(fd, iov_bytes(iov, count), "pwritev\n")) return -1;
  return REAL("pwritev", ssize_t (*)(int, const struct iovec *, int, off_t))(fd, iov, count,
                                                                             offset);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int count, off_t offset) {
  if (refuse(fd, iov_bytes(iov, count), "pwritev64\n")) return -1;
  return REAL("pwritev64", ssize_t (*)(int, const struct iovec *, int, off_t))(fd, iov, count,
                                                                               offset);
}

static int refuse_allocation(int fd) {
  if (!matches(fd)) return 0;
  const char *writes = getenv("H5G_SHIM_FULL_WRITES");
  int error = writes && writes[0] ? EOPNOTSUPP : ENOSPC;
  if (error == ENOSPC) note("fallocate\n");
  errno = error;
  return 1;
}

int fallocate(int fd, int mode, off_t offset, off_t len) {
  if (refuse_allocation(fd)) return -1;
  return REAL("fallocate", int (*)(int, int, off_t, off_t))(fd, mode, offset, len);
}

int fallocate64(int fd, int mode, off_t offset, off_t len) {
  if (refuse_allocation(fd)) return -1;
  return REAL("fallocate64", int (*)(int, int, off_t, off_t))(fd, mode, offset, len);
}
