/* fallocate(2) and FALLOC_FL_KEEP_SIZE are Linux calls */
#define _GNU_SOURCE
#include "io/h5io.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "io/h5io_pkg.h"

/* dirname() may modify its argument: work on a copy. */
void h5g_files_directory_of(const char *path, char *dir, size_t len) {
  char copy[PATH_MAX];
  snprintf(copy, sizeof copy, "%s", path);
  snprintf(dir, len, "%s", dirname(copy));
}

const char *h5g_files_kind(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) return NULL;
  if (S_ISDIR(st.st_mode)) return "directory";
  if (S_ISFIFO(st.st_mode)) return "FIFO (named pipe)";
  if (S_ISSOCK(st.st_mode)) return "socket";
  if (S_ISCHR(st.st_mode)) return "character device";
  if (S_ISBLK(st.st_mode)) return "block device";
  return "special file";
}

/* One file, however spelled: both exist and are one inode (hard or symbolic links, "./x"), or
 * neither exists and both name one entry of one directory. */
int h5g_files_same(const char *a, const char *b) {
  struct stat sa, sb;
  int has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
  if (has_a || has_b) return has_a && has_b && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  char *ca = strdup(a), *cb = strdup(b), *da = strdup(a), *db = strdup(b);
  int same = ca && cb && da && db && strcmp(basename(ca), basename(cb)) == 0 &&
             stat(dirname(da), &sa) == 0 && stat(dirname(db), &sb) == 0 &&
             sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  free(ca);
  free(cb);
  free(da);
  free(db);
  return same;
}

/* Usage error unless a file can be created beside `path` ("output" or "report" says which). */
static int check_directory_of(const char *path, const char *what) {
  int rc = H5G_OK;
  struct stat dir_st;
  char dir[PATH_MAX];
  if (path[0] == '\0') H5G_FAIL(H5G_ERR_USAGE, "%s path is empty: give a file name", what);
  if (path[strlen(path) - 1] == '/')
    H5G_FAIL(H5G_ERR_USAGE, "%s path ends in '/': give a file name (%s)", what, path);
  if (strlen(path) >= PATH_MAX - 64)
    H5G_FAIL(H5G_ERR_USAGE, "%s path too long: %zu bytes, the limit is %d (%s)", what,
             strlen(path), PATH_MAX - 65, path);
  h5g_files_directory_of(path, dir, sizeof dir);
  if (stat(dir, &dir_st) != 0 || !S_ISDIR(dir_st.st_mode))
    H5G_FAIL(H5G_ERR_USAGE, "%s directory does not exist or is not a directory (%s)", what, dir);
  if (access(dir, W_OK | X_OK) != 0)
    H5G_FAIL(H5G_ERR_USAGE, "%s directory is not writable (%s)", what, dir);
done:
  return rc;
}

int h5g_files_check_report(const char *report, const char *input, const char *output) {
  int rc = H5G_OK;
  const char *kind = NULL;
  CHECK(check_directory_of(report, "report"));
  /* a device or a FIFO (/dev/stdout) takes the report as written; a directory or socket not */
  if ((kind = h5g_files_kind(report)) && (strcmp(kind, "directory") == 0 ||
                                          strcmp(kind, "socket") == 0))
    H5G_FAIL(H5G_ERR_USAGE, "--report names a %s, not a file (%s)", kind, report);
  if (h5g_files_same(report, input))
    H5G_FAIL(H5G_ERR_USAGE, "--report names the input file, which it would overwrite (%s)", report);
  if (h5g_files_same(report, output))
    H5G_FAIL(H5G_ERR_USAGE, "--report names OUTPUT: give the report a file of its own (%s)",
             report);
done:
  return rc;
}

int h5g_files_check_output(const char *input, const char *output, int force, int *same_as_input) {
  int rc = H5G_OK;
  struct stat out_st, link_st;
  const char *kind = NULL;
  *same_as_input = 0;
  CHECK(check_directory_of(output, "output"));
  /* stat() sees no file behind a dangling symbolic link, but the rename would replace the link */
  if (!force && lstat(output, &link_st) == 0 && S_ISLNK(link_st.st_mode) &&
      stat(output, &out_st) != 0)
    H5G_FAIL(H5G_ERR_USAGE, "output exists (a dangling symbolic link); use --force to replace it "
             "(%s)", output);
  if (stat(output, &out_st) == 0) {
    if ((kind = h5g_files_kind(output)))
      H5G_FAIL(H5G_ERR_USAGE, "output is a %s, not a regular file: it is never replaced (%s)",
               kind, output);
    if (!force) H5G_FAIL(H5G_ERR_USAGE, "output exists; use --force to replace it (%s)", output);
    *same_as_input = h5g_files_same(input, output);
  }
done:
  return rc;
}

int h5g_files_check_temp(const char *temp, const char *input) {
  int rc = H5G_OK;
  if (h5g_files_same(temp, input))
    H5G_FAIL(H5G_ERR_USAGE, "the input has the temporary file's name, which the run would "
             "overwrite: rename the input (%s)", input);
done:
  return rc;
}

/* Up to 8 bytes of a name's hash, in hex (FNV-1a): keeps shortened names of different outputs
 * apart. */
static unsigned long name_hash(const char *name) {
  unsigned long long h = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211ull;
  return (unsigned long)(h & 0xffffffffu);
}

/* Room kept in a temporary name for the pid, ".tmp" and what is added to it: its lock (".lock")
 * and Open MPI's MPI-IO "individual" shared file pointers (".data.<rank>", ".metadata.<rank>"). */
enum { TEMP_SUFFIX_ROOM = 10 + 4 + 24 };

/* ".<base>.h5gsort-<host>-": the start of every temporary name of `output`. A base too long
 * for the directory's file-name limit (with the rest of the name) is cut, and a hash of the
 * whole base added: the same output always gives the same prefix, so the stale-file cleanup
 * still finds what a killed run left. */
static void temp_prefix(const char *output, char *prefix, size_t len) {
  char copy[PATH_MAX], dir[PATH_MAX], host[256] = "localhost";
  snprintf(copy, sizeof copy, "%s", output);
  h5g_files_directory_of(output, dir, sizeof dir);
  gethostname(host, sizeof host - 1);
  host[64] = '\0'; /* HOST_NAME_MAX on Linux */
  long name_max = pathconf(dir, _PC_NAME_MAX);
  if (name_max <= 0 || name_max > 4096) name_max = 255;
  const char *base = basename(copy);
  size_t fixed = strlen(".") + strlen(".h5gsort-") + strlen(host) + strlen("-") + TEMP_SUFFIX_ROOM;
  size_t room = (size_t)name_max > fixed + 16 ? (size_t)name_max - fixed : 16;
  if (strlen(base) <= room)
    snprintf(prefix, len, ".%s.h5gsort-%s-", base, host);
  else
    snprintf(prefix, len, ".%.*s~%08lx.h5gsort-%s-", (int)(room - 9), base, name_hash(base), host);
}

int h5g_files_temp_name(const char *output, char *name, size_t len) {
  int rc = H5G_OK;
  char dir[PATH_MAX], prefix[PATH_MAX];
  h5g_files_directory_of(output, dir, sizeof dir);
  temp_prefix(output, prefix, sizeof prefix);
  int used = snprintf(name, len, "%s/%s%ld.tmp", dir, prefix, (long)getpid());
  if (used < 0 || (size_t)used >= len)
    H5G_FAIL(H5G_ERR_USAGE, "output path too long for its temporary file's name: the limit is "
             "%zu bytes (%s)", len - 1, output);
done:
  return rc;
}

/* Where there is no flock: whether a process of that PID runs here. A killed rank's process can
 * linger as a zombie when its parent is gone; that counts as dead. */
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

/* Held by rank 0 for the run's life (h5g_files_hold_temp_lock). */
static int temp_lock_fd = -1;
static char temp_lock_path[PATH_MAX + 8];

/* Tries for a lock another run's sweep may hold a moment (its probe, run_alive below) before it
 * is taken to be a live run's: LOCK_TRIES of 1 ms. */
enum { LOCK_TRIES = 200 };

int h5g_files_hold_temp_lock(const char *temp) {
  int rc = H5G_OK, fd = -1, busy = 0;
  struct stat held, named;
  snprintf(temp_lock_path, sizeof temp_lock_path, "%s.lock", temp);
  for (int tries = 0; tries < LOCK_TRIES; tries++) {
    if (fd < 0 && (fd = open(temp_lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot make the temporary file's lock: %s (%s)",
               strerror(errno), temp_lock_path);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      busy = errno == EWOULDBLOCK;
      if (!busy) break; /* no flock here: other runs' sweeps go by the PID */
      nanosleep(&(struct timespec){0, 1000000}, NULL);
      continue;
    }
    busy = 0;
    /* a sweep that found the file before it was locked may have removed its name: the lock
     * must be on the file that has it */
    if (fstat(fd, &held) == 0 && stat(temp_lock_path, &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino)
      break;
    close(fd);
    fd = -1;
  }
  if (busy)
    H5G_FAIL(H5G_ERR_RUNTIME, "another live run uses this run's temporary file name (the same "
             "host name and process id, from another PID namespace) (%s)", temp);
  temp_lock_fd = fd;
  fd = -1;
done:
  if (fd >= 0) close(fd);
  return rc;
}

void h5g_files_drop_temp_lock(void) {
  if (temp_lock_fd < 0) return;
  unlink(temp_lock_path); /* before the lock goes: no sweep sees it unlocked */
  close(temp_lock_fd);
  temp_lock_fd = -1;
}

/* Whether the run that named its temporary "<dir>/<prefix><pid>.tmp" is alive: it holds its
 * lock file locked. No lock file: a dead run's (or one of a version that made none). */
static int run_alive(const char *dir, const char *prefix, long pid) {
  char path[2 * PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/%s%ld.tmp.lock", dir, prefix, pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : process_alive(pid);
  int locked = flock(fd, LOCK_SH | LOCK_NB) != 0, err = errno;
  close(fd);
  if (!locked) return 0;
  return err == EWOULDBLOCK ? 1 : process_alive(pid); /* no flock here: the PID decides */
}

int h5g_files_remove_stale(const char *output, const char *input) {
  char dir[PATH_MAX], prefix[PATH_MAX];
  int removed = 0;
  h5g_files_directory_of(output, dir, sizeof dir);
  temp_prefix(output, prefix, sizeof prefix);
  size_t plen = strlen(prefix);
  DIR *d = opendir(dir);
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char *end = NULL, *path = NULL;
    if (strncmp(e->d_name, prefix, plen) != 0) continue;
    long pid = strtol(e->d_name + plen, &end, 10);
    /* the temporary file, and the files MPI-IO made beside it ("<temp>.data.0", ...) */
    if (pid <= 0 || strncmp(end, ".tmp", 4) != 0 || (end[4] != '\0' && end[4] != '.')) continue;
    if (run_alive(dir, prefix, pid)) continue;
    if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) continue;
    if (!h5g_files_same(path, input) && unlink(path) == 0) removed++;
    free(path);
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
  h5g_files_directory_of(output, dir, sizeof dir);
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      bytes > (unsigned long long)limit.rlim_cur)
    H5G_FAIL(H5G_ERR_RUNTIME,
             "the output needs %llu bytes, over the file size limit of %llu bytes (ulimit -f) (%s)",
             bytes, (unsigned long long)limit.rlim_cur, output);
  if (statvfs(dir, &fs) == 0 && (unsigned long long)fs.f_bavail * fs.f_frsize < bytes)
    H5G_FAIL(H5G_ERR_RUNTIME, "%s: the output needs %llu bytes, more than the %llu free in %s "
             "(%s)", strerror(ENOSPC), bytes, (unsigned long long)fs.f_bavail * fs.f_frsize, dir,
             output);
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

/* rename() that never replaces `to` (EEXIST when it is there): renameat2's RENAME_NOREPLACE
 * (ext4, XFS, Btrfs, tmpfs); where the file system lacks the flag (EINVAL: NFS, older Lustre) a
 * hard link, which fails on an existing name just the same, then the temporary's name removed;
 * where it has no hard links either (FAT, some FUSE file systems) a check just before a plain
 * rename, which a file made in between still loses to. */
static int rename_no_replace(const char *from, const char *to) {
  struct stat st;
  if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  /* an NFS link retried after a lost reply finds its own first link there: not another file */
  if (link(from, to) == 0 || (errno == EEXIST && h5g_files_same(from, to))) {
    unlink(from); /* a failure leaves a second name, which the next run's sweep removes */
    return 0;
  }
  if (errno != EPERM && errno != EOPNOTSUPP) return -1;
  if (lstat(to, &st) == 0) {
    errno = EEXIST;
    return -1;
  }
  return rename(from, to);
}

int h5g_files_commit(const char *tmp, const char *output, int durable, int replace) {
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
  if (replace ? rename(tmp, output) != 0 : rename_no_replace(tmp, output) != 0) {
    if (errno == EEXIST)
      H5G_FAIL(H5G_ERR_USAGE, "output exists (made during the run; left as it is); use --force "
               "to replace it (%s)", output);
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot rename the finished output into place: %s (%s)",
             strerror(errno), output);
  }
  if (durable) {
    /* the rename durable too. Not without `durable`: on ext4 this fsync waits on the journal
     * while the output is being written back
     * (bench/RESULTS.md, "Open MPI's session directory in memory") */
    h5g_files_directory_of(output, dir, sizeof dir);
    fd = open(dir, O_RDONLY);
    if (fd >= 0) fsync(fd); /* a failure loses nothing already renamed */
  }
done:
  if (fd >= 0) close(fd);
  return rc;
}

unsigned long long h5g_files_free_bytes(const char *output) {
  char dir[PATH_MAX];
  struct statvfs fs;
  h5g_files_directory_of(output, dir, sizeof dir);
  return statvfs(dir, &fs) == 0 ? (unsigned long long)fs.f_bavail * fs.f_frsize : 0;
}

const char *h5g_io_write_reason_internal(const char *path, int error) {
  static char reason[128];
  char dir[PATH_MAX];
  struct rlimit limit;
  struct statvfs fs;
  struct stat now;
  if (error != ENOSPC && error != EDQUOT && error != EFBIG && error != EIO && error != EROFS) {
    h5g_files_directory_of(path, dir, sizeof dir);
    error = statvfs(dir, &fs) == 0 && fs.f_bavail == 0 ? ENOSPC
            : getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
                    stat(path, &now) == 0 && (unsigned long long)now.st_size >= limit.rlim_cur
                ? EFBIG
                : 0;
  }
  if (!error) return "";
  snprintf(reason, sizeof reason, ": %s", strerror(error));
  return reason;
}

int h5g_files_check_growth(const char *path, unsigned long long bytes) {
  int rc = H5G_OK;
  char dir[PATH_MAX];
  struct rlimit limit;
  struct statvfs fs;
  struct stat now;
  unsigned long long size = stat(path, &now) == 0 ? (unsigned long long)now.st_size : 0;
  h5g_files_directory_of(path, dir, sizeof dir);
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      size + bytes > (unsigned long long)limit.rlim_cur)
    H5G_FAIL(H5G_ERR_RUNTIME, "the output would grow past the file size limit of %llu bytes "
             "(ulimit -f): %llu written, up to %llu more to come (%s)",
             (unsigned long long)limit.rlim_cur, size, bytes, path);
  if (statvfs(dir, &fs) == 0 && (unsigned long long)fs.f_bavail * fs.f_frsize < bytes)
    H5G_FAIL(H5G_ERR_RUNTIME, "the disk is full (%s): the output needs up to %llu more bytes, "
             "%llu are free in %s (%s)", strerror(ENOSPC), bytes,
             (unsigned long long)fs.f_bavail * fs.f_frsize, dir, path);
done:
  return rc;
}
