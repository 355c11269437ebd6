#define _GNU_SOURCE
#include "src/host_memory.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/error.h"

enum {
  HUGE_PAGE = 2 << 20,
  /* Touch threads: 16 made 4 GiB resident at 26 GiB/s on the 16-core H200 machine, 4 at 12.5. */
  MAX_TOUCH_THREADS = 16
};

typedef struct {
  volatile char *begin;
  size_t bytes;
} touch_range;

static void *touch_pages(void *arg) {
  touch_range *r = arg;
  for (size_t i = 0; i < r->bytes; i += 4096) r->begin[i] = 0;
  return NULL;
}

/* First touch of every page, split among threads; the calling thread takes a share too, so a
 * failed pthread_create only slows it down. */
static void touch_in_parallel(char *p, size_t bytes) {
  pthread_t threads[MAX_TOUCH_THREADS];
  touch_range ranges[MAX_TOUCH_THREADS];
  int started[MAX_TOUCH_THREADS] = {0};
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t parts = cpus < 1 ? 1 : cpus > MAX_TOUCH_THREADS ? MAX_TOUCH_THREADS : (size_t)cpus;
  size_t part = ((bytes + parts - 1) / parts + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  for (size_t i = 0; i < parts; i++) {
    size_t begin = i * part < bytes ? i * part : bytes;
    ranges[i].begin = p + begin;
    ranges[i].bytes = bytes - begin < part ? bytes - begin : part;
    if (i > 0) started[i] = pthread_create(&threads[i], NULL, touch_pages, &ranges[i]) == 0;
  }
  touch_pages(&ranges[0]);
  for (size_t i = 1; i < parts; i++) {
    if (started[i]) pthread_join(threads[i], NULL);
    else touch_pages(&ranges[i]);
  }
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

int h5g_resident_alloc(size_t bytes, void **p) {
  int rc = H5G_OK;
  CHECK(huge_page_alloc(bytes, p));
  if (*p) touch_in_parallel(*p, bytes);
done:
  return rc;
}

void h5g_resident_free(void *p) { free(p); }

struct h5g_buffer_set {
  h5g_buffer_spec *bufs;
  int count;
  const uint64_t *run_offsets;
  size_t nruns, piece_bytes;
  h5g_pin_fn pin;
  h5g_unpin_fn unpin;
  void *ctx;
  pthread_t helper;
  int helper_running;
  pthread_mutex_t lock;
  pthread_cond_t progress;
  int ready_buf;      /* buffers [0, ready_buf) are ready, and ready_elems elements of the next */
  size_t ready_elems;
  int rc;             /* the helper's status; its message in `error` */
  char error[H5G_MSG_MAX];
  void **pinned;      /* pinned pieces, to unpin */
  size_t npinned;
};

static void publish(h5g_buffer_set *set, int buf, size_t elems, int rc) {
  pthread_mutex_lock(&set->lock);
  set->ready_buf = buf;
  set->ready_elems = elems;
  if (rc != H5G_OK) {
    set->rc = rc;
    snprintf(set->error, sizeof set->error, "%s", h5g_error_message());
  }
  pthread_cond_broadcast(&set->progress);
  pthread_mutex_unlock(&set->lock);
}

/* Makes piece [begin, end) of buffer i resident, then pinned. */
static int prepare_piece(h5g_buffer_set *set, int i, size_t begin, size_t end) {
  int rc = H5G_OK;
  char *p = (char *)set->bufs[i].p + begin * set->bufs[i].elem_bytes;
  size_t bytes = (end - begin) * set->bufs[i].elem_bytes;
  touch_in_parallel(p, bytes);
  if (set->pin) {
    CHECK(set->pin(set->ctx, p, bytes));
    set->pinned[set->npinned++] = p;
  }
done:
  return rc;
}

static void *prepare_all(void *arg) {
  h5g_buffer_set *set = arg;
  int rc = H5G_OK;
  for (int i = 0; i < set->count; i++) {
    const h5g_buffer_spec *b = &set->bufs[i];
    size_t piece = set->piece_bytes / b->elem_bytes ? set->piece_bytes / b->elem_bytes : 1;
    for (size_t j = 0; b->n && j < set->nruns; j++)
      for (size_t at = set->run_offsets[j]; at < set->run_offsets[j + 1]; at += piece) {
        size_t end = set->run_offsets[j + 1] - at < piece ? set->run_offsets[j + 1] : at + piece;
        CHECK(prepare_piece(set, i, at, end));
        publish(set, i, end, H5G_OK);
      }
    publish(set, i + 1, 0, H5G_OK);
  }
done:
  if (rc != H5G_OK) publish(set, set->ready_buf, set->ready_elems, rc);
  return NULL;
}

int h5g_buffers_start(h5g_buffer_spec *bufs, int count, const uint64_t *run_offsets, size_t nruns,
                      size_t piece_bytes, h5g_pin_fn pin, h5g_unpin_fn unpin, void *ctx,
                      h5g_buffer_set **out) {
  int rc = H5G_OK;
  size_t pieces = 0;
  h5g_buffer_set *set = calloc(1, sizeof *set);
  CHECK_ALLOC(set, sizeof *set);
  *set = (h5g_buffer_set){.bufs = bufs, .count = count, .run_offsets = run_offsets,
                          .nruns = nruns, .piece_bytes = piece_bytes, .pin = pin, .unpin = unpin,
                          .ctx = ctx};
  pthread_mutex_init(&set->lock, NULL);
  pthread_cond_init(&set->progress, NULL);
  for (int i = 0; i < count; i++) {
    size_t piece = piece_bytes / bufs[i].elem_bytes ? piece_bytes / bufs[i].elem_bytes : 1;
    pieces += bufs[i].n / piece + nruns + 1; /* at most: one partial piece per run */
    CHECK(huge_page_alloc(bufs[i].n * bufs[i].elem_bytes, &bufs[i].p));
  }
  set->pinned = calloc(pieces, sizeof *set->pinned);
  CHECK_ALLOC(set->pinned, pieces * sizeof *set->pinned);
  set->helper_running = pthread_create(&set->helper, NULL, prepare_all, set) == 0;
  if (!set->helper_running) prepare_all(set); /* no thread: prepare them now */
  *out = set;
  set = NULL;
done:
  h5g_buffers_free(set);
  return rc;
}

int h5g_buffers_wait(h5g_buffer_set *set, int which, size_t upto) {
  int rc = H5G_OK;
  pthread_mutex_lock(&set->lock);
  while (set->rc == H5G_OK && set->ready_buf <= which &&
         !(set->ready_buf == which && set->ready_elems >= upto))
    pthread_cond_wait(&set->progress, &set->lock);
  pthread_mutex_unlock(&set->lock);
  if (set->rc != H5G_OK) H5G_FAIL(set->rc, "%s", set->error);
done:
  return rc;
}

int h5g_buffers_wait_all(h5g_buffer_set *set) { return h5g_buffers_wait(set, set->count, 0); }

void h5g_buffers_free(h5g_buffer_set *set) {
  if (!set) return;
  if (set->helper_running) pthread_join(set->helper, NULL);
  for (size_t i = 0; i < set->npinned; i++) set->unpin(set->ctx, set->pinned[i]);
  for (int i = 0; i < set->count; i++) {
    free(set->bufs[i].p);
    set->bufs[i].p = NULL;
  }
  free(set->pinned);
  pthread_cond_destroy(&set->progress);
  pthread_mutex_destroy(&set->lock);
  free(set);
}
