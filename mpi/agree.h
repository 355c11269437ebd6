/* Agreement on errors: before any collective call that could block, ranks agree on whether
 * somebody failed. Every rank then holds the same status and the message of the lowest failing
 * rank, so rank 0 can print it once and everyone exits with the same code. */
#ifndef H5G_MPI_AGREE_H
#define H5G_MPI_AGREE_H

#include <mpi.h>
#include <stddef.h>

/* Collective. Returns H5G_OK when every rank passed `local_status == H5G_OK`, else the status of
 * the lowest failing rank, whose error message every rank adopts. */
int h5g_agree(MPI_Comm comm, int local_status);

/* Collective: h5g_agree on "this rank's allocation of `bytes` succeeded" (`allocated`, or
 * bytes == 0), so a rank out of memory never leaves the others blocked in the collective that
 * follows. */
int h5g_agree_alloc(MPI_Comm comm, int allocated, size_t bytes);

#define CHECK_MPI(call)                                                                           \
  do {                                                                                            \
    int mpi_status_ = (call);                                                                     \
    if (mpi_status_ != MPI_SUCCESS) {                                                             \
      char mpi_text_[MPI_MAX_ERROR_STRING];                                                       \
      int mpi_len_ = 0;                                                                           \
      MPI_Error_string(mpi_status_, mpi_text_, &mpi_len_);                                        \
      H5G_FAIL(H5G_ERR_RUNTIME, "MPI error in %s: %s", #call, mpi_text_);                         \
    }                                                                                             \
  } while (0)

#endif
