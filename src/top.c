/* --top K: only the first K elements of the order a full sort gives. With several ranks the exact
 * splitters cut the sorted runs at global ranks k*K/P (k = 1..P) instead of k*N/P, so rank d
 * receives exactly its share [d*K/P, (d+1)*K/P) of the first K and nothing past the cut at K
 * moves or is written. One rank keeps the first K of its merged runs. */
#include "base/error.h"
#include "mpi/splitters.h"
#include "mpi/topology.h"
#include "src/top.h"

/* The written share once the first `k` of out_total are kept. */
static void keep_first(h5g_extent *e, uint64_t k) {
  if (k > e->out_total) k = e->out_total;
  uint64_t end = e->out_offset + e->out_n;
  e->out_n = e->out_offset >= k ? 0 : (end < k ? end : k) - e->out_offset;
  if (e->out_offset > k) e->out_offset = k;
  e->out_total = k;
}

uint64_t h5g_top_rows(const h5g_options *opt, const h5g_verdict *v, int size, int rank) {
  uint64_t n = v->info.n, k = (uint64_t)opt->top < n ? (uint64_t)opt->top : n;
  if (opt->top < 0 || opt->unique) return 0; /* top K distinct: after a full sort */
  return h5g_share_begin((uint64_t)rank + 1, k, (uint64_t)size) -
         h5g_share_begin((uint64_t)rank, k, (uint64_t)size);
}

int h5g_top_cuts(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                 const h5g_data *d, h5g_extent *e) {
  int rc = H5G_OK;
  uint64_t n = v->info.n, k = (uint64_t)r->opt->top < n ? (uint64_t)r->opt->top : n;
  uint64_t targets[r->size];
  for (int to = 1; to <= r->size; to++)
    targets[to - 1] = h5g_share_begin((uint64_t)to, k, (uint64_t)r->size);
  /* rows 0..P of the P + 2 are the exchange's: row P is the cut at K, row P + 1 the run ends */
  CHECK(h5g_cuts_at(r->comm, d->keys, plan->ks.width, d->runs, plan->nruns, targets,
                    r->size, d->cuts));
  e->out_offset = h5g_share_begin((uint64_t)r->rank, k, (uint64_t)r->size);
  e->out_n = h5g_share_begin((uint64_t)r->rank + 1, k, (uint64_t)r->size) - e->out_offset;
  e->out_total = k;
done:
  return rc;
}

int h5g_top_keep(const h5g_run *r, h5g_extent *e) {
  keep_first(e, (uint64_t)r->opt->top);
  return H5G_OK;
}
