/* Keys of more than 128 bits together (src/keyset.h): composed into several 128-bit words, sorted
 * one word per pass, the last word first, as an LSD radix sort takes its digits. Each pass is the
 * whole sort (local sort, exact splitters, exchange, merge) of the elements in the order the pass
 * before left them, by their next word; the sort is stable, so ties keep that order and after the
 * pass of word 0 the order is the key tuples'. Between passes `order` (the source index of the
 * element at each position of this rank's share) follows the sort, and the next word's keys are
 * fetched by it from the ranks that read them (mpi/gather_rows.h).
 *
 * What it costs beyond one sort: per extra word, a full sort, exchange and merge, a read of the
 * word's keys, a gather of 16 bytes and one of 8 per element; memory for the word's keys (16
 * bytes) and the order (8) per element, and the sort's own buffers hold 16-byte keys. Keys of up
 * to 128 bits together take one sort (base/compose.h). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "mpi/agree.h"
#include "mpi/gather_rows.h"
#include "src/passes.h"

#include "src/merge_runs.h"

int h5g_passes_word_in_order(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, int word,
                             const uint64_t *src_index, uint64_t count, void *out,
                             uint64_t *checksum) {
  int rc = H5G_OK;
  unsigned w = plan->ks.width;
  size_t bytes = plan->n * w;
  void *slice = malloc(bytes ? bytes : 1);
  STEP(r, H5G_PHASE_READ, h5g_agree_alloc(r->comm, slice != NULL, bytes));
  STEP(r, H5G_PHASE_READ, h5g_keyset_read(r->comm, r->opt, &v->layout, r->keys_in, word,
                                          plan->offset, plan->n, w, slice, plan->io_threads,
                                          NULL, 0));
  if (checksum) *checksum += h5g_keys_checksum_parallel(slice, plan->n, w, plan->io_threads);
  STEP(r, H5G_PHASE_EXCHANGE, h5g_gather_rows(r->comm, src_index, count, slice, v->info.n,
                                              w, out, plan->io_threads));
done:
  free(slice);
  return rc;
}

/* Collective: order[i] = order[sorted_values[i]] (the first time: sorted_values, which are source
 * indices then), for `count` elements. */
static int follow_order(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                        h5g_data *d, uint64_t count) {
  int rc = H5G_OK;
  size_t bytes = (count > plan->n ? count : plan->n) * sizeof(uint64_t); /* --top: more */
  uint64_t *next = malloc(bytes ? bytes : 1);
  CHECK(h5g_agree_alloc(r->comm, next != NULL, bytes));
  if (d->order)
    CHECK(h5g_gather_rows(r->comm, d->sorted_values, count, d->order, v->info.n,
                          sizeof(uint64_t), next, plan->io_threads));
  else if (count)
    memcpy(next, d->sorted_values, count * sizeof(uint64_t));
  free(d->order);
  d->order = next;
  next = NULL;
done:
  free(next);
  return rc;
}

int h5g_passes_next(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                    const h5g_extent *e, h5g_data *d, int word) {
  int rc = H5G_OK;
  uint64_t checksum = 0;
  STEP(r, H5G_PHASE_MERGE, h5g_merge_wait(r, plan, e));
  STEP(r, H5G_PHASE_EXCHANGE, follow_order(r, v, plan, d, plan->n));
  /* the pass's sorted keys are spent: the next word's take the slice buffer */
  CHECK(h5g_passes_word_in_order(r, v, plan, word, d->order, plan->n, d->keys,
                                 r->opt->verify ? &checksum : NULL));
  r->metrics.checksum_in += checksum;
  h5g_data_set_sorted(d, d->keys, d->values);
done:
  return rc;
}

int h5g_passes_finish(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *e, h5g_data *d) {
  int rc = H5G_OK;
  STEP(r, H5G_PHASE_MERGE, h5g_merge_wait(r, plan, e));
  STEP(r, H5G_PHASE_EXCHANGE, follow_order(r, v, plan, d, e->out_n));
  if (e->out_n) memcpy(d->sorted_values, d->order, e->out_n * sizeof(uint64_t));
done:
  return rc;
}
