/* --progress[=SECONDS]: rank 0 tells on stderr how far the run is. One line per phase once it is
 * over, with its bytes, seconds and rate (plain lines, as a batch log wants them); on a terminal
 * the phase under way is shown in place as well, with bytes done, rate and time left; elsewhere
 * (a launcher's pipe, a log file) a line every SECONDS on the phase under way, from a thread of
 * rank 0 that only reads what the phases count (no collective call, nothing the run waits on).
 * The other ranks have equal shares, so rank 0's own progress stands for the job's. */
#ifndef H5G_SRC_PROGRESS_H
#define H5G_SRC_PROGRESS_H

#include <pthread.h>
#include <stdint.h>

#include "src/report.h"

typedef struct {
  int on, tty;
  double every;             /* seconds between heartbeat lines (not a terminal) */
  int beating;              /* the heartbeat thread runs */
  pthread_t beat;
  /* lock guards what follows, which the heartbeat thread reads */
  pthread_mutex_t lock;
  pthread_cond_t wake;      /* the heartbeat's wait, cut short to stop it */
  int stop;
  int phase;                /* the latest phase reached (phases only move forward) */
  double phase_start;       /* when it was reached */
  double shown_at;          /* last in-place update */
  uint64_t done, share;     /* rank 0's bytes of the phase under way: moved, and in all */
  uint64_t bytes[H5G_PHASE_COUNT]; /* of the whole job in each phase reached (0: none to tell) */
} h5g_progress;

/* Off unless `on`; `every`: seconds between heartbeat lines when stderr is not a terminal. */
void h5g_progress_start(h5g_progress *p, int on, double every);
/* Rank 0 reached `phase` (a step of it begins): the phases it moved past are printed. */
void h5g_progress_phase(h5g_progress *p, h5g_phase phase, const double *seconds,
                        uint64_t bytes_total);
/* Rank 0 moved `done` of its `share` bytes in the phase under way. */
void h5g_progress_bytes(h5g_progress *p, uint64_t done, uint64_t share);
/* The run is over: the phases not yet printed. */
void h5g_progress_finish(h5g_progress *p, const double *seconds);
/* The heartbeat stops (every run, whatever its end; again: nothing). */
void h5g_progress_stop(h5g_progress *p);

#endif
