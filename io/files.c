/* fallocate(2) and FALLOC_FL_KEEP_SIZE are Linux calls */
#define _GNU_SOURCE
#include "io/files.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/error.h"

/* dirname() may modify its argument: work on a copy. */
static void directory_of(const char *path, char *dir, size_t len) {
  char copy[PATH_MAX];
  snprintf(copy, sizeof copy, "%s", path);
  snprintf(dir, len, "%s", dirname(copy));
}

/* Usage error unless a file can be created beside `path` ("output" or "report" says which). */
static int check_directory_of(const char *path, const char *what) {
  int rc = H5G_OK;
  struct stat dir_st;
  char dir[PATH_MAX];
  if (strlen(path) >= PATH_MAX - 64) H5G_FAIL(H5G_ERR_USAGE, "%s path too long (%s)", what, path);
  directory_of(path, dir, sizeof dir);
  if (stat(dir, &dir_st) != 0 || !S_ISDIR(dir_st.st_mode))
    H5G_FAIL(H5G_ERR_USAGE, "%s directory does not exist or is not a directory (%s)", what, dir);
  if (access(dir, W_OK | X_OK) != 0)
    H5G_FAIL(H5G_ERR_USAGE, "%s directory is not writable (%s)", what, dir);
done:
  return rc;
}

int h5g_files_check_report(const char *report) { return check_directory_of(report, "report"); }

int h5g_files_check_output(const char *input, const char *output, int force, int *same_as_input) {
  int rc = H5G_OK;
  struct stat out_st, in_st, link_st;
  *same_as_input = 0;
  CHECK(check_directory_of(output, "output"));
  /* stat() sees no file behind a dangling symbolic link, but the rename would replace the link */
  if (!force && lstat(output, &link_st) == 0 && S_ISLNK(link_st.st_mode) && stat(output, &out_st) != 0)
    H5G_FAIL(H5G_ERR_USAGE, "output exists (a dangling symbolic link); use --force to replace it (%s)",
             output);
  if (stat(output, &out_st) == 0) {
    if (S_ISDIR(out_st.st_mode)) H5G_FAIL(H5G_ERR_USAGE, "output is a directory (%s)", output);
    if (!force) H5G_FAIL(H5G_ERR_USAGE, "output exists; use --force to replace it (%s)", output);
    *same_as_input = stat(input, &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
                     in_st.st_ino == out_st.st_ino;
  }
done:
  return rc;
}

/* ".<base>.h5gsort-<host>-": the start of every temporary name of `output`. */
static void temp_prefix(const char *output, char *prefix, size_t len) {
  char copy[PATH_MAX], host[256] = "localhost";
  snprintf(copy, sizeof copy, "%s", output);
  gethostname(host, sizeof host - 1);
  snprintf(prefix, len, ".%s.h5gsort-%s-", basename(copy), host);
}

int h5g_files_temp_name(const char *output, char *name, size_t len) {
  int rc = H5G_OK;
  char dir[PATH_MAX], prefix[PATH_MAX];
  directory_of(output, dir, sizeof dir);
  temp_prefix(output, prefix, sizeof prefix);
  int used = snprintf(name, len, "%s/%s%ld.tmp", dir, prefix, (long)getpid());
  if (used < 0 || (size_t)used >= len) H5G_FAIL(H5G_ERR_USAGE, "output path too long (%s)", output);
done:
  return rc;
}

/* A killed rank's process can linger as a zombie when its parent is gone; that counts as dead. */
static int process_alive(long pid) {
  char path[64], stat_line[512];
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 0;
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 1;
  size_t got = fread(stat_line, 1, sizeof stat_line - 1, f);
  fclose(f);
  stat_line[got] = '\0';
  const char *state = strrchr(stat_line, ')'); /* "pid (comm) S ..." */
  return !(state && (state[2] == 'Z' || state[2] == 'X'));
}

int h5g_files_remove_stale(const char *output) {
  char dir[PATH_MAX], prefix[PATH_MAX], path[2 * PATH_MAX];
  int removed = 0;
  directory_of(output, dir, sizeof dir);
  temp_prefix(output, prefix, sizeof prefix);
  size_t plen = strlen(prefix);
  DIR *d = opendir(dir);
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char *end = NULL;
    if (strncmp(e->d_name, prefix, plen) != 0) continue;
    long pid = strtol(e->d_name + plen, &end, 10);
    if (pid <= 0 || strcmp(end, ".tmp") != 0) continue;
    if (process_alive(pid)) continue; /* its run may still be going */
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (unlink(path) == 0) removed++;
  }
  closedir(d);
  return removed;
}

int h5g_files_copy(const char *src, const char *dst) {
  int rc = H5G_OK, in = -1, out = -1;
  enum { CHUNK = 8 << 20 };
  char *buf = malloc(CHUNK);
  CHECK_ALLOC(buf, CHUNK);
  if ((in = open(src, O_RDONLY)) < 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot read input for the in-place copy: %s (%s)", strerror(errno), src);
  if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644)) < 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot create temporary file: %s (%s)", strerror(errno), dst);
  for (;;) {
    ssize_t got = read(in, buf, CHUNK);
    if (got < 0) H5G_FAIL(H5G_ERR_RUNTIME, "read failed: %s (%s)", strerror(errno), src);
    if (got == 0) break;
    for (ssize_t put = 0; put < got;) {
      ssize_t w = write(out, buf + put, (size_t)(got - put));
      if (w < 0) H5G_FAIL(H5G_ERR_RUNTIME, "write failed: %s (%s)", strerror(errno), dst);
      put += w;
    }
  }
  if (fsync(out) != 0) H5G_FAIL(H5G_ERR_RUNTIME, "fsync failed: %s (%s)", strerror(errno), dst);
done:
  if (out >= 0 && close(out) != 0 && rc == H5G_OK)
    rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "close failed: %s (%s)", strerror(errno), dst);
  if (in >= 0) close(in);
  free(buf);
  return rc;
}

int h5g_files_check_space(const char *output, unsigned long long bytes) {
  int rc = H5G_OK;
  char dir[PATH_MAX];
  struct rlimit limit;
  struct statvfs fs;
  directory_of(output, dir, sizeof dir);
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      bytes > (unsigned long long)limit.rlim_cur)
    H5G_FAIL(H5G_ERR_RUNTIME,
             "the output needs %llu bytes, over the file size limit of %llu bytes (ulimit -f) (%s)",
             bytes, (unsigned long long)limit.rlim_cur, output);
  if (statvfs(dir, &fs) == 0 && (unsigned long long)fs.f_bavail * fs.f_frsize < bytes)
    H5G_FAIL(H5G_ERR_RUNTIME, "the output needs %llu bytes, more than the %llu free in %s (%s)",
             bytes, (unsigned long long)fs.f_bavail * fs.f_frsize, dir, output);
done:
  return rc;
}

int h5g_files_reserve(const char *path, unsigned long long bytes) {
  int rc = H5G_OK;
  int fd = open(path, O_WRONLY);
  if (fd < 0) H5G_FAIL(H5G_ERR_RUNTIME, "cannot open the temporary file: %s (%s)", strerror(errno), path);
  if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)bytes) != 0 &&
      (errno == ENOSPC || errno == EFBIG || errno == EDQUOT))
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot reserve %llu bytes for the output: %s (%s)", bytes,
             strerror(errno), path);
  /* other errors (EOPNOTSUPP on NFS and older Lustre): no reservation, the writes still go on */
done:
  if (fd >= 0) close(fd);
  return rc;
}

int h5g_files_commit(const char *tmp, const char *output, int durable) {
  int rc = H5G_OK;
  char dir[PATH_MAX];
  struct stat written;
  int fd = open(tmp, O_WRONLY);
  /* give back blocks h5g_files_reserve held past the end: a truncate to the size does that */
  if (fd < 0 || fstat(fd, &written) != 0 || ftruncate(fd, written.st_size) != 0 ||
      (durable && fsync(fd) != 0))
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot finish the temporary file: %s (%s)", strerror(errno), tmp);
  close(fd);
  fd = -1;
  if (rename(tmp, output) != 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot rename the finished output into place: %s (%s)",
             strerror(errno), output);
  directory_of(output, dir, sizeof dir);
  fd = open(dir, O_RDONLY);
  if (fd >= 0) fsync(fd); /* makes the rename durable; a failure loses nothing already renamed */
done:
  if (fd >= 0) close(fd);
  return rc;
}

unsigned long long h5g_files_free_bytes(const char *output) {
  char dir[PATH_MAX];
  struct statvfs fs;
  directory_of(output, dir, sizeof dir);
  return statvfs(dir, &fs) == 0 ? (unsigned long long)fs.f_bavail * fs.f_frsize : 0;
}
