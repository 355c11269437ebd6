/* Phase "write" (src/write.c): the sorted share into a temporary file beside OUTPUT, renamed
 * over OUTPUT only after every rank succeeded. Opens and closes r->out_file, marks
 * r->tmp_created; changes no shared state. */
#ifndef H5G_SRC_WRITE_H
#define H5G_SRC_WRITE_H

#include "src/run.h"

/* What the temporary file will hold at most, as far as it is known before writing. */
unsigned long long h5g_write_output_bytes(const h5g_run *r, const h5g_verdict *v,
                                          const h5g_plan *plan, const h5g_extent *extent);
/* Collective, steps of "write": rank 0 checks that the output fits and (in place,
 * --whole-file) copies the input beside OUTPUT; the temporary file is opened (or made) by every
 * rank; rank 0 reserves its disk space before any data is written. */
int h5g_write_start(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                    const h5g_extent *extent);
int h5g_write_keys(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                   const h5g_extent *extent, const h5g_data *d);
int h5g_write_close(h5g_run *r, const h5g_verdict *v);
int h5g_write_references(const h5g_run *r, const h5g_verdict *v);
int h5g_write_commit(h5g_run *r, const h5g_verdict *v);
/* A failed run's error names OUTPUT where it named the temporary file written in its place (io/
 * knows only the file it has open); the files MPI-IO makes beside it keep their names. */
void h5g_write_name_output(const h5g_options *opt, const h5g_verdict *v);

#endif
