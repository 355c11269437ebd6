/* Phase "local_sort" (src/local_sort.c): every run of the slice sorted on its own, in place in
 * the slice buffer (or on the GPU). Changes the buffers' contents, none of h5g_data's fields. */
#ifndef H5G_SRC_LOCAL_SORT_H
#define H5G_SRC_LOCAL_SORT_H

#include "src/run.h"

/* The runs a resume kept and the record of each run sorted (src/resume.h): runs [0, first) of
 * the slice are sorted already (not read or sorted again); `sorted`, where set, is told each time
 * runs [0, upto) are sorted and back in the slice buffer (their input checksum as read, for
 * --verify, then in d->run_checksums[upto]). */
typedef struct {
  size_t first;
  int (*sorted)(void *ctx, size_t upto);
  void *ctx;
} h5g_sorted_runs;

/* The runs that end by element `upto` of the slice can be sorted without waiting: the host
 * buffers their copies use are pinned that far (ready: never blocks; wait_ready: blocks until
 * they are). */
int h5g_sort_ready(const h5g_run *r, const h5g_plan *plan, const h5g_data *d, uint64_t upto);
int h5g_sort_wait_ready(const h5g_run *r, const h5g_plan *plan, const h5g_data *d, uint64_t upto);
/* Device paths: starts the GPU sort of run j, loaded by src/read.c once h5g_sort_wait_ready
 * returned for its end (its copy back lands in pinned elements, which the toucher never writes
 * again). Where each run sorted is recorded, run j - 1 (unless kept) is waited for first and
 * recorded while run j sorts. */
int h5g_sort_loaded_run(const h5g_run *r, const h5g_plan *plan, const h5g_data *d, size_t j,
                        const h5g_sorted_runs *kept);
/* Device paths: the sorted runs are back in the slice buffer (then recorded). */
int h5g_sort_wait_runs(const h5g_run *r, const h5g_plan *plan, const h5g_sorted_runs *kept);
/* Host path: every run not kept sorted by backend calls, each then recorded. */
int h5g_sort_runs(const h5g_run *r, const h5g_plan *plan, const h5g_data *d,
                  const h5g_sorted_runs *kept);

#endif
