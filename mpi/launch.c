/* Around MPI_Init (mpi/launch.h). */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <mpi.h>

#include "mpi/launch.h"

void h5g_mpi_library(char *buf, size_t size) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (size == 0) return;
  buf[0] = '\0';
  if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) return;
  version[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
  snprintf(buf, size, "%.*s", (int)strcspn(version, "\n\r"), version);
}

void h5g_mpi_version(char *buf, size_t size) {
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int major = 0, minor = 0;
  h5g_mpi_library(library, sizeof library);
  MPI_Get_version(&major, &minor);
  snprintf(buf, size, "%s (MPI %d.%d)", library, major, minor);
}

int h5g_mpi_is_open_mpi(void) {
  char library[128];
  h5g_mpi_library(library, sizeof library);
  return strncmp(library, "Open MPI", 8) == 0;
}

int h5g_mpi_before_init(void) {
  int rc = 0;
  /* setenv with overwrite 0 keeps what the user (or the site's launcher) set */
  setenv("HWLOC_COMPONENTS", H5G_HWLOC_NO_GPU, 0);
  if (h5g_mpi_is_open_mpi() && setenv("OMPI_MCA_sharedfp", "^lockedfile,sm", 0) != 0) rc = -1;
  return rc;
}

/* The PMIx server's TCP address, from the URI its launcher hands the client
 * ("NAMESPACE.RANK;tcp4://HOST:PORT"); 0 when there is none (another launcher, a socket). */
static int pmix_server_address(struct sockaddr_in *addr) {
  static const char *const names[] = {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                                      "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const char *uri = getenv(names[i]);
    const char *tcp = uri ? strstr(uri, "tcp4://") : NULL;
    char host[64];
    unsigned port = 0;
    if (!tcp || sscanf(tcp, "tcp4://%63[^:]:%u", host, &port) != 2 || port > 65535) continue;
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &addr->sin_addr) == 1) return 1;
  }
  return 0;
}

int h5g_mpi_pmix_nodelay(void) {
  int set = 0;
  struct sockaddr_in server;
  DIR *fds = h5g_mpi_is_open_mpi() && pmix_server_address(&server) ? opendir("/proc/self/fd") : NULL;
  for (struct dirent *e; fds && (e = readdir(fds)) != NULL;) {
    int fd = atoi(e->d_name), one = 1;
    struct sockaddr_in peer;
    socklen_t len = sizeof peer;
    if (fd > 2 && fd != dirfd(fds) && getpeername(fd, (struct sockaddr *)&peer, &len) == 0 &&
        len == sizeof peer && peer.sin_family == AF_INET && peer.sin_port == server.sin_port &&
        peer.sin_addr.s_addr == server.sin_addr.s_addr)
      set += setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0;
  }
  if (fds) closedir(fds);
  return set;
}
