#include "io/superblock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Little-endian address of `size` bytes at p (HDF5 stores addresses little-endian). */
static haddr_t address_at(const unsigned char *p, unsigned size) {
  haddr_t a = 0;
  for (unsigned i = size; i-- > 0;) a = (a << 8) | p[i];
  return a;
}

int h5g_superblock_eoa(const char *path, haddr_t *eoa) {
  static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char sb[128];
  int fd = open(path, O_RDONLY);
  ssize_t got = fd < 0 ? -1 : pread(fd, sb, sizeof sb, 0);
  if (fd >= 0) close(fd);
  if (got < 16 || memcmp(sb, signature, sizeof signature) != 0) return -1;
  /* version 0/1: offsets size at byte 13, then base, free-space and end-of-file addresses from
   * byte 24 (28 in version 1); versions 2/3: offsets size at 9, base, extension and end-of-file
   * addresses from byte 12 */
  unsigned version = sb[8], size = version < 2 ? sb[13] : sb[9];
  size_t at = version == 0 ? 24 : version == 1 ? 28 : 12;
  if (version > 3 || (size != 2 && size != 4 && size != 8) || at + 3 * size > (size_t)got) return -1;
  /* a base address other than 0 (a user block cut away) is left to HDF5 */
  if (address_at(sb + at, size) != 0) return -1;
  *eoa = address_at(sb + at + 2 * size, size);
  return 0;
}
