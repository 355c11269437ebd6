#define _GNU_SOURCE
#include "base/host_memory.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/error.h"
#include "base/parallel.h"

enum {
  HUGE_PAGE = 2 << 20,
  /* Touch threads: 16 made 4 GiB resident at 26 GiB/s on the 16-core H200 machine, 4 at 12.5. */
  MAX_TOUCH_THREADS = 16
};

typedef struct {
  char *p;
  size_t bytes;
} touch_range;

/* Part `part` of `parts` of the range, in whole huge pages. */
static void touch_part(void *arg, int part, int parts) {
  const touch_range *r = arg;
  size_t begin, end;
  h5g_share((r->bytes + HUGE_PAGE - 1) / HUGE_PAGE, part, parts, &begin, &end);
  begin *= HUGE_PAGE;
  end = end * HUGE_PAGE < r->bytes ? end * HUGE_PAGE : r->bytes;
  volatile char *page = r->p;
  for (size_t i = begin; i < end; i += 4096) page[i] = 0;
}

/* Touch threads for one of `ranks_on_node` processes making buffers at once: its share of the
 * cores, or the CPUs it may run on when the launcher gave it fewer, less the one its reader (and
 * NCCL's set-up) runs on. With every core touching pages, NCCL's set-up beside the read took
 * 1.2 s to load its kernels instead of 0.3 (2 ranks, 32 cores). */
static long touch_threads(int ranks_on_node) {
  long share = h5g_cpus_online() / (ranks_on_node < 1 ? 1 : ranks_on_node), allowed = h5g_cpus_allowed();
  return (allowed < share ? allowed : share) - 1;
}

/* First touch of every page, split among `wanted` threads (clamped to 1..MAX_TOUCH_THREADS). */
static void touch_in_parallel(char *p, size_t bytes, long wanted) {
  touch_range range = {p, bytes};
  h5g_parallel(wanted < 1 ? 1 : wanted > MAX_TOUCH_THREADS ? MAX_TOUCH_THREADS : (int)wanted,
               touch_part, &range);
}

/* 2 MiB-aligned memory advised to use huge pages, not yet touched. */
static int huge_page_alloc(size_t bytes, void **p) {
  int rc = H5G_OK;
  size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  *p = NULL;
  if (bytes == 0) goto done;
  if (rounded < bytes) H5G_FAIL(H5G_ERR_RUNTIME, "out of memory: %zu bytes", bytes);
  *p = aligned_alloc(HUGE_PAGE, rounded);
  CHECK_ALLOC(*p, rounded);
  (void)madvise(*p, rounded, MADV_HUGEPAGE); /* advice only: 4 KiB pages work too */
done:
  return rc;
}

int h5g_resident_alloc(size_t bytes, int ranks_on_node, void **p) {
  int rc = H5G_OK;
  CHECK(huge_page_alloc(bytes, p));
  if (*p) touch_in_parallel(*p, bytes, touch_threads(ranks_on_node));
done:
  return rc;
}

void h5g_resident_free(void *p) { free(p); }

struct h5g_buffer_set {
  h5g_buffer_spec *bufs;
  int count;
  size_t piece_bytes;
  long threads;
  h5g_pin_fn pin;
  h5g_unpin_fn unpin;
  void *ctx;
  pthread_t helper;
  int helper_running;
  pthread_mutex_t lock;
  pthread_cond_t progress;
  int ready_buf;        /* buffers [0, ready_buf) are resident and pinned */
  size_t resident_elems; /* elements of buffer ready_buf made resident so far */
  int rc;               /* the helper's status; its message in `error` */
  char error[H5G_MSG_MAX];
  int pinned;           /* buffers [0, pinned) hold a registration to release */
  pthread_t unpinner;   /* h5g_buffers_unpin_start */
  int unpinner_running;
  double unpin_seconds;
};

static void publish(h5g_buffer_set *set, int buf, size_t elems, int rc) {
  pthread_mutex_lock(&set->lock);
  set->ready_buf = buf;
  set->resident_elems = elems;
  if (rc != H5G_OK) {
    set->rc = rc;
    snprintf(set->error, sizeof set->error, "%s", h5g_error_message());
  }
  pthread_cond_broadcast(&set->progress);
  pthread_mutex_unlock(&set->lock);
}

static void *prepare_all(void *arg) {
  h5g_buffer_set *set = arg;
  int rc = H5G_OK;
  for (int i = 0; i < set->count; i++) {
    h5g_buffer_spec *b = &set->bufs[i];
    size_t piece = set->piece_bytes / b->elem_bytes ? set->piece_bytes / b->elem_bytes : 1;
    for (size_t at = 0; at < b->n; at += piece) {
      size_t end = b->n - at < piece ? b->n : at + piece;
      if (set->pin || !b->filled_in_place)
        touch_in_parallel((char *)b->p + at * b->elem_bytes, (end - at) * b->elem_bytes,
                          set->threads);
      publish(set, i, end, H5G_OK);
    }
    if (b->n && set->pin) {
      CHECK(set->pin(set->ctx, b->p, b->n * b->elem_bytes));
      set->pinned = i + 1;
    }
    publish(set, i + 1, 0, H5G_OK);
  }
done:
  if (rc != H5G_OK) publish(set, set->ready_buf, set->resident_elems, rc);
  return NULL;
}

int h5g_buffers_start(h5g_buffer_spec *bufs, int count, size_t piece_bytes, int ranks_on_node,
                      h5g_pin_fn pin, h5g_unpin_fn unpin, void *ctx, h5g_buffer_set **out) {
  int rc = H5G_OK;
  h5g_buffer_set *set = calloc(1, sizeof *set);
  CHECK_ALLOC(set, sizeof *set);
  *set = (h5g_buffer_set){.bufs = bufs, .count = count, .piece_bytes = piece_bytes,
                          .threads = touch_threads(ranks_on_node), .pin = pin, .unpin = unpin,
                          .ctx = ctx};
  pthread_mutex_init(&set->lock, NULL);
  pthread_cond_init(&set->progress, NULL);
  for (int i = 0; i < count; i++) CHECK(huge_page_alloc(bufs[i].n * bufs[i].elem_bytes, &bufs[i].p));
  set->helper_running = pthread_create(&set->helper, NULL, prepare_all, set) == 0;
  if (!set->helper_running) prepare_all(set); /* no thread: prepare them now */
  *out = set;
  set = NULL;
done:
  h5g_buffers_free(set);
  return rc;
}

static int is_ready(const h5g_buffer_set *set, int which, size_t upto) {
  return set->ready_buf > which || (upto && set->ready_buf == which && set->resident_elems >= upto);
}

/* Blocks until buffer `which` is pinned, or (upto > 0) its first upto elements are resident; a
 * failure of the helper is the waiter's only where it left that unready. */
static int wait_for(h5g_buffer_set *set, int which, size_t upto) {
  int rc = H5G_OK;
  pthread_mutex_lock(&set->lock);
  while (set->rc == H5G_OK && !is_ready(set, which, upto))
    pthread_cond_wait(&set->progress, &set->lock);
  int failed = is_ready(set, which, upto) ? H5G_OK : set->rc;
  pthread_mutex_unlock(&set->lock);
  if (failed != H5G_OK) H5G_FAIL(failed, "%s", set->error);
done:
  return rc;
}

int h5g_buffers_wait(h5g_buffer_set *set, int which, size_t upto) {
  return upto ? wait_for(set, which, upto) : H5G_OK;
}

int h5g_buffers_pinned(h5g_buffer_set *set, int which) {
  pthread_mutex_lock(&set->lock);
  int pinned = set->ready_buf > which;
  pthread_mutex_unlock(&set->lock);
  return pinned;
}

int h5g_buffers_wait_pinned(h5g_buffer_set *set, int which) { return wait_for(set, which, 0); }

int h5g_buffers_wait_all(h5g_buffer_set *set) { return wait_for(set, set->count - 1, 0); }

static void unpin_all(h5g_buffer_set *set) {
  for (int i = 0; i < set->pinned; i++)
    if (set->bufs[i].p) set->unpin(set->ctx, set->bufs[i].p);
  set->pinned = 0;
}

static void *unpin_in_background(void *arg) {
  h5g_buffer_set *set = arg;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  unpin_all(set);
  clock_gettime(CLOCK_MONOTONIC, &end);
  set->unpin_seconds = (double)(end.tv_sec - start.tv_sec) + 1e-9 * (double)(end.tv_nsec - start.tv_nsec);
  return NULL;
}

void h5g_buffers_unpin_start(h5g_buffer_set *set) {
  if (!set || set->unpinner_running) return;
  if (set->helper_running) pthread_join(set->helper, NULL); /* done: the caller waited for it */
  set->helper_running = 0;
  if (set->pinned == 0) return;
  /* without a thread, h5g_buffers_free unpins them */
  set->unpinner_running = pthread_create(&set->unpinner, NULL, unpin_in_background, set) == 0;
}

double h5g_buffers_unpin_wait(h5g_buffer_set *set) {
  if (!set || !set->unpinner_running) return 0;
  pthread_join(set->unpinner, NULL);
  set->unpinner_running = 0;
  return set->unpin_seconds;
}

void h5g_buffers_free(h5g_buffer_set *set) {
  if (!set) return;
  if (set->helper_running) pthread_join(set->helper, NULL);
  h5g_buffers_unpin_wait(set);
  unpin_all(set);
  for (int i = 0; i < set->count; i++) {
    free(set->bufs[i].p);
    set->bufs[i].p = NULL;
  }
  pthread_cond_destroy(&set->progress);
  pthread_mutex_destroy(&set->lock);
  free(set);
}
