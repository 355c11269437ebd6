/* Sizing (src/sizing.c): before reading, the host memory each rank needs against what its node
 * gives it (a run that cannot fit stops, exit 1, with the rank or node count that would fit);
 * --plan prints that sizing and the plan. Collective; changes nothing. */
#ifndef H5G_SRC_SIZING_H
#define H5G_SRC_SIZING_H

#include "src/run.h"

int h5g_sizing_check(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan);
int h5g_sizing_print_plan(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                          const h5g_extent *extent);

#endif
