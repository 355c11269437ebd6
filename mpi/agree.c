#include "mpi/agree.h"

#include <string.h>

#include "base/error.h"

int h5g_agree(MPI_Comm comm, int local_status) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = local_status != H5G_OK ? rank : size, first = size;
  if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
    return h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "MPI_Allreduce failed");
  if (first == size) return H5G_OK;
  struct {
    int code;
    char message[H5G_MSG_MAX];
  } verdict;
  memset(&verdict, 0, sizeof verdict);
  if (rank == first) {
    verdict.code = local_status;
    strncpy(verdict.message, h5g_error_message(), sizeof verdict.message - 1);
  }
  if (MPI_Bcast(&verdict, (int)sizeof verdict, MPI_BYTE, first, comm) != MPI_SUCCESS)
    return h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "MPI_Bcast failed");
  if (rank != first) h5g_error_adopt(verdict.code, verdict.message);
  return verdict.code;
}

int h5g_agree_alloc(MPI_Comm comm, int allocated, size_t bytes) {
  int local = allocated || bytes == 0 ? H5G_OK
                                : h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                "out of host memory allocating %zu bytes", bytes);
  return h5g_agree(comm, local);
}
