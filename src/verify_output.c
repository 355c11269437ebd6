/* Phase "verify" (--verify): the written share is read back into the spare buffer and checked
 * for order (within and across ranks), count and the order-independent checksum against the
 * input's (src/verify.h); --unique: no key repeated, and the counts add up to the input's. */
#include <stdlib.h>

#include "base/error.h"
#include "mpi/agree.h"
#include "src/verify_output.h"
#include "src/verify.h"


static int check_share(const h5g_run *r, const h5g_verdict *v, const h5g_extent *e,
                       const h5g_verify_result *res) {
  int rc = H5G_OK;
  const char *file = r->opt->output, *dataset = r->opt->output_dataset;
  /* --top and --unique keep a part of the keys, whose checksum the input's does not tell */
  int every_key = !r->opt->unique && e->out_total == v->info.n;
  if (res->n != e->out_total)
    H5G_FAIL(H5G_ERR_RUNTIME, "verify failed: %llu keys written, %llu expected (%s:%s)",
             (unsigned long long)res->n, (unsigned long long)e->out_total, file, dataset);
  if (res->out_of_order)
    H5G_FAIL(H5G_ERR_RUNTIME,
             "verify failed: %llu keys out of order%s, the first at index %llu (%s:%s)",
             (unsigned long long)res->out_of_order, r->opt->unique ? " or repeated" : "",
             (unsigned long long)res->first_bad, file, dataset);
  if (every_key && res->checksum != r->metrics.checksum_in)
    H5G_FAIL(H5G_ERR_RUNTIME,
             "verify failed: checksum of the output differs from the input (%s:%s)",
             file, dataset);
done:
  return rc;
}

/* Collective, --unique --counts without --top: the counts written add up to the input's N. */
static int check_counts(h5g_run *r, const h5g_verdict *v, const h5g_extent *e) {
  int rc = H5G_OK;
  h5g_dset *written = NULL;
  size_t bytes = e->out_n * sizeof(uint64_t);
  uint64_t mine = 0, sum = 0, *counts = malloc(bytes ? bytes : 1);
  STEP(r, H5G_PHASE_VERIFY, h5g_agree_alloc(r->comm, counts != NULL, bytes));
  STEP(r, H5G_PHASE_VERIFY, h5g_io_open_keys(r->out_file, r->opt->counts, NULL, &written));
  STEP(r, H5G_PHASE_VERIFY, h5g_io_read(written, e->out_offset, e->out_n, counts));
  for (uint64_t i = 0; i < e->out_n; i++) mine += counts[i];
  CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, r->comm));
  if (sum != v->info.n) /* the same on every rank */
    H5G_FAIL(H5G_ERR_RUNTIME, "verify failed: the counts add up to %llu, the input has %llu keys "
             "(%s:%s)", (unsigned long long)sum, (unsigned long long)v->info.n,
             r->opt->output, r->opt->counts);
done:
  if (h5g_io_close(written) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  free(counts);
  return rc;
}

/* Local: memory for words 1.. of composed keys of several words (word 0 goes to the spare
 * buffer). */
static int allocate_words(const h5g_verdict *v, const h5g_plan *plan, const h5g_extent *e,
                          const h5g_data *d, void **keys) {
  int rc = H5G_OK;
  size_t bytes = e->out_n * plan->ks.width;
  keys[0] = h5g_data_spare_keys(d);
  for (int k = 1; k < v->layout.words; k++) {
    keys[k] = malloc(bytes ? bytes : 1);
    CHECK_ALLOC(keys[k], bytes);
  }
done:
  return rc;
}

int h5g_verify_output(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *e, const h5g_data *d) {
  int rc = H5G_OK;
  h5g_verify_result res;
  h5g_dset *written[H5G_MAX_KEYS] = {0};
  void *keys[H5G_MAX_KEYS] = {0};
  int words = v->composed ? v->layout.words : 1;
  STEP(r, H5G_PHASE_VERIFY, allocate_words(v, plan, e, d, keys));
  if (v->composed) {
    STEP(r, H5G_PHASE_VERIFY, h5g_keyset_open(r->comm, r->opt, r->out_file, 1, written));
    for (int word = 0; word < words; word++)
      STEP(r, H5G_PHASE_VERIFY, h5g_keyset_read(r->comm, r->opt, &v->layout, written, word,
                                                e->out_offset, e->out_n, plan->ks.width,
                                                keys[word], plan->io_threads, NULL, 0));
  } else {
    STEP(r, H5G_PHASE_VERIFY, h5g_io_open_keys(r->out_file, r->opt->output_dataset,
                                               r->opt->key_field, &written[0]));
    STEP(r, H5G_PHASE_VERIFY, h5g_io_read(written[0], e->out_offset, e->out_n, keys[0]));
  }
  /* --unique: no two neighbours equal (composed keys: numpy's equality) */
  STEP(r, H5G_PHASE_VERIFY, h5g_verify_share(r->comm, keys, words, e->out_n,
                                             e->out_offset, &plan->ks, r->opt->unique,
                                             &res));
  STEP(r, H5G_PHASE_VERIFY, check_share(r, v, e, &res));
  if (r->opt->counts && r->opt->top < 0) CHECK(h5g_agree(r->comm, check_counts(r, v, e)));
done:
  if (h5g_keyset_close(written) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  for (int k = 1; k < words; k++) free(keys[k]);
  return rc;
}
