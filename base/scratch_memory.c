#define _GNU_SOURCE
#include "base/scratch_memory.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/error.h"

static char scratch_dir[PATH_MAX];
static int scratch_set;

int h5g_scratch_use(const char *dir) {
  int rc = H5G_OK;
  scratch_set = 0;
  if (!dir) goto done;
  if (strlen(dir) >= sizeof scratch_dir)
    H5G_FAIL(H5G_ERR_USAGE, "scratch directory path too long (%s)", dir);
  memcpy(scratch_dir, dir, strlen(dir) + 1);
  scratch_set = 1;
done:
  return rc;
}

const char *h5g_scratch_dir(void) { return scratch_set ? scratch_dir : NULL; }

/* A new file of no name in the directory in use, read-write. */
static int open_nameless(int *fd) {
  int rc = H5G_OK;
  *fd = open(scratch_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (*fd >= 0) goto done;
  /* file systems without O_TMPFILE (NFS, some parallel ones): a name, removed at once */
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/.h5gsort-scratch-XXXXXX", scratch_dir);
  *fd = mkostemp(path, O_CLOEXEC);
  if (*fd < 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot make a scratch file in %s: %s", scratch_dir,
             strerror(errno));
  unlink(path);
done:
  return rc;
}

/* Reserves `bytes` of fd's file (not only sizes it: a store into a hole of a full file system is
 * a SIGBUS) and maps it at `at` (or where the kernel puts it). */
static int reserve_and_map(int fd, size_t bytes, int reserve, void *at, void **p) {
  int rc = H5G_OK;
  if (reserve && fallocate(fd, 0, 0, (off_t)bytes) != 0) {
    if (errno != EOPNOTSUPP && errno != ENOSYS)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot reserve %.2f GiB of scratch in %s: %s",
               (double)bytes / (double)(1u << 30), scratch_dir, strerror(errno));
    if (ftruncate(fd, (off_t)bytes) != 0)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot size a scratch file in %s: %s", scratch_dir,
               strerror(errno));
  }
  void *mapped = mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | (at ? MAP_FIXED : 0), fd, 0);
  if (mapped == MAP_FAILED)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot map a scratch file of %zu bytes in %s: %s", bytes,
             scratch_dir, strerror(errno));
  *p = mapped;
done:
  return rc;
}

int h5g_scratch_map(size_t bytes, void *at, void **p) {
  int rc = H5G_OK, fd = -1;
  *p = NULL;
  if (bytes == 0) goto done;
  if (!scratch_set) H5G_FAIL(H5G_ERR_RUNTIME, "internal error: no scratch directory in use");
  CHECK(open_nameless(&fd));
  CHECK(reserve_and_map(fd, bytes, 1, at, p));
done:
  if (fd >= 0) close(fd); /* the mapping keeps the file */
  return rc;
}

int h5g_scratch_map_named(const char *path, size_t bytes, int reuse, void *at, void **p,
                          int *nameless) {
  int rc = H5G_OK, fd = -1;
  struct stat st;
  *p = NULL;
  *nameless = -1;
  if (bytes == 0) goto done;
  if (!reuse) { /* in path's directory (the one its name will be linked in) */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    fd = open(slash ? dir : ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
      CHECK(reserve_and_map(fd, bytes, 1, at, p));
      *nameless = fd;
      fd = -1;
      goto done;
    }
  }
  fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | (reuse ? 0 : O_CREAT | O_TRUNC), 0600);
  if (fd < 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot %s the scratch file %s: %s", reuse ? "open" : "make",
             path, strerror(errno));
  /* a shorter file would be a SIGBUS where the mapping runs past its end */
  if (reuse && (fstat(fd, &st) != 0 || (uint64_t)st.st_size != bytes))
    H5G_FAIL(H5G_ERR_RUNTIME, "the scratch file %s is not of the %zu bytes it was made with",
             path, bytes);
  CHECK(reserve_and_map(fd, bytes, !reuse, at, p));
done:
  if (fd >= 0) close(fd);
  return rc;
}

int h5g_scratch_link(int fd, const char *path) {
  int rc = H5G_OK;
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  /* through /proc: linkat's AT_EMPTY_PATH needs a privilege */
  if (linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0 &&
      (errno != EEXIST || unlink(path) != 0 ||
       linkat(AT_FDCWD, self, AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0))
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot name the scratch file %s: %s", path, strerror(errno));
done:
  close(fd);
  return rc;
}

int h5g_scratch_free_bytes(const char *dir, uint64_t *free_bytes) {
  int rc = H5G_OK;
  struct statvfs s;
  struct stat st;
  if (stat(dir, &st) != 0 || statvfs(dir, &s) != 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot use the scratch directory %s: %s", dir, strerror(errno));
  if (!S_ISDIR(st.st_mode))
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot use the scratch directory %s: %s", dir, strerror(ENOTDIR));
  *free_bytes = (uint64_t)s.f_bavail * (uint64_t)s.f_frsize;
done:
  return rc;
}

int h5g_scratch_in_memory(const char *dir) {
  struct statfs s;
  return statfs(dir, &s) == 0 && (s.f_type == TMPFS_MAGIC || s.f_type == RAMFS_MAGIC);
}
