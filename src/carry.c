/* Phase "carry": datasets permuted with the keys (--carry), and with --key-field the compound
 * table itself. Each is opened at both ends, this rank's rows are read, the rows of the sorted
 * order are fetched from their owners by source index (mpi/gather_rows.h), and written. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "mpi/gather_rows.h"
#include "src/carry.h"

typedef struct {
  h5g_dset *src, *dst;
  void *rows, *out; /* this rank's rows as read; the rows of its sorted share */
} carried;

static int carry_allocate(const h5g_plan *plan, const h5g_extent *e, carried *c) {
  int rc = H5G_OK;
  size_t bytes = plan->n * h5g_io_row_bytes(c->src);
  size_t out_bytes = e->out_n * h5g_io_row_bytes(c->src);
  c->rows = malloc(bytes ? bytes : 1);
  c->out = malloc(out_bytes ? out_bytes : 1);
  CHECK_ALLOC(c->rows, bytes);
  CHECK_ALLOC(c->out, out_bytes);
done:
  return rc;
}

/* Collective: one carried dataset, step by step (every step agreed, so the closes at the end
 * meet on every rank). `keys_read`: the dataset the keys were read from when they come from src's
 * rows (a table, a 2-D dataset, a float key), else NULL: src is read the same way, so that a
 * damaged file gives the keys and the rows one view. */
static int carry_dataset(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                         const h5g_extent *e, const h5g_data *d, const char *src, const char *dst,
                         const h5g_dset *keys_read) {
  int rc = H5G_OK;
  carried c = {0};
  STEP(r, H5G_PHASE_CARRY, h5g_io_open_rows(r->in_file, src, &c.src));
  STEP(r, H5G_PHASE_CARRY, h5g_io_create_like(r->out_file, dst, c.src, e->out_total,
                                              &r->opt->storage, &c.dst));
  /* written directly; read through HDF5 unless the keys came from its rows without conversion
   * (and so were read directly where that is allowed) */
  h5g_io_allow_direct(c.dst);
  if (keys_read && h5g_io_unconverted(keys_read)) h5g_io_allow_direct(c.src);
  STEP(r, H5G_PHASE_CARRY, carry_allocate(plan, e, &c));
  STEP(r, H5G_PHASE_CARRY, h5g_io_read(c.src, plan->offset, plan->n, c.rows));
  STEP(r, H5G_PHASE_CARRY, h5g_gather_rows(r->comm, d->sorted_values, e->out_n, c.rows,
                                           v->info.n, h5g_io_row_bytes(c.src), c.out,
                                           plan->io_threads));
  STEP(r, H5G_PHASE_CARRY, h5g_io_write(c.dst, e->out_offset, e->out_n, c.out));
done:
  if (h5g_io_close(c.dst) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  if (h5g_io_close(c.src) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  free(c.rows);
  free(c.out);
  return rc;
}

int h5g_carry_all(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                  const h5g_extent *e, const h5g_data *d) {
  int rc = H5G_OK;
  const h5g_options *opt = r->opt;
  char *target = NULL;
  const h5g_key_layout *layout = &v->layout;
  if (opt->key_field || opt->nkey_columns)
    CHECK(carry_dataset(r, v, plan, e, d, opt->dataset, opt->output_dataset,
                        r->keys_in[1] ? NULL : r->keys_in[0]));
  for (int i = 0; v->composed && !opt->key_field && !opt->nkey_columns && i < layout->count;
       i++)
    if (h5g_keyset_fetched(layout, i)) /* src/write.c writes the others */
      CHECK(carry_dataset(r, v, plan, e, d, h5g_options_key(opt, i).dataset,
                          h5g_options_key_output(opt, i), r->keys_in[i]));
  for (int i = 0; i < opt->ncarry; i++) {
    free(target);
    target = h5g_options_carry_target(opt, opt->carry[i]);
    CHECK_ALLOC(target, strlen(opt->carry[i]) + strlen(opt->output_dataset) + 1);
    CHECK(carry_dataset(r, v, plan, e, d, opt->carry[i], target, NULL));
  }
done:
  free(target);
  return rc;
}
