/* --unique (src/unique.c): one element per distinct key. Packs the data's runs or sorted share
 * and cuts the extent to what is kept; --counts: data.counts. */
#ifndef H5G_SRC_UNIQUE_H
#define H5G_SRC_UNIQUE_H

#include "src/run.h"

/* Before the exchange: each sorted run keeps the first of each group of equal keys (where the
 * runs are in host memory and the key is one word; else nothing), and the exchange's shares are
 * those of the distinct keys left (data.runs, the extent). Collective. */
int h5g_unique_runs(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, h5g_data *d,
                    h5g_extent *extent);
/* After the merge: the first of every group across the ranks. Collective. */
int h5g_unique(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, h5g_data *d,
               h5g_extent *extent);

#endif
