#include "mpi/shared_rows.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/statvfs.h>

#include "base/error.h"
#include "base/host_memory.h"
#include "mpi/agree.h"

/* Left free in the node's shared memory beyond the segments, for its other users (MPI's own
 * transport among them): 16 MiB and a sixteenth of its size. */
#define SHARED_MEMORY_LEFT_BYTES ((uint64_t)16 << 20)
#define SHARED_MEMORY_LEFT_PART 16

struct h5g_shared_rows {
  MPI_Comm node;
  MPI_Win win;
  int locked, everyone;
  void *mine;
  const char **segments;
};

/* Whether the node's shared memory holds `total` bytes more (a tmpfs whose pages are only taken
 * as they are touched: a window larger than its room would fault, not fail). */
static int room_for(uint64_t total) {
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) != 0) return 0;
  uint64_t free_bytes = (uint64_t)fs.f_bavail * fs.f_frsize;
  uint64_t left = SHARED_MEMORY_LEFT_BYTES + (uint64_t)fs.f_blocks * fs.f_frsize / SHARED_MEMORY_LEFT_PART;
  return free_bytes > left && total <= free_bytes - left;
}

int h5g_shared_rows_make(MPI_Comm comm, size_t bytes, int wants, int ranks_on_node,
                         h5g_shared_rows **shared) {
  int rc = H5G_OK, size = 0, node_size = 0, rank = 0;
  h5g_shared_rows *s = NULL;
  int *node_ranks = NULL;
  *shared = NULL;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  if (size == 1) goto done;
  s = calloc(1, sizeof *s);
  if (s) {
    s->node = MPI_COMM_NULL;
    s->win = MPI_WIN_NULL;
    s->segments = calloc((size_t)size, sizeof *s->segments);
  }
  CHECK(h5g_agree_alloc(comm, s && s->segments, sizeof *s + (size_t)size * sizeof *s->segments));
  /* the node's ranks in comm's order (split_type keyed by rank) */
  CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &s->node));
  CHECK_MPI(MPI_Comm_size(s->node, &node_size));
  uint64_t node_total = bytes;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &node_total, 1, MPI_UINT64_T, MPI_SUM, s->node));
  node_ranks = malloc((size_t)node_size * sizeof *node_ranks);
  /* every rank wants it and its node has the room; some node has several ranks */
  int usable[2] = {wants && room_for(node_total) && node_ranks, node_size > 1 ? 0 : 1};
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, usable, 2, MPI_INT, MPI_MIN, comm));
  if (!usable[0] || usable[1]) goto done;
  CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, node_ranks, 1, MPI_INT, s->node));
  s->everyone = node_size == size;
  CHECK_MPI(MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, s->node, &s->mine, &s->win));
  CHECK_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win));
  s->locked = 1;
  for (int j = 0; j < node_size; j++) {
    MPI_Aint segment_bytes = 0;
    int unit = 0;
    void *base = NULL;
    CHECK_MPI(MPI_Win_shared_query(s->win, j, &segment_bytes, &unit, &base));
    s->segments[node_ranks[j]] = base;
  }
  h5g_make_resident(s->mine, bytes, ranks_on_node);
  *shared = s;
  s = NULL;
done:
  free(node_ranks);
  h5g_shared_rows_free(s);
  return rc;
}

void *h5g_shared_rows_mine(const h5g_shared_rows *s) { return s->mine; }

const char *const *h5g_shared_rows_segments(const h5g_shared_rows *s) { return s->segments; }

int h5g_shared_rows_everyone(const h5g_shared_rows *s) { return s->everyone; }

int h5g_shared_rows_sync(h5g_shared_rows *s) {
  int rc = H5G_OK;
  CHECK_MPI(MPI_Win_sync(s->win));
  CHECK_MPI(MPI_Barrier(s->node));
  CHECK_MPI(MPI_Win_sync(s->win));
done:
  return rc;
}

void h5g_shared_rows_free(h5g_shared_rows *s) {
  if (!s) return;
  if (s->locked) MPI_Win_unlock_all(s->win);
  if (s->win != MPI_WIN_NULL) MPI_Win_free(&s->win);
  if (s->node != MPI_COMM_NULL) MPI_Comm_free(&s->node);
  free(s->segments);
  free(s);
}
