/* Phase "local_sort": every run of the slice sorted on its own. On the device paths the GPU
 * sorts run j while run j + 1 is read (src/read.c hands each run over once it is read and the
 * slice buffer is pinned that far); on the host path the runs are sorted by backend calls once
 * the slice is in memory. */
#include "base/error.h"
#include "src/local_sort.h"

/* Streamed, they come back with the keys, slot by slot (src/write.c). */
static int values_come_back(const h5g_run *r, const h5g_plan *plan) {
  return plan->records && !plan->streamed &&
         (plan->path != H5G_PATH_DEVICE_RESIDENT || r->size == 1);
}

/* The keys buffer's elements the runs ending by `upto` use: streamed, the ring's (whole). */
static uint64_t keys_used(const h5g_plan *plan, uint64_t upto) {
  return plan->streamed ? h5g_ring_elems(plan) : upto;
}

int h5g_sort_ready(const h5g_run *r, const h5g_plan *plan, const h5g_data *d, uint64_t upto) {
  return h5g_buffers_pinned(d->set, H5G_BUFFER_KEYS, keys_used(plan, upto)) &&
         (!values_come_back(r, plan) || h5g_buffers_pinned(d->set, H5G_BUFFER_VALUES, upto));
}

int h5g_sort_wait_ready(const h5g_run *r, const h5g_plan *plan, const h5g_data *d, uint64_t upto) {
  int rc = H5G_OK;
  CHECK(h5g_buffers_wait_pinned(d->set, H5G_BUFFER_KEYS, keys_used(plan, upto)));
  if (values_come_back(r, plan)) CHECK(h5g_buffers_wait_pinned(d->set, H5G_BUFFER_VALUES, upto));
done:
  return rc;
}

/* Starts the GPU sort of run j, which then comes back: as the output when one rank holds one
 * run (nothing else to do), otherwise as ordered bits for the splitters or the merge. The values
 * come back where the host needs them: not on the resident path across ranks, where they stay on
 * the GPU for the exchange and the merge. */
int h5g_sort_loaded_run(const h5g_run *r, const h5g_plan *plan, const h5g_data *d, size_t j,
                        const h5g_sorted_runs *kept) {
  int rc = H5G_OK;
  const uint64_t *offsets = plan->run_offsets;
  uint64_t begin = offsets[j], len = offsets[j + 1] - begin;
  uint64_t *values = values_come_back(r, plan) ? d->values + begin : NULL;
  /* streamed: the write takes it back slot by slot (src/write.c) */
  void *keys = plan->streamed ? NULL : (char *)d->keys + begin * plan->ks.width;
  /* run j - 1's is the last copy back until run j's sort starts */
  int record = kept->sorted && j > kept->first;
  if (record) CHECK(r->be->wait_copied(r->be, offsets[j] - offsets[j - 1]));
  CHECK(r->be->sort_loaded(r->be, keys, values, plan->offset + begin, len, &plan->ks,
                           plan->sort_is_output));
  if (record) CHECK(kept->sorted(kept->ctx, j));
done:
  return rc;
}

/* The host needs the sorted runs: waits for the last one, the others came back before it (none
 * where every run was kept). */
int h5g_sort_wait_runs(const h5g_run *r, const h5g_plan *plan, const h5g_sorted_runs *kept) {
  int rc = H5G_OK;
  const uint64_t *offsets = plan->run_offsets;
  size_t last = plan->nruns - 1;
  if (kept->first == plan->nruns) goto done;
  CHECK(r->be->wait_copied(r->be, offsets[last + 1] - offsets[last]));
  if (kept->sorted) CHECK(kept->sorted(kept->ctx, plan->nruns));
done:
  return rc;
}

int h5g_sort_runs(const h5g_run *r, const h5g_plan *plan, const h5g_data *d,
                  const h5g_sorted_runs *kept) {
  int rc = H5G_OK;
  unsigned w = plan->ks.width;
  for (size_t j = kept->first; j < plan->nruns; j++) {
    uint64_t begin = plan->run_offsets[j], len = plan->run_offsets[j + 1] - begin;
    CHECK(r->be->sort(r->be, (char *)d->keys + begin * w,
                      plan->records ? d->values + begin : NULL, len, w));
    if (kept->sorted) CHECK(kept->sorted(kept->ctx, j + 1));
  }
done:
  return rc;
}
