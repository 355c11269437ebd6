/* Phase "verify" (src/verify_output.c, --verify): the written share read back (into the spare
 * buffer) and checked against the input. Changes no shared state. */
#ifndef H5G_SRC_VERIFY_OUTPUT_H
#define H5G_SRC_VERIFY_OUTPUT_H

#include "src/run.h"

int h5g_verify_output(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *extent, const h5g_data *d);

#endif
