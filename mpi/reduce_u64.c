#include "mpi/reduce_u64.h"

#include "base/error.h"
#include "mpi/agree.h"

static void min_u64(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const uint64_t *a = in;
  uint64_t *b = inout;
  for (int i = 0; i < *len; i++)
    if (a[i] < b[i]) b[i] = a[i];
}

static void max_u64(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const uint64_t *a = in;
  uint64_t *b = inout;
  for (int i = 0; i < *len; i++)
    if (a[i] > b[i]) b[i] = a[i];
}

int h5g_allreduce_u64(MPI_Comm comm, const uint64_t *in, uint64_t *out, int count,
                      h5g_reduce_op op) {
  int rc = H5G_OK;
  MPI_Op mpi_op = MPI_OP_NULL;
  CHECK_MPI(MPI_Op_create(op == H5G_REDUCE_MIN ? min_u64 : max_u64, 1, &mpi_op));
  CHECK_MPI(MPI_Allreduce(in, out, count, MPI_UINT64_T, mpi_op, comm));
done:
  if (mpi_op != MPI_OP_NULL) MPI_Op_free(&mpi_op);
  return rc;
}
