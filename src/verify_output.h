/* Phase "verify" (src/verify_output.c, --verify): the written share read back in pieces of
 * bounded size and checked against the input. Changes no shared state. */
#ifndef H5G_SRC_VERIFY_OUTPUT_H
#define H5G_SRC_VERIFY_OUTPUT_H

#include "src/run.h"

int h5g_verify_output(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *extent);

/* Host bytes the phase takes for a share of `rows` rows (0 without --verify): src/sizing.c
 * counts them. */
uint64_t h5g_verify_output_bytes(const h5g_options *opt, const h5g_verdict *v,
                                 const h5g_plan *plan, uint64_t rows);

#endif
