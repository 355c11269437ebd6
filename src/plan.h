/* Phases "setup", "connect" and "buffers" (src/plan.c): the plan, made once from the verdict;
 * const for every phase after it. Also makes the context's backend and transport, and the
 * data's host buffers and tables (h5g_data_free releases them). */
#ifndef H5G_SRC_PLAN_H
#define H5G_SRC_PLAN_H

#include "src/resume.h"
#include "src/run.h"

/* The key, whether values move with it, and this rank's share of the input. */
void h5g_plan_share(const h5g_run *r, const h5g_verdict *v, h5g_plan *plan);
/* This rank's CPUs, I/O threads and I/O policy (no GPU call), its place on the node known
 * (plan->local_rank, plan->ranks_on_node: h5g_local_rank). */
int h5g_plan_node(const h5g_run *r, h5g_plan *plan);
/* Collective, after h5g_plan_node: backend and GPU of this rank (the CUDA driver's start). */
int h5g_plan_devices(const h5g_run *r, h5g_plan *plan);
/* Collective: opens r->transport. */
int h5g_plan_transport(h5g_run *r, const h5g_plan *plan);
/* Makes r->be. */
int h5g_plan_backend(h5g_run *r, const h5g_plan *plan);
/* Collective: the runs per rank and the path the keys take. */
int h5g_plan_runs(const h5g_run *r, const h5g_verdict *v, h5g_plan *plan);
/* The plan rank `rank` of `size` ranks would have, from the plan made for r->size ranks: its
 * share, runs of the backend's capacity and the path those allow; at r's own size, the plan
 * with that rank's share. For src/sizing.c, which asks what a job needs at another rank count
 * (no collective call). */
void h5g_plan_at(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, int size,
                 int rank, h5g_plan *at);
/* The run offsets, and the data's tables: the runs held, the cuts, the received runs. */
int h5g_plan_tables(const h5g_run *r, h5g_plan *plan, h5g_data *d);
/* The host buffers rank `rank` of `size` needs with `plan` (src/sizing.c counts them before
 * they are made, at other rank counts too). */
void h5g_plan_buffer_specs(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, int size,
                           int rank, h5g_buffer_spec *specs);
/* Starts making the data's host buffers (the files of `res`, src/resume.h, when it names them);
 * the sorted share starts as the slice buffer. */
int h5g_plan_buffers(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                     const h5g_resume *res, h5g_data *d);
/* The backend `be` (an h5g_backend *) pins or unpins a piece of a buffer set's buffer
 * (base/host_memory.h: h5g_buffers_start's pin and unpin). */
int h5g_plan_pin_piece(void *be, void *p, size_t bytes);
void h5g_plan_unpin_piece(void *be, void *p);
void h5g_plan_free(h5g_plan *plan);
void h5g_data_free(h5g_data *d);
/* The table's rows kept for the carry (src/read.h) released, once the carry is done. */
void h5g_data_free_table_rows(h5g_data *d);

#endif
