/* H5GSORT_TIMELINE=FILE: the whole process as rank 0 saw it, for bench/e2e.sh. Wall-clock
 * instants (CLOCK_REALTIME, comparable with `date +%s.%N` around the launcher) at fixed points of
 * src/main.c, src/pipeline.c and src/carry.c, kept in a fixed array on every rank; at the end
 * rank 0 appends them to FILE as `name epoch_seconds` lines in one write. Names: main, mpi_init,
 * mpi_init_done, phase:<phase> (the pipeline enters a phase other than the one it was in, as
 * h5g_step_begin announces it), gpu_context_ready, carry_read, carry_moved and carry_written
 * (each carried dataset or batch), report_written, commit_done, pipeline_done, mpi_finalize,
 * mpi_finalize_done, exit. */
#ifndef H5G_SRC_TIMELINE_H
#define H5G_SRC_TIMELINE_H

/* `name` must outlive the process (a literal, or h5g_phase_name's). */
void h5g_timeline_mark(const char *name);
/* A step of `phase` begins: marked "phase:<name>" when the phase changes. */
void h5g_timeline_phase(int phase, const char *name);
/* Rank 0, last: appends the marks to $H5GSORT_TIMELINE (nothing when unset). A file that cannot
 * be written, or that names INPUT or OUTPUT (either may be NULL), gets a warning, not a failure. */
void h5g_timeline_write(const char *input, const char *output);

#endif
