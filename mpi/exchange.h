/* Personalised all-to-all exchange of key blocks with 64-bit counts. */
#ifndef H5G_MPI_EXCHANGE_H
#define H5G_MPI_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Collective: every rank sends `per_peer` uint64 values to every rank (MPI_Alltoall). */
int h5g_exchange_counts(MPI_Comm comm, const uint64_t *send, uint64_t *recv, int per_peer);

/* Collective: sends send_counts[d] elements of `elem_size` bytes to rank d (blocks contiguous
 * in `sendbuf`, in rank order) and receives recv_counts[s] from rank s into `recvbuf` (in rank
 * order). Messages hold at most h5g_max_message_elems() elements, so counts of any 64-bit size
 * pass through MPI's int counts. */
int h5g_exchange(MPI_Comm comm, const void *sendbuf, const uint64_t *send_counts, void *recvbuf,
                 const uint64_t *recv_counts, size_t elem_size);

/* 2^30 elements, or H5GSORT_MAX_MESSAGE_ELEMS from the environment (tests shrink it to force
 * many messages). */
uint64_t h5g_max_message_elems(void);

/* MPI_Waitall of requests[0..count) with the statuses ignored. */
int h5g_wait_all(int count, MPI_Request *requests);

#endif
