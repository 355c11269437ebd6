/* Minimum and maximum of unsigned 64-bit values over the ranks, compared as unsigned whatever
 * the MPI library: MPICH 4.0.2 takes MPI_MIN and MPI_MAX of unsigned types as signed
 * (pmodels/mpich#6083: the minimum of 5 and UINT64_MAX came out UINT64_MAX here), as Open MPI
 * 4.1.2-4.1.4 did for unsigned long (open-mpi/ompi#10525). Our own operation does the compare. */
#ifndef H5G_MPI_REDUCE_U64_H
#define H5G_MPI_REDUCE_U64_H

#include <mpi.h>
#include <stdint.h>

typedef enum { H5G_REDUCE_MIN, H5G_REDUCE_MAX } h5g_reduce_op;

/* Collective: out[i] = the minimum (maximum) over the ranks of in[i], for i < count. */
int h5g_allreduce_u64(MPI_Comm comm, const uint64_t *in, uint64_t *out, int count,
                      h5g_reduce_op op);

#endif
