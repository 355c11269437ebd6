/* The MPI transport chosen before MPI_Init (mpi/launch.h). Open MPI reads its MCA parameters
 * from the environment at MPI_Init, and mpirun hands the command line's `--mca` settings to the
 * ranks the same way, so an OMPI_MCA_ variable present here is the user's (or the site's
 * launcher's) and wins. */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include "mpi/launch.h"

static const char shared_memory[] = "shared memory (one node)";

const char *h5g_mpi_choose_transport(void) {
  const char *world = getenv("OMPI_COMM_WORLD_SIZE");
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!world || !local || strcmp(world, local) != 0) return "as launched"; /* several nodes */
  if (getenv("OMPI_MCA_pml") || getenv("OMPI_MCA_btl")) return "as launched";
  setenv("OMPI_MCA_pml", "ob1", 0);
  setenv("OMPI_MCA_btl", "self,vader,tcp", 0);
  return shared_memory;
}

int h5g_mpi_may_use_gpu(const char *transport) {
  if (transport != shared_memory) return 1;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return 1;
#elif defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
  return MPIX_Query_cuda_support() != 0;
#else
  return 0;
#endif
}
