/* MPI additions to check.h: a fatal check of MPI calls, and the summary of a multi-rank test,
 * which every rank calls and which returns the same exit status on every rank. */
#ifndef H5G_TESTS_SUPPORT_CHECK_MPI_H
#define H5G_TESTS_SUPPORT_CHECK_MPI_H

#include <mpi.h>

#include "tests/support/check.h"

#define MUST_MPI(call)                                                                            \
  do {                                                                                            \
    if ((call) != MPI_SUCCESS) {                                                                  \
      fprintf(stderr, "FATAL %s:%d: %s failed\n", __FILE__, __LINE__, #call);                     \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                               \
    }                                                                                             \
  } while (0)

/* Collective over `comm`: rank 0 prints the checks and failures of all ranks together (each
 * rank has printed its own failures); every rank returns 1 if any rank failed. */
static inline int test_summary_mpi(MPI_Comm comm, const char *name) {
  long mine[2] = {test_checks, test_failures}, all[2] = {0, 0};
  int rank = 0, size = 0;
  MUST_MPI(MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, comm));
  MUST_MPI(MPI_Comm_rank(comm, &rank));
  MUST_MPI(MPI_Comm_size(comm, &size));
  if (rank == 0) printf("%s (%d ranks): %ld checks, %ld failed\n", name, size, all[0], all[1]);
  return all[1] == 0 ? 0 : 1;
}

#endif
