/* --progress: rank 0 tells on stderr how far the run is. One line per phase once it is over,
 * with its bytes, seconds and rate (plain lines, as a batch log wants them); on a terminal the
 * phase under way is shown in place as well, with bytes done, rate and time left. The other
 * ranks have equal shares, so rank 0's own progress stands for the job's. */
#ifndef H5G_SRC_PROGRESS_H
#define H5G_SRC_PROGRESS_H

#include <stdint.h>

#include "src/report.h"

typedef struct {
  int on, tty;
  int phase;                /* the latest phase reached (phases only move forward) */
  double phase_start;       /* when it was reached */
  double shown_at;          /* last in-place update */
  uint64_t bytes[H5G_PHASE_COUNT]; /* of the whole job in each phase reached (0: none to tell) */
} h5g_progress;

void h5g_progress_start(h5g_progress *p, int on);
/* Rank 0 reached `phase` (a step of it begins): the phases it moved past are printed. */
void h5g_progress_phase(h5g_progress *p, h5g_phase phase, const double *seconds,
                        uint64_t bytes_total);
/* Rank 0 moved `done` of its `share` bytes in the phase under way: the in-place line. */
void h5g_progress_bytes(h5g_progress *p, uint64_t done, uint64_t share);
/* The run is over: the phases not yet printed. */
void h5g_progress_finish(h5g_progress *p, const double *seconds);

#endif
