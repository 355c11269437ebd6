/* Phase "merge": the sorted runs this rank holds become its sorted share. With one rank those
 * are its own runs (out of core), otherwise the P * R runs it received. On the resident path the
 * GPU merges and the output comes back while it is written. */
#include <limits.h>
#include <stdlib.h>

#include "base/error.h"
#include "base/parallel.h"
#include "mpi/splitters.h"
#include "src/merge_runs.h"

/* Chunk c of a merge in chunks (the pipeline's merge, without a streaming backend): the pieces
 * [cuts[c * nruns + j], cuts[(c + 1) * nruns + j]) of every run j packed at the chunk's own place
 * in `spare` by the rank's threads, then merged there by one backend call. */
static int pack_and_merge(const h5g_run *r, const h5g_plan *plan, const char *keys,
                          const uint64_t *values, const uint64_t *cuts, size_t nruns, size_t c,
                          uint64_t begin,
                          char *spare, uint64_t *spare_values, uint64_t *piece_offsets,
                          h5g_copy_segment *copies) {
  int rc = H5G_OK;
  unsigned w = plan->ks.width;
  const uint64_t *from = cuts + c * nruns, *to = from + nruns;
  uint64_t at = begin;
  size_t ncopies = 0;
  for (size_t j = 0; j < nruns; j++) {
    uint64_t count = to[j] - from[j];
    copies[ncopies++] = (h5g_copy_segment){spare + at * w, keys + from[j] * w, count * w};
    if (values)
      copies[ncopies++] = (h5g_copy_segment){spare_values + at, values + from[j],
                                             count * sizeof(uint64_t)};
    piece_offsets[j] = at - begin;
    at += count;
  }
  piece_offsets[nruns] = at - begin;
  /* the pieces are the whole slice once over: copied by the rank's threads */
  h5g_parallel_copy(copies, ncopies, plan->io_threads);
  CHECK(r->be->merge(r->be, spare + begin * w, values ? spare_values + begin : NULL, at - begin, w,
                     piece_offsets, nruns));
done:
  return rc;
}

/* The sorted runs of data.sorted (and data.sorted_values) merged. Within the backend's budget this is one call. Beyond it the output is cut into
 * chunks: exact cuts of the local runs (mpi/splitters.h on MPI_COMM_SELF, stable at equal keys)
 * say which piece of every run a chunk takes. A streaming backend (the GPU) takes the pieces from
 * where they lie, chunk after chunk, while the next travels; otherwise each chunk is packed and
 * merged in the spare buffer. The spare buffer then holds the result. Local: makes no
 * collective call on the pipeline's communicator. */
int h5g_merge_runs_at(const h5g_run *r, const h5g_plan *plan, h5g_data *d,
                      const uint64_t *offsets, size_t nruns) {
  int rc = H5G_OK;
  h5g_backend *be = r->be;
  unsigned w = plan->ks.width;
  uint64_t n = offsets[nruns], *cuts = NULL, *targets = NULL, *piece_offsets = NULL;
  h5g_copy_segment *copies = NULL; /* a packed chunk's pieces: keys, then values */
  if (nruns < 2) goto done;
  if (n <= be->capacity(be, w, d->sorted_values != NULL)) {
    CHECK(be->merge(be, d->sorted, d->sorted_values, n, w, offsets, nruns));
    goto done;
  }
  char *keys = d->sorted, *spare = h5g_data_spare_keys(d);
  uint64_t *values = d->sorted_values, *spare_values = values ? h5g_data_spare_values(d) : NULL;
  int streams = be->merge_stream && be->merge_chunk;
  uint64_t chunk = streams ? be->merge_chunk(be, w, values != NULL)
                           : be->capacity(be, w, values != NULL);
  uint64_t nchunks = (n + chunk - 1) / chunk;
  if (nchunks - 1 > INT_MAX)
    H5G_FAIL(H5G_ERR_USAGE, "%llu merge chunks of %llu keys are too many: raise --device-memory",
             (unsigned long long)nchunks, (unsigned long long)chunk);
  /* row c of cuts: where chunk c begins in every run */
  targets = malloc(nchunks * sizeof(uint64_t));
  cuts = malloc((nchunks + 1) * nruns * sizeof(uint64_t));
  CHECK_ALLOC(targets, nchunks * sizeof(uint64_t));
  CHECK_ALLOC(cuts, (nchunks + 1) * nruns * sizeof(uint64_t));
  for (uint64_t c = 0; c + 1 < nchunks; c++) targets[c] = (c + 1) * chunk;
  CHECK(h5g_cuts_at(MPI_COMM_SELF, keys, w, offsets, nruns, targets, (int)(nchunks - 1), cuts));
  for (uint64_t c = 0; c < nchunks; c++) { /* exact cuts: every chunk but the last is full */
    uint64_t got = 0, want = n - c * chunk < chunk ? n - c * chunk : chunk;
    int backwards = 0;
    for (size_t j = 0; j < nruns; j++) {
      backwards |= cuts[(c + 1) * nruns + j] < cuts[c * nruns + j];
      got += cuts[(c + 1) * nruns + j] - cuts[c * nruns + j];
    }
    if (backwards || got != want)
      H5G_FAIL(H5G_ERR_RUNTIME, "internal error: merge chunk %llu got %llu keys, not %llu",
               (unsigned long long)c, (unsigned long long)got, (unsigned long long)want);
  }
  if (streams) {
    CHECK(be->merge_stream(be, keys, values, w, cuts, nruns, nchunks, spare, spare_values));
  } else {
    piece_offsets = malloc((nruns + 1) * sizeof(uint64_t));
    copies = malloc(2 * nruns * sizeof *copies);
    CHECK_ALLOC(piece_offsets, (nruns + 1) * sizeof(uint64_t));
    CHECK_ALLOC(copies, 2 * nruns * sizeof *copies);
    for (uint64_t c = 0; c < nchunks; c++) {
      if (c == nchunks / 2) h5g_fault_point(r, "merge-half"); /* a run killed in its merge */
      CHECK(pack_and_merge(r, plan, keys, values, cuts, nruns, c, c * chunk, spare, spare_values,
                           piece_offsets, copies));
    }
  }
  h5g_data_set_sorted(d, spare, spare_values);
done:
  free(cuts);
  free(targets);
  free(piece_offsets);
  free(copies);
  return rc;
}

int h5g_merge_received(const h5g_run *r, const h5g_plan *plan, h5g_data *d) {
  size_t nruns = (size_t)r->size * plan->nruns;
  if (plan->path != H5G_PATH_DEVICE_RESIDENT)
    return h5g_merge_runs_at(r, plan, d, d->recv_offsets, nruns);
  /* into the slice buffer, whose keys the cuts were taken from and which the GPU no longer needs */
  h5g_data_set_sorted(d, d->keys, d->values);
  return r->be->merge_received(r->be, d->sorted, d->sorted_values, d->recv_offsets[nruns],
                               &plan->ks, d->recv_offsets, nruns);
}

int h5g_merge_wait(const h5g_run *r, const h5g_plan *plan, const h5g_extent *e) {
  if (plan->path != H5G_PATH_DEVICE_RESIDENT) return H5G_OK;
  return r->be->wait_copied(r->be, e->out_n);
}
