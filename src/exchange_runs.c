/* Phase "exchange": every rank sends each destination its piece of every sorted run (cut by the
 * exact splitters) and receives P * R sorted runs, its share of the output. Through the host
 * (MPI, or NCCL staging host buffers), or between the GPUs on the resident path. */
#include "base/error.h"
#include "mpi/run_exchange.h"
#include "src/exchange_runs.h"

/* Collective: moves the keys (values == 0) or their values; the counts are known. On the
 * resident path between the GPUs (the merged output then comes back into the slice buffer,
 * h5g_merge_received), else through host buffers: packed runs lie in the spare buffer and are
 * received into the slice buffer, unpacked ones are received into the spare buffer. */
static int move_runs(h5g_run *r, const h5g_plan *plan, const h5g_data *d,
                     const h5g_run_exchange *x, int values) {
  int rc = H5G_OK;
  size_t size = values ? sizeof(uint64_t) : plan->ks.width;
  if (plan->path == H5G_PATH_DEVICE_RESIDENT) {
    h5g_device_run run;
    CHECK(r->be->run_buffers(r->be, &run));
    CHECK(h5g_transport_exchange_device(r->transport, values ? (void *)run.values : run.keys,
                                        x->send_total,
                                        values ? (void *)run.spare_values : run.spare,
                                        x->recv_total, size));
    goto done;
  }
  int packed = h5g_run_exchange_needs_packing(x);
  void *keys = values ? (void *)d->values : d->keys;
  void *spare = values ? (void *)d->spare_values : d->spare;
  CHECK(h5g_transport_exchange(r->transport, packed ? spare : keys, x->send_total,
                               packed ? keys : spare, x->recv_total, size));
done:
  return rc;
}

static int pack_runs(const h5g_plan *plan, const h5g_data *d, const h5g_run_exchange *x) {
  h5g_run_exchange_pack(x, d->cuts, d->keys, d->spare, plan->ks.width);
  if (plan->records)
    h5g_run_exchange_pack(x, d->cuts, d->values, d->spare_values, sizeof(uint64_t));
  return H5G_OK;
}

int h5g_exchange_runs(h5g_run *r, const h5g_plan *plan, const h5g_extent *e, h5g_data *d) {
  int rc = H5G_OK;
  h5g_run_exchange x = {0};
  STEP(r, H5G_PHASE_EXCHANGE, h5g_run_exchange_alloc((size_t)r->size, plan->nruns, &x));
  STEP(r, H5G_PHASE_EXCHANGE, h5g_run_exchange_counts(r->comm, d->cuts, e->out_n,
                                                      e->out_offset, &x, d->recv_offsets));
  if (h5g_run_exchange_needs_packing(&x)) /* never on the resident path: one run */
    STEP(r, H5G_PHASE_EXCHANGE, pack_runs(plan, d, &x));
  STEP(r, H5G_PHASE_EXCHANGE, move_runs(r, plan, d, &x, 0));
  if (plan->records) STEP(r, H5G_PHASE_EXCHANGE, move_runs(r, plan, d, &x, 1));
  if (plan->path != H5G_PATH_DEVICE_RESIDENT) { /* the received runs, until they are merged */
    int packed = h5g_run_exchange_needs_packing(&x);
    h5g_data_set_sorted(d, packed ? d->keys : d->spare,
                        !plan->records ? d->sorted_values : packed ? d->values : d->spare_values);
  }
  uint64_t sent = 0;
  for (int to = 0; to < r->size; to++) sent += to == r->rank ? 0 : x.send_total[to];
  r->metrics.exchanged_bytes += sent * (plan->ks.width + (plan->records ? sizeof(uint64_t) : 0));
done:
  h5g_run_exchange_free(&x);
  return rc;
}
