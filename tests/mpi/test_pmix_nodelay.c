/* h5g_mpi_pmix_nodelay (mpi/launch.h), at 1 and 2 ranks: under a launcher whose PMIx server
 * listens on TCP (Open MPI's mpirun), this rank's connection to it, found here on its own from the
 * URI and the process's sockets, sends without delay afterwards; with no such server nothing is
 * set. */
#include <dirent.h>
#include <mpi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "mpi/launch.h"
#include "tests/support/check_mpi.h"

/* The server's port from any PMIx URI of the environment, 0 when none names tcp4. */
static unsigned server_port(void) {
  extern char **environ;
  for (char **e = environ; *e; e++) {
    const char *tcp = strncmp(*e, "PMIX_SERVER_URI", 15) == 0 ? strstr(*e, "tcp4://") : NULL;
    const char *colon = tcp ? strrchr(tcp + 7, ':') : NULL;
    if (colon) return (unsigned)strtoul(colon + 1, NULL, 10);
  }
  return 0;
}

/* TCP connections of this process to `port` whose TCP_NODELAY is `nodelay`. */
static int connections(unsigned port, int nodelay) {
  int found = 0;
  DIR *fds = opendir("/proc/self/fd");
  for (struct dirent *e; fds && (e = readdir(fds)) != NULL;) {
    int fd = atoi(e->d_name), value = -1;
    struct sockaddr_in peer;
    socklen_t len = sizeof peer, vlen = sizeof value;
    if (fd > 2 && getpeername(fd, (struct sockaddr *)&peer, &len) == 0 &&
        peer.sin_family == AF_INET && ntohs(peer.sin_port) == port &&
        getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &value, &vlen) == 0)
      found += (value != 0) == nodelay;
  }
  if (fds) closedir(fds);
  return found;
}

int main(int argc, char **argv) {
  int rank = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  unsigned port = server_port();
  int set = h5g_mpi_pmix_nodelay();
  if (port) {
    EXPECT(set >= 1, "rank %d: no connection to the PMIx server on port %u set", rank, port);
    EXPECT(connections(port, 1) >= 1 && connections(port, 0) == 0,
           "rank %d: connections to port %u: %d without delay, %d with", rank, port,
           connections(port, 1), connections(port, 0));
  } else {
    EXPECT(set == 0, "rank %d: %d connections set with no PMIx server on TCP", rank, set);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* the connection still works */
  int rc = test_summary_mpi(MPI_COMM_WORLD, "test_pmix_nodelay");
  MPI_Finalize();
  return rc;
}
