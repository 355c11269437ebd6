/* Phase "exchange" (src/exchange_runs.c): each rank's piece of every sorted run (the data's
 * cuts) to its destination; the received runs (recv_offsets) become the sorted share. */
#ifndef H5G_SRC_EXCHANGE_RUNS_H
#define H5G_SRC_EXCHANGE_RUNS_H

#include "src/run.h"

/* Collective; adds the bytes sent to the metrics. */
int h5g_exchange_runs(h5g_run *r, const h5g_plan *plan, const h5g_extent *extent, h5g_data *d);

#endif
