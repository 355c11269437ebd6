#include "mpi/topology.h"

#include "mpi/agree.h"
#include "base/error.h"

int h5g_local_rank(MPI_Comm comm, int *local_rank, int *local_size) {
  int rc = H5G_OK;
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  CHECK_MPI(MPI_Comm_rank(node, local_rank));
  CHECK_MPI(MPI_Comm_size(node, local_size));
done:
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  return rc;
}
