/* Phase "write" (src/write.c): the sorted share into a temporary file beside OUTPUT, renamed
 * over OUTPUT only after every rank succeeded. Opens and closes r->out_file, marks
 * r->tmp_created; changes no shared state. */
#ifndef H5G_SRC_WRITE_H
#define H5G_SRC_WRITE_H

#include "src/run.h"

/* What the temporary file will hold at most, as far as it is known before writing. */
unsigned long long h5g_write_output_bytes(const h5g_run *r, const h5g_verdict *v,
                                          const h5g_plan *plan, const h5g_extent *extent);
/* True when the options allow the output to be made before the input is read and its pages
 * to be made beside the GPU context (h5g_write_early): a GPU may sort, the output's size is
 * known from the start (no --top, --unique, --plan), its keys are one dataset written as they
 * are (not several -d, nor fields or columns, which move as records), and no copy of INPUT
 * starts it (--whole-file; in place is known only once validated: h5g_write_early). */
int h5g_write_populates(const h5g_options *opt);
/* Collective, with INPUT and its keys open (src/read.h), on a run h5g_write_populates allows
 * whose ranks are all making a GPU context (src/pipeline.c: context_coming; the sort may still
 * run on the CPU) and have a helper (io/h5io.h): the temporary output and its key dataset
 * made (r->out_keys), and the helper told to make the pages of this rank's rows while the
 * driver starts and the GPU context is made; h5g_write_keys then writes them. */
int h5g_write_early(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                    const h5g_extent *extent);
/* Collective, steps of `phase`: rank 0 checks that the output fits and (in place,
 * --whole-file) copies the input beside OUTPUT; the temporary file is opened (or made) by every
 * rank; rank 0 reserves its disk space before any data is written. */
int h5g_write_start(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                    const h5g_extent *extent, h5g_phase phase);
int h5g_write_keys(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                   const h5g_extent *extent, const h5g_data *d);
int h5g_write_close(h5g_run *r, const h5g_verdict *v);
int h5g_write_references(const h5g_run *r, const h5g_verdict *v);
int h5g_write_commit(h5g_run *r, const h5g_verdict *v);

#endif
