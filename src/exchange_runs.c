/* Phase "exchange": every rank sends each destination its piece of every sorted run (cut by the
 * exact splitters) and receives P * R sorted runs, its share of the output. Through the host
 * (MPI, or NCCL staging host buffers), or between the GPUs on the resident path. */
#include "base/error.h"
#include "mpi/run_exchange.h"
#include "src/run.h"

/* Moves the keys and values; the counts are known. */
static int move_runs(h5g_run *r, const h5g_run_exchange *x) {
  int rc = H5G_OK;
  h5g_data *d = &r->data;
  unsigned w = r->plan.ks.width;
  int packed = h5g_run_exchange_needs_packing(x);
  if (r->plan.path == H5G_PATH_DEVICE_RESIDENT) { /* the host keeps its copy of the sorted run */
    h5g_device_run run;
    CHECK(r->be->run_buffers(r->be, &run));
    CHECK(h5g_transport_exchange_device(r->transport, run.keys, x->send_total, run.spare,
                                        x->recv_total, w));
    if (r->plan.records)
      CHECK(h5g_transport_exchange_device(r->transport, run.values, x->send_total,
                                          run.spare_values, x->recv_total, sizeof(uint64_t)));
    goto done; /* the merged output comes back into the slice buffer (h5g_merge_received) */
  }
  /* packed runs lie in the spare buffer and are received into the slice buffer */
  void *send = packed ? d->spare : d->keys, *recv = packed ? d->keys : d->spare;
  uint64_t *send_values = packed ? d->spare_values : d->values;
  uint64_t *recv_values = packed ? d->values : d->spare_values;
  CHECK(h5g_transport_exchange(r->transport, send, x->send_total, recv, x->recv_total, w));
  if (r->plan.records)
    CHECK(h5g_transport_exchange(r->transport, send_values, x->send_total, recv_values,
                                 x->recv_total, sizeof(uint64_t)));
  d->sorted = recv;
  d->sorted_values = recv_values;
done:
  return rc;
}

static int pack_runs(h5g_run *r, const h5g_run_exchange *x) {
  h5g_data *d = &r->data;
  h5g_run_exchange_pack(x, d->cuts, d->keys, d->spare, r->plan.ks.width);
  if (r->plan.records) h5g_run_exchange_pack(x, d->cuts, d->values, d->spare_values, sizeof(uint64_t));
  return H5G_OK;
}

int h5g_exchange_runs(h5g_run *r) {
  int rc = H5G_OK;
  h5g_run_exchange x = {0};
  const h5g_plan *plan = &r->plan;
  STEP(r, H5G_PHASE_EXCHANGE, h5g_run_exchange_alloc((size_t)r->size, plan->nruns, &x));
  STEP(r, H5G_PHASE_EXCHANGE, h5g_run_exchange_counts(r->comm, r->data.cuts, plan->n, plan->offset,
                                                      &x, r->data.recv_offsets));
  if (h5g_run_exchange_needs_packing(&x) && plan->path != H5G_PATH_DEVICE_RESIDENT)
    STEP(r, H5G_PHASE_EXCHANGE, pack_runs(r, &x));
  STEP(r, H5G_PHASE_EXCHANGE, move_runs(r, &x));
  r->metrics.exchanged_bytes =
      (plan->n - x.send_total[r->rank]) * (plan->ks.width + (plan->records ? sizeof(uint64_t) : 0));
done:
  h5g_run_exchange_free(&x);
  return rc;
}
