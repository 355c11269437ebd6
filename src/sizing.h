/* Sizing (src/sizing.c): before reading, the host memory each rank needs against what its node
 * gives it: a share that does not fit spills to scratch files, or, where even that cannot fit,
 * the run stops (exit 1) with the rank or node count that would fit; --plan prints that sizing
 * and the plan. Collective. */
#ifndef H5G_SRC_SIZING_H
#define H5G_SRC_SIZING_H

#include "src/run.h"

/* Collective, once the runs are agreed: a rank whose share does not fit spills (plan->spills)
 * unless --no-spill; on the CPU backend its runs are then cut to what fits beside the rest of
 * what it holds (the backend's budget), and the runs agreed again. */
int h5g_sizing_spill(h5g_run *r, const h5g_verdict *v, h5g_plan *plan);
/* Fails (one line, the same on every rank) when a rank does not fit, spilled or not, or when a
 * spilling rank's scratch directory lacks the room; else the spilling ranks' buffers come from
 * there from now on (base/scratch_memory.h). */
int h5g_sizing_check(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan);
int h5g_sizing_print_plan(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                          const h5g_extent *extent);

#endif
