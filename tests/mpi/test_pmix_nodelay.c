/* h5g_mpi_pmix_nodelay (mpi/launch.h), at 1 and 2 ranks: under a launcher whose PMIx server
 * listens on TCP (Open MPI's mpirun), this rank's connection to it, found here on its own from the
 * URI and the process's sockets, sends without delay afterwards, and it is the only one set: a
 * loopback connection of the test's own keeps its delay; with no such server nothing is set. */
#include <arpa/inet.h>
#include <dirent.h>
#include <mpi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* A loopback TCP connection of the test's own: its two ends in fds[0..1] (-1 where it failed). */
static void own_connection(int fds[2]) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  fds[0] = fds[1] = -1;
  if (listener >= 0 && bind(listener, (struct sockaddr *)&addr, sizeof addr) == 0 &&
      listen(listener, 1) == 0 && getsockname(listener, (struct sockaddr *)&addr, &len) == 0) {
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[0] >= 0 && connect(fds[0], (struct sockaddr *)&addr, sizeof addr) == 0)
      fds[1] = accept(listener, NULL, NULL);
  }
  if (listener >= 0) close(listener);
}

static int nodelay_of(int fd) {
  int value = -1;
  socklen_t len = sizeof value;
  return getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &value, &len) == 0 ? value != 0 : -1;
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
  int own[2];
  own_connection(own);
  EXPECT(own[0] >= 0 && own[1] >= 0, "rank %d: no loopback connection of the test's own", rank);
  int set = h5g_mpi_pmix_nodelay();
  if (port) {
    EXPECT(set >= 1 && set == connections(port, 1) && connections(port, 0) == 0,
           "rank %d: %d set; connections to port %u: %d without delay, %d with", rank, set, port,
           connections(port, 1), connections(port, 0));
  } else {
    EXPECT(set == 0, "rank %d: %d connections set with no PMIx server on TCP", rank, set);
  }
  for (int i = 0; i < 2; i++) {
    EXPECT(own[i] < 0 || nodelay_of(own[i]) == 0, "rank %d: the test's own socket %d set", rank,
           own[i]);
    if (own[i] >= 0) close(own[i]);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* the connection still works */
  int rc = test_summary_mpi(MPI_COMM_WORLD, "test_pmix_nodelay");
  MPI_Finalize();
  return rc;
}
