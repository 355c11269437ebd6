/* Phase "local_sort" (src/local_sort.c): every run of the slice sorted on its own, in place in
 * the slice buffer (or on the GPU). Changes the buffers' contents, none of h5g_data's fields. */
#ifndef H5G_SRC_LOCAL_SORT_H
#define H5G_SRC_LOCAL_SORT_H

#include "src/run.h"

/* The runs that end by element `upto` of the slice can be sorted without waiting: the host
 * buffers their copies use are pinned that far (ready: never blocks; wait_ready: blocks until
 * they are). */
int h5g_sort_ready(const h5g_run *r, const h5g_plan *plan, const h5g_data *d, uint64_t upto);
int h5g_sort_wait_ready(const h5g_run *r, const h5g_plan *plan, const h5g_data *d, uint64_t upto);
/* Device paths: starts the GPU sort of run j, loaded by src/read.c once h5g_sort_wait_ready
 * returned for its end (its copy back lands in pinned elements, which the toucher never writes
 * again). */
int h5g_sort_loaded_run(const h5g_run *r, const h5g_plan *plan, const h5g_data *d, size_t j);
/* Device paths: the sorted runs are back in the slice buffer. */
int h5g_sort_wait_runs(const h5g_run *r, const h5g_plan *plan);
/* Host path: every run sorted by backend calls. */
int h5g_sort_runs(const h5g_run *r, const h5g_plan *plan, const h5g_data *d);

#endif
