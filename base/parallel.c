#include "base/parallel.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The parts of one h5g_parallel call handed to workers and not finished. */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t done;
  int running;
} parallel_call;

typedef struct {
  void (*fn)(void *ctx, int part, int parts);
  void *ctx;
  int part, parts;
  parallel_call *call;
} part_job;

/* Workers are kept between calls, idle ones in a list, and a call takes as many as it needs
 * (making new ones only when none is idle), so calls from several threads at once (the buffers'
 * first touch beside a read) each get their own. A thread started per part per call cost a
 * direct transfer a large part of its read in small pieces (H5GSORT_IO_PIECE_BYTES), and some
 * at the default piece too (bench/RESULTS.md, "Worker threads kept between calls"). */
typedef struct worker {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  part_job *job; /* the part to run; NULL while idle */
  struct worker *next_idle;
} worker;

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static worker *idle_workers;

static void *worker_main(void *arg) {
  worker *w = arg;
  /* Signals sent to the process (the interrupts src/interrupt.c handles) go to other threads,
   * whichever thread made this worker (one made while they are held on the main thread would
   * inherit them blocked anyway); the ones a fault raises on this thread stay open. */
  sigset_t interrupts;
  sigfillset(&interrupts);
  static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) sigdelset(&interrupts, faults[i]);
  pthread_sigmask(SIG_BLOCK, &interrupts, NULL);
  for (;;) {
    pthread_mutex_lock(&w->lock);
    while (!w->job) pthread_cond_wait(&w->wake, &w->lock);
    part_job *j = w->job;
    w->job = NULL;
    pthread_mutex_unlock(&w->lock);
    j->fn(j->ctx, j->part, j->parts);
    parallel_call *call = j->call; /* j is the caller's: not touched once the part is counted */
    pthread_mutex_lock(&idle_lock);
    w->next_idle = idle_workers;
    idle_workers = w;
    pthread_mutex_unlock(&idle_lock);
    pthread_mutex_lock(&call->lock);
    if (--call->running == 0) pthread_cond_signal(&call->done);
    pthread_mutex_unlock(&call->lock);
  }
  return NULL;
}

/* An idle worker, or a new one; NULL when none can be made. */
static worker *take_worker(void) {
  pthread_mutex_lock(&idle_lock);
  worker *w = idle_workers;
  if (w) idle_workers = w->next_idle;
  pthread_mutex_unlock(&idle_lock);
  if (w) return w;
  w = calloc(1, sizeof *w);
  if (!w) return NULL;
  pthread_attr_t attr;
  pthread_t id;
  const int attr_made = pthread_attr_init(&attr) == 0;
  int started = attr_made && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                pthread_mutex_init(&w->lock, NULL) == 0;
  if (started && pthread_cond_init(&w->wake, NULL) != 0) {
    pthread_mutex_destroy(&w->lock);
    started = 0;
  }
  if (started && pthread_create(&id, &attr, worker_main, w) != 0) {
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    started = 0;
  }
  if (attr_made) pthread_attr_destroy(&attr);
  if (!started) {
    free(w);
    return NULL;
  }
  return w;
}

void h5g_parallel(int parts, void (*fn)(void *ctx, int part, int parts), void *ctx) {
  part_job jobs[H5G_MAX_PARTS];
  int handed[H5G_MAX_PARTS] = {0};
  parallel_call call = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  if (parts > H5G_MAX_PARTS) parts = H5G_MAX_PARTS;
  if (parts < 1) parts = 1;
  for (int p = 1; p < parts; p++) {
    worker *w = take_worker();
    if (!w) continue; /* the part runs on this thread below */
    jobs[p] = (part_job){fn, ctx, p, parts, &call};
    pthread_mutex_lock(&call.lock);
    call.running++;
    pthread_mutex_unlock(&call.lock);
    pthread_mutex_lock(&w->lock);
    w->job = &jobs[p];
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    handed[p] = 1;
  }
  fn(ctx, 0, parts);
  for (int p = 1; p < parts; p++)
    if (!handed[p]) fn(ctx, p, parts);
  pthread_mutex_lock(&call.lock);
  while (call.running > 0) pthread_cond_wait(&call.done, &call.lock);
  pthread_mutex_unlock(&call.lock);
  pthread_cond_destroy(&call.done);
  pthread_mutex_destroy(&call.lock);
}

typedef struct {
  const h5g_copy_segment *segments;
  size_t count, total;
} gathered_copy;

/* Part p copies bytes [p * total / parts, (p + 1) * total / parts) of the segments laid end to
 * end. */
static void copy_part(void *arg, int part, int parts) {
  const gathered_copy *c = arg;
  size_t begin, end, at = 0; /* at: where segment i starts */
  h5g_share(c->total, part, parts, &begin, &end);
  for (size_t i = 0; i < c->count && at < end; at += c->segments[i++].bytes) {
    size_t bytes = c->segments[i].bytes;
    size_t from = begin > at ? begin - at : 0, to = end - at < bytes ? end - at : bytes;
    if (from < to)
      memcpy((char *)c->segments[i].dst + from, (const char *)c->segments[i].src + from, to - from);
  }
}

/* Below this a part's hand-off costs more than it saves (chosen when each part started a thread
 * of its own; a kept worker costs less). */
enum { MIN_BYTES_PER_THREAD = 4 << 20 };

void h5g_parallel_copy(const h5g_copy_segment *segments, size_t count, int threads) {
  gathered_copy c = {segments, count, 0};
  for (size_t i = 0; i < count; i++) c.total += segments[i].bytes;
  size_t most = c.total / MIN_BYTES_PER_THREAD;
  int parts = threads < 1 ? 1 : (size_t)threads > most ? (int)(most ? most : 1) : threads;
  h5g_parallel(parts, copy_part, &c);
}

typedef struct {
  char *dst;
  const char *src;
  size_t dst_stride, src_stride, width, n;
  int swap;
} strided_copy;

static void strided_part(void *arg, int part, int parts) {
  const strided_copy *c = arg;
  size_t begin, end;
  h5g_share(c->n, part, parts, &begin, &end);
  for (size_t i = begin; i < end; i++) {
    char *e = c->dst + i * c->dst_stride;
    memcpy(e, c->src + i * c->src_stride, c->width);
    for (size_t b = 0; c->swap && b < c->width / 2; b++) {
      char t = e[b];
      e[b] = e[c->width - 1 - b];
      e[c->width - 1 - b] = t;
    }
  }
}

void h5g_parallel_strided(void *dst, size_t dst_stride, const void *src, size_t src_stride,
                          size_t width, size_t n, int swap, int threads) {
  strided_copy c = {dst, src, dst_stride, src_stride, width, n, swap};
  if (width) h5g_parallel(h5g_parts(n, 1 << 16, threads), strided_part, &c);
}

typedef struct {
  char *rows, *columns;
  const size_t *widths;
  int count, split; /* split: rows into columns; else columns into rows */
  size_t n, row_bytes;
} interleaving;

enum { INTERLEAVE_BLOCK_ROWS = 4096 }; /* of rows of at most 64 bytes (src/carry.h) and their
                                        * columns: 512 KiB, within a core's cache */

/* Field of width W of rows [block, last): copied between the rows and its column. */
#define COPY_FIELD(W)                                                                             \
  do {                                                                                            \
    if (c->split)                                                                                 \
      for (size_t i = block; i < last; i++) memcpy(column + i * (W), row + i * c->row_bytes, (W)); \
    else                                                                                          \
      for (size_t i = block; i < last; i++) memcpy(row + i * c->row_bytes, column + i * (W), (W)); \
  } while (0)

static void interleave_part(void *arg, int part, int parts) {
  const interleaving *c = arg;
  size_t begin, end;
  h5g_share(c->n, part, parts, &begin, &end);
  for (size_t block = begin; block < end; block += INTERLEAVE_BLOCK_ROWS) {
    size_t last = end - block < INTERLEAVE_BLOCK_ROWS ? end : block + INTERLEAVE_BLOCK_ROWS;
    size_t offset = 0;
    for (int j = 0; j < c->count; offset += c->widths[j++]) {
      char *column = c->columns + offset * c->n, *row = c->rows + offset;
      size_t w = c->widths[j];
      if (w == 4)
        COPY_FIELD(4);
      else if (w == 8)
        COPY_FIELD(8);
      else
        COPY_FIELD(w);
    }
  }
}

static void interleave(char *rows, char *columns, const size_t *widths, int count, size_t n,
                       int split, int threads) {
  interleaving c = {rows, columns, widths, count, split, n, 0};
  for (int j = 0; j < count; j++) c.row_bytes += widths[j];
  if (c.row_bytes) h5g_parallel(h5g_parts(n, 1 << 16, threads), interleave_part, &c);
}

void h5g_parallel_interleave(void *rows, const void *columns, const size_t *widths, int count,
                             size_t n, int threads) {
  interleave(rows, (char *)columns, widths, count, n, 0, threads);
}

void h5g_parallel_split(void *columns, const void *rows, const size_t *widths, int count,
                        size_t n, int threads) {
  interleave((char *)rows, columns, widths, count, n, 1, threads);
}
