/* The MPI transport chosen before MPI_Init (mpi/launch.h). Open MPI reads its MCA parameters
 * from the environment at MPI_Init, and mpirun hands the command line's `--mca` settings to the
 * ranks the same way, so an OMPI_MCA_ variable present here is the user's (or the site's
 * launcher's) and wins. */
#include <stdlib.h>
#include <string.h>

#include "mpi/launch.h"

const char *h5g_mpi_choose_transport(void) {
  const char *world = getenv("OMPI_COMM_WORLD_SIZE");
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!world || !local || strcmp(world, local) != 0) return "as launched"; /* several nodes */
  if (getenv("OMPI_MCA_pml") || getenv("OMPI_MCA_btl")) return "as launched";
  setenv("OMPI_MCA_pml", "ob1", 0);
  setenv("OMPI_MCA_btl", "self,vader,tcp", 0);
  return "shared memory (one node)";
}
