/* Phase "merge": the sorted runs this rank holds become its sorted share. With one rank those
 * are its own runs (out of core), otherwise the P * R runs it received. On the resident path the
 * GPU merges and the output comes back while it is written. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/parallel.h"
#include "mpi/splitters.h"
#include "src/run.h"

/* Merges the sorted runs of data.sorted (and data.sorted_values; offsets has nruns + 1
 * entries). Within the backend's budget this is one call. Beyond it the output is cut into
 * chunks of one call each: exact cuts of the local runs (mpi/splitters.h on MPI_COMM_SELF,
 * stable at equal keys) say which piece of every run a chunk takes; the pieces are packed at the
 * chunk's own place in the spare buffer and merged there, which then holds the result. Local:
 * makes no collective call on the pipeline's communicator. */
static int merge_runs(h5g_run *r, const uint64_t *offsets, size_t nruns) {
  int rc = H5G_OK;
  const h5g_plan *plan = &r->plan;
  h5g_data *d = &r->data;
  unsigned w = plan->ks.width;
  uint64_t n = offsets[nruns], *cuts = NULL, *pieces = NULL;
  h5g_copy_segment *copies = NULL; /* a chunk's pieces: keys, then values */
  if (nruns < 2) goto done;
  uint64_t cap = r->be->capacity(r->be, w, plan->records);
  if (n <= cap) {
    CHECK(r->be->merge(r->be, d->sorted, d->sorted_values, n, w, offsets, nruns));
    goto done;
  }
  char *keys = d->sorted, *spare = h5g_run_spare_keys(r);
  uint64_t *values = d->sorted_values, *spare_values = values ? h5g_run_spare_values(r) : NULL;
  cuts = malloc(3 * nruns * sizeof(uint64_t)); /* row 1: where the chunk ends in every run */
  pieces = malloc((2 * nruns + 1) * sizeof(uint64_t));
  CHECK_ALLOC(cuts, 3 * nruns * sizeof(uint64_t));
  CHECK_ALLOC(pieces, (2 * nruns + 1) * sizeof(uint64_t));
  copies = malloc(2 * nruns * sizeof *copies);
  CHECK_ALLOC(copies, 2 * nruns * sizeof *copies);
  uint64_t *from = pieces, *piece_offsets = pieces + nruns; /* in the runs; in the chunk */
  memcpy(from, offsets, nruns * sizeof(uint64_t));
  for (uint64_t begin = 0; begin < n; begin += cap) {
    uint64_t end = n - begin < cap ? n : begin + cap, at = begin;
    size_t ncopies = 0;
    CHECK(h5g_cuts_at(MPI_COMM_SELF, keys, w, offsets, nruns, &end, 1, cuts));
    for (size_t j = 0; j < nruns; j++) {
      uint64_t count = cuts[nruns + j] - from[j];
      copies[ncopies++] = (h5g_copy_segment){spare + at * w, keys + from[j] * w, count * w};
      if (values)
        copies[ncopies++] = (h5g_copy_segment){spare_values + at, values + from[j],
                                               count * sizeof(uint64_t)};
      piece_offsets[j] = at - begin;
      at += count;
      from[j] = cuts[nruns + j];
    }
    /* the pieces are the whole slice once over: copied by the rank's threads */
    h5g_parallel_copy(copies, ncopies, plan->io_threads);
    if (at != end)
      H5G_FAIL(H5G_ERR_RUNTIME, "internal error: merge chunk [%llu, %llu) got %llu keys",
               (unsigned long long)begin, (unsigned long long)end, (unsigned long long)(at - begin));
    piece_offsets[nruns] = end - begin;
    CHECK(r->be->merge(r->be, spare + begin * w, values ? spare_values + begin : NULL, end - begin,
                       w, piece_offsets, nruns));
  }
  d->sorted = spare;
  d->sorted_values = spare_values;
done:
  free(cuts);
  free(pieces);
  free(copies);
  return rc;
}

/* One rank: its own runs. */
int h5g_merge_local(h5g_run *r) { return merge_runs(r, r->plan.run_offsets, r->plan.nruns); }

int h5g_merge_received(h5g_run *r) {
  h5g_data *d = &r->data;
  size_t nruns = (size_t)r->size * r->plan.nruns;
  if (r->plan.path != H5G_PATH_DEVICE_RESIDENT) return merge_runs(r, d->recv_offsets, nruns);
  /* into the slice buffer, whose keys the cuts were taken from and which the GPU no longer needs */
  d->sorted = d->keys;
  d->sorted_values = d->values;
  return r->be->merge_received(r->be, d->sorted, d->sorted_values, d->recv_offsets[nruns],
                               &r->plan.ks, d->recv_offsets, nruns);
}

int h5g_merge_wait(h5g_run *r) {
  if (r->plan.path != H5G_PATH_DEVICE_RESIDENT) return H5G_OK;
  return r->be->wait_copied(r->be, r->plan.out_n);
}
