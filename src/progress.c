#include "src/progress.h"

#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static void put_line(const h5g_progress *p, int phase, double seconds) {
  uint64_t bytes = p->bytes[phase];
  if (p->tty) fputs("\r\033[K", stderr); /* over the in-place line */
  if (bytes && seconds > 0)
    fprintf(stderr, "h5gsort: %-10s %9.2f GiB %8.3f s %8.2f GiB/s\n", h5g_phase_name((h5g_phase)phase),
            (double)bytes / (1 << 30), seconds, (double)bytes / (1 << 30) / seconds);
  else
    fprintf(stderr, "h5gsort: %-10s %22.3f s\n", h5g_phase_name((h5g_phase)phase), seconds);
  fflush(stderr);
}

void h5g_progress_start(h5g_progress *p, int on) {
  *p = (h5g_progress){0};
  p->on = on;
  p->tty = on && isatty(STDERR_FILENO);
  p->phase = -1;
}

/* Prints the phases in [p->phase, upto) that took time. */
static void put_phases_before(h5g_progress *p, int upto, const double *seconds) {
  for (int phase = p->phase < 0 ? 0 : p->phase; phase < upto; phase++)
    if (seconds[phase] > 0) put_line(p, phase, seconds[phase]);
}

void h5g_progress_phase(h5g_progress *p, h5g_phase phase, const double *seconds,
                        uint64_t bytes_total) {
  if (!p->on || (int)phase <= p->phase) return;
  put_phases_before(p, (int)phase, seconds);
  p->phase = (int)phase;
  p->phase_start = MPI_Wtime();
  p->shown_at = 0;
  p->bytes[phase] = bytes_total;
}

void h5g_progress_bytes(h5g_progress *p, uint64_t done, uint64_t share) {
  double now = MPI_Wtime();
  if (!p->tty || p->phase < 0 || share == 0 || now - p->shown_at < 0.2) return;
  double elapsed = now - p->phase_start, fraction = (double)done / (double)share;
  double total = (double)p->bytes[p->phase];
  double rate = elapsed > 0 ? fraction * total / elapsed : 0;
  double left = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
  fprintf(stderr, "\r\033[Kh5gsort: %-10s %8.2f of %.2f GiB (%3.0f%%) %8.2f GiB/s, %.1f s left",
          h5g_phase_name((h5g_phase)p->phase), fraction * total / (1 << 30), total / (1 << 30),
          100 * fraction, rate / (1 << 30), left);
  fflush(stderr);
  p->shown_at = now;
}

void h5g_progress_finish(h5g_progress *p, const double *seconds) {
  if (!p->on) return;
  put_phases_before(p, H5G_PHASE_COUNT, seconds);
  p->phase = H5G_PHASE_COUNT;
}
