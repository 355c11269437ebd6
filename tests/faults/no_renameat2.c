/* no_renameat2: an LD_PRELOAD shim for faults.output_appears. renameat2 fails with EINVAL, as on
 * file systems without RENAME_NOREPLACE (NFS, older Lustre); with H5G_SHIM_NO_LINK set, link
 * fails with EPERM too, as on file systems without hard links (FAT). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
              unsigned int flags) {
  (void)olddirfd, (void)oldpath, (void)newdirfd, (void)newpath, (void)flags;
  errno = EINVAL;
  return -1;
}

int link(const char *oldpath, const char *newpath) {
  if (getenv("H5G_SHIM_NO_LINK")) {
    errno = EPERM;
    return -1;
  }
  int (*real_link)(const char *, const char *) =
      (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "link");
  return real_link ? real_link(oldpath, newpath) : (errno = ENOSYS, -1);
}
