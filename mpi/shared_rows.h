/* Rows that the ranks of a node read straight from each other's memory (an MPI-3 shared window):
 * the carry's source rows, so that a row another rank of the node holds is copied once, from its
 * memory, instead of requested, served, exchanged and placed (mpi/gather_rows.h). */
#ifndef H5G_MPI_SHARED_ROWS_H
#define H5G_MPI_SHARED_ROWS_H

#include <mpi.h>
#include <stddef.h>

typedef struct h5g_shared_rows h5g_shared_rows;

/* Collective. Where every rank `wants` it, some node has several ranks, and every node's shared
 * memory (/dev/shm, where MPI keeps such windows) has room for its ranks' segments, each rank
 * gets a segment of `bytes` (they may differ) that the ranks of its node map, made resident by
 * this rank's share of the node's cores; else *shared is NULL and the caller uses memory of its
 * own. */
int h5g_shared_rows_make(MPI_Comm comm, size_t bytes, int wants, int ranks_on_node,
                         h5g_shared_rows **shared);
void *h5g_shared_rows_mine(const h5g_shared_rows *s);
/* The segments by rank of comm: those of this rank's node (a segment of no bytes may be NULL),
 * NULL for the others. */
const char *const *h5g_shared_rows_segments(const h5g_shared_rows *s);
/* Whether the node's ranks are every rank of comm. */
int h5g_shared_rows_everyone(const h5g_shared_rows *s);
/* Collective: what every rank wrote to its segment before is seen by the node's after (and what
 * any read before ends before any write after). */
int h5g_shared_rows_sync(h5g_shared_rows *s);
/* Collective (safe with NULL on every rank). */
void h5g_shared_rows_free(h5g_shared_rows *s);

#endif
