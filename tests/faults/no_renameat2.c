/* no_renameat2: an LD_PRELOAD shim for faults.output_appears. renameat2 fails with EINVAL, as on
 * file systems without RENAME_NOREPLACE (NFS, older Lustre); with H5G_SHIM_NO_LINK non-empty,
 * link fails with EPERM too, as on file systems without hard links (FAT). Each refused call is
 * logged to the file H5G_SHIM_LOG names, so a test can tell that the shim was loaded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void note(const char *call) {
  const char *log = getenv("H5G_SHIM_LOG");
  int fd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
  if (fd < 0) return;
  ssize_t wrote = write(fd, call, strlen(call));
  (void)wrote; /* a failed write leaves no line, and the test fails */
  close(fd);
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
              unsigned int flags) {
  (void)olddirfd, (void)oldpath, (void)newdirfd, (void)newpath, (void)flags;
  note("renameat2\n");
  errno = EINVAL;
  return -1;
}

int link(const char *oldpath, const char *newpath) {
  const char *no_link = getenv("H5G_SHIM_NO_LINK");
  if (no_link && no_link[0]) {
    note("link\n");
    errno = EPERM;
    return -1;
  }
  int (*real_link)(const char *, const char *) =
      (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "link");
  return real_link ? real_link(oldpath, newpath) : (errno = ENOSYS, -1);
}
