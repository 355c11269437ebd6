/* Phase "write" (src/write.c): the sorted share into a temporary file beside OUTPUT, renamed
 * over OUTPUT only after every rank succeeded. Opens and closes r->out_file, marks
 * r->tmp_created; changes no shared state. */
#ifndef H5G_SRC_WRITE_H
#define H5G_SRC_WRITE_H

#include "src/run.h"

/* What the temporary file will hold at most, as far as it is known before writing. */
unsigned long long h5g_write_output_bytes(const h5g_run *r, const h5g_verdict *v,
                                          const h5g_plan *plan, const h5g_extent *extent);
int h5g_write_prepare(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *extent);
int h5g_write_open(h5g_run *r, const h5g_verdict *v);
int h5g_write_reserve(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *extent);
int h5g_write_keys(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                   const h5g_extent *extent, const h5g_data *d);
int h5g_write_close(h5g_run *r, const h5g_verdict *v);
int h5g_write_references(const h5g_run *r, const h5g_verdict *v);
int h5g_write_commit(h5g_run *r, const h5g_verdict *v);

#endif
