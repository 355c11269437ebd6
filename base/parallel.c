#include "base/parallel.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  void (*fn)(void *ctx, int part, int parts);
  void *ctx;
  int part, parts;
} part_job;

static void *run_part(void *arg) {
  part_job *j = arg;
  j->fn(j->ctx, j->part, j->parts);
  return NULL;
}

void h5g_parallel(int parts, void (*fn)(void *ctx, int part, int parts), void *ctx) {
  pthread_t ids[H5G_MAX_PARTS];
  part_job jobs[H5G_MAX_PARTS];
  int started[H5G_MAX_PARTS] = {0};
  if (parts > H5G_MAX_PARTS) parts = H5G_MAX_PARTS;
  if (parts < 1) parts = 1;
  for (int p = 0; p < parts; p++) {
    jobs[p] = (part_job){fn, ctx, p, parts};
    if (p > 0) started[p] = pthread_create(&ids[p], NULL, run_part, &jobs[p]) == 0;
  }
  fn(ctx, 0, parts);
  for (int p = 1; p < parts; p++) {
    if (started[p]) pthread_join(ids[p], NULL);
    else fn(ctx, p, parts);
  }
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

enum { MIN_BYTES_PER_THREAD = 4 << 20 }; /* below this a thread's start costs more than it saves */

void h5g_parallel_copy(const h5g_copy_segment *segments, size_t count, int threads) {
  gathered_copy c = {segments, count, 0};
  for (size_t i = 0; i < count; i++) c.total += segments[i].bytes;
  size_t most = c.total / MIN_BYTES_PER_THREAD;
  int parts = threads < 1 ? 1 : (size_t)threads > most ? (int)(most ? most : 1) : threads;
  h5g_parallel(parts, copy_part, &c);
}
