/* Phase "merge" (src/merge_runs.c): the sorted runs this rank holds become its sorted share
 * (h5g_data_set_sorted). Local: no collective call on the pipeline's communicator. */
#ifndef H5G_SRC_MERGE_RUNS_H
#define H5G_SRC_MERGE_RUNS_H

#include "src/run.h"

/* The nruns sorted runs of data.sorted at `offsets` (nruns + 1 of them), on the host's calls of
 * the backend: one rank's own (data.runs), or those a resumed run recorded (src/resume.h). */
int h5g_merge_runs_at(const h5g_run *r, const h5g_plan *plan, h5g_data *d,
                      const uint64_t *offsets, size_t nruns);
/* Several ranks: the P * R runs received (data.recv_offsets). */
int h5g_merge_received(const h5g_run *r, const h5g_plan *plan, h5g_data *d);
/* The sorted share is in host memory (on the resident path it comes back from the GPU behind
 * the merge; the write waits for it piece by piece, --unique and src/passes.c at once). */
int h5g_merge_wait(const h5g_run *r, const h5g_plan *plan, const h5g_extent *extent);

#endif
