#include "src/progress.h"

#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* A phase shorter than this gets no rate ("-"): its time is the clock's and the scheduler's
 * granularity more than the phase's (a one-rank merge that moves nothing printed 0.000 s and
 * 34750.84 GiB/s). The line stays, with its bytes and seconds, so a log lists every phase in the
 * same columns. */
#define RATE_MIN_SECONDS 1e-3

/* Not MPI_Wtime: the heartbeat thread makes no MPI call. */
static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double to_gib(double bytes) { return bytes / (1 << 30); }

/* "   12.34" GiB/s (`decimals` of them), or "       -" where the time is too short to tell. */
static void rate_text(char *text, size_t len, double bytes, double seconds, int decimals) {
  if (seconds >= RATE_MIN_SECONDS)
    snprintf(text, len, "%8.*f", decimals, to_gib(bytes) / seconds);
  else
    snprintf(text, len, "%8s", "-");
}

static void put_line(const h5g_progress *p, int phase, double seconds) {
  uint64_t bytes = p->bytes[phase];
  char rate[32];
  if (p->tty) fputs("\r\033[K", stderr); /* over the in-place line */
  if (bytes) {
    rate_text(rate, sizeof rate, (double)bytes, seconds, 2);
    fprintf(stderr, "h5gsort: %-10s %9.2f GiB %8.3f s %s GiB/s\n",
            h5g_phase_name((h5g_phase)phase), to_gib((double)bytes), seconds, rate);
  } else {
    fprintf(stderr, "h5gsort: %-10s %22.3f s\n", h5g_phase_name((h5g_phase)phase), seconds);
  }
  fflush(stderr);
}

/* What a heartbeat line tells: the phase under way, taken under the lock. */
typedef struct {
  int phase;
  double elapsed, total;
  uint64_t done, share;
} beat;

/* The heartbeat line of the phase under way: its bytes done so far where it counts them, and its
 * rate (to the MiB: a slow phase's is what the line is for). */
static void put_heartbeat(const beat *b) {
  double elapsed = b->elapsed, total = b->total;
  const char *name = h5g_phase_name((h5g_phase)b->phase);
  if (b->share && total > 0) {
    double fraction = (double)b->done / (double)b->share;
    char rate[32];
    rate_text(rate, sizeof rate, fraction * total, elapsed, 3);
    fprintf(stderr, "h5gsort: %-10s under way: %.3f of %.3f GiB (%3.0f%%), %s GiB/s, %.3f s so "
            "far\n", name, to_gib(fraction * total), to_gib(total), 100 * fraction, rate,
            elapsed);
  } else if (total > 0) { /* a phase that counts nothing before its end */
    fprintf(stderr, "h5gsort: %-10s under way: %.3f GiB, %.1f s so far\n", name, to_gib(total),
            elapsed);
  } else {
    fprintf(stderr, "h5gsort: %-10s under way: %.1f s so far\n", name, elapsed);
  }
  fflush(stderr);
}

/* Rank 0's heartbeat thread: a line every p->every seconds while a phase is under way, written
 * without the lock (a slow stderr holds back no phase). */
static void *heartbeat(void *arg) {
  h5g_progress *p = arg;
  pthread_mutex_lock(&p->lock);
  double next = now_seconds() + p->every;
  while (!p->stop) {
    struct timespec until;
    until.tv_sec = (time_t)next;
    until.tv_nsec = (long)((next - (double)until.tv_sec) * 1e9);
    pthread_cond_timedwait(&p->wake, &p->lock, &until);
    double now = now_seconds();
    if (p->stop || now < next) continue;
    if (p->phase >= 0 && p->phase < H5G_PHASE_COUNT) {
      beat b = {p->phase, now - p->phase_start, (double)p->bytes[p->phase], p->done, p->share};
      pthread_mutex_unlock(&p->lock);
      put_heartbeat(&b);
      pthread_mutex_lock(&p->lock);
    }
    next = now + p->every;
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

void h5g_progress_start(h5g_progress *p, int on, double every) {
  *p = (h5g_progress){0};
  p->on = on;
  p->tty = on && isatty(STDERR_FILENO);
  p->every = every;
  p->phase = -1;
  if (!on) return;
  pthread_mutex_init(&p->lock, NULL);
  /* the heartbeat waits on now_seconds()'s clock: a change of the wall clock moves no beat */
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&p->wake, &attr);
  pthread_condattr_destroy(&attr);
  if (p->tty || every <= 0) return;
  /* the thread is born with every signal blocked: src/interrupt.c's go to the main thread; with
   * no thread, no heartbeat, but the phase lines still come */
  sigset_t all, was;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &was);
  p->beating = pthread_create(&p->beat, NULL, heartbeat, p) == 0;
  pthread_sigmask(SIG_SETMASK, &was, NULL);
}

/* Prints the phases in [p->phase, upto) that took time. */
static void put_phases_before(h5g_progress *p, int upto, const double *seconds) {
  for (int phase = p->phase < 0 ? 0 : p->phase; phase < upto; phase++)
    if (seconds[phase] > 0) put_line(p, phase, seconds[phase]);
}

void h5g_progress_phase(h5g_progress *p, h5g_phase phase, const double *seconds,
                        uint64_t bytes_total) {
  if (!p->on || (int)phase <= p->phase) return;
  pthread_mutex_lock(&p->lock);
  put_phases_before(p, (int)phase, seconds);
  p->phase = (int)phase;
  p->phase_start = now_seconds();
  p->shown_at = 0;
  p->done = p->share = 0;
  p->bytes[phase] = bytes_total;
  pthread_mutex_unlock(&p->lock);
}

/* The in-place line of a terminal (p->lock held). */
static void put_in_place(h5g_progress *p, double now) {
  double elapsed = now - p->phase_start, fraction = (double)p->done / (double)p->share;
  double total = (double)p->bytes[p->phase];
  double rate = elapsed > 0 ? fraction * total / elapsed : 0;
  double left = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
  fprintf(stderr, "\r\033[Kh5gsort: %-10s %8.2f of %.2f GiB (%3.0f%%) %8.2f GiB/s, %.1f s left",
          h5g_phase_name((h5g_phase)p->phase), to_gib(fraction * total), to_gib(total),
          100 * fraction, to_gib(rate), left);
  fflush(stderr);
  p->shown_at = now;
}

void h5g_progress_bytes(h5g_progress *p, uint64_t done, uint64_t share) {
  if (!p->on || p->phase < 0 || share == 0) return;
  pthread_mutex_lock(&p->lock);
  p->done = done;
  p->share = share;
  double now = now_seconds();
  if (p->tty && now - p->shown_at >= 0.2) put_in_place(p, now);
  pthread_mutex_unlock(&p->lock);
}

void h5g_progress_finish(h5g_progress *p, const double *seconds) {
  if (!p->on) return;
  pthread_mutex_lock(&p->lock);
  put_phases_before(p, H5G_PHASE_COUNT, seconds);
  p->phase = H5G_PHASE_COUNT;
  pthread_mutex_unlock(&p->lock);
}

void h5g_progress_stop(h5g_progress *p) {
  if (!p->on) return;
  if (p->beating) {
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->beat, NULL);
    p->beating = 0;
  }
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->wake);
  p->on = 0;
}
