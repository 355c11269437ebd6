/* The MPI transport chosen before MPI_Init (mpi/launch.h). Open MPI reads its MCA parameters
 * from the environment at MPI_Init, and mpirun hands the command line's `--mca` settings to the
 * ranks the same way, so an OMPI_MCA_ variable present here is the user's (or the site's
 * launcher's) and wins. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "mpi/launch.h"

/* Open MPI 5 renamed the shared-memory btl "sm" and keeps "vader" only as an alias */
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
#define SHARED_MEMORY_BTLS "self,sm,tcp"
#else
#define SHARED_MEMORY_BTLS "self,vader,tcp"
#endif

static const char *transport = "as launched"; /* h5g_mpi_transport */
static int memory_hooks_off; /* this process turned Open MPI's memory patcher off */

void h5g_mpi_choose_transport(void) {
  const char *world = getenv("OMPI_COMM_WORLD_SIZE");
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!world || !local || strcmp(world, local) != 0) return; /* several nodes */
  if (getenv("OMPI_MCA_pml") || getenv("OMPI_MCA_btl")) return;
  if (setenv("OMPI_MCA_pml", "ob1", 0) != 0 || setenv("OMPI_MCA_btl", SHARED_MEMORY_BTLS, 0) != 0) {
    unsetenv("OMPI_MCA_pml");
    unsetenv("OMPI_MCA_btl");
    return;
  }
  transport = "shared memory (one node)";
  /* ob1 over shared memory and tcp registers no memory, so it needs no hooks: without the
   * patcher, Open MPI rewrites no munmap code while the GPU context's threads call it */
  memory_hooks_off = !getenv("OMPI_MCA_memory") && setenv("OMPI_MCA_memory", "^patcher", 0) == 0;
}

void h5g_mpi_skip_gpu_topology(void) { setenv("HWLOC_COMPONENTS", H5G_HWLOC_NO_GPU, 0); }

const char *h5g_mpi_transport(void) { return transport; }

int h5g_mpi_patcher_off(void) { return memory_hooks_off; }

int h5g_mpi_may_use_gpu(void) {
  if (!memory_hooks_off) return 1; /* off only with the transport chosen here */
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return 1;
#elif defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() != 0;
#else
  return 0;
#endif
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
  DIR *fds = pmix_server_address(&server) ? opendir("/proc/self/fd") : NULL;
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
