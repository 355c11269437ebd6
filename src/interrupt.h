/* SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGXCPU (Ctrl-C, scancel, mpiexec forwarding them,
 * a closed session, Slurm's --signal warning, a CPU time limit): every rank stops at once; rank 0
 * removes the temporary output, prints one error line naming the signal and, with --report,
 * writes a report that says so; every rank exits 1.
 * SIGPIPE is ignored (a closed stdout or stderr fails those writes only). A run whose output
 * is already committed exits 0 instead: it succeeded. (SIGKILL cannot be caught: the stale
 * temporary file is removed by the next run writing the same OUTPUT.) */
#ifndef H5G_SRC_INTERRUPT_H
#define H5G_SRC_INTERRUPT_H

/* Installs the handlers; `rank` 0 is the one that prints and removes. Called before MPI_Init
 * (with h5g_interrupt_launcher_rank; `mpi_started` 0: a signal then ends the rank quietly, exit
 * 1, nothing being written yet) and again once MPI is up and the rank known. */
void h5g_interrupt_install(int rank, int mpi_started);
/* This process's rank as its launcher tells it (Open MPI, PMIx, PMI, Slurm), 0 if none does. */
int h5g_interrupt_launcher_rank(void);
/* The temporary file the handler removes (NULL: none yet, or no longer ours) and the number of
 * ranks: rank 0 removes it, its lock (io/h5io.h, h5g_files_hold_temp_lock) and the files MPI-IO
 * made beside it for each of the `nranks` ranks, every other rank its own. */
void h5g_interrupt_temp(const char *path, int nranks);
/* Those signals wait (blocked) from hold until release: around the commit, so that no rank
 * takes a signal between the rename on rank 0 and every rank learning of it; a signal that came
 * meanwhile is then handled as committed (exit 0) or, if the commit failed, as an interrupt. */
void h5g_interrupt_hold(void);
void h5g_interrupt_release(void);
/* Rank 0 with --report (already checked: not INPUT or OUTPUT): an interrupt leaves the report of
 * an interrupted run at `path`, `head` (h5g_report_interrupted_head) followed by the phase under
 * way and the error line's message; both stay valid until called again (NULL, NULL: none). */
void h5g_interrupt_report(const char *path, const char *head);
/* A run that can be resumed (src/resume.h): the NULL-terminated `files` of this rank the handler
 * removes, then the directory `dir` if empty (its scratch before a share is recorded), and the
 * line (ending in a newline) rank 0 prints after the error line (where a recorded share is
 * kept); each NULL: none. They stay valid until called again. */
void h5g_interrupt_scratch(const char *const *files, const char *dir, const char *kept);
/* The output is committed: an interrupt from now on ends the run with success. */
void h5g_interrupt_committed(void);
/* The run is over with exit code `rc` (its error, if any, printed): an interrupt from now on
 * (the launcher stopping the other ranks of a failed run) exits quietly with that code. */
void h5g_interrupt_finished(int rc);

#endif
