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
#include "base/scratch_memory.h"

enum {
  PAGE = 4096, /* the smallest page: where a first touch must reach */
  HUGE_PAGE = 2 << 20,
  /* Touch threads: 16 made a buffer resident much faster than 4
   * (bench/RESULTS.md, "Host slice buffers"). */
  MAX_TOUCH_THREADS = 16
};

/* The pin piece's default: the read's piece (io/direct.c), so each piece read can go up as soon
 * as it is in memory. */
static const size_t DEFAULT_PIN_PIECE = (size_t)128 << 20;
static size_t pin_piece = 0;
static pthread_once_t pin_piece_once = PTHREAD_ONCE_INIT;

static void read_pin_piece(void) {
  const char *env = getenv("H5GSORT_PIN_PIECE_BYTES");
  unsigned long long bytes = env ? strtoull(env, NULL, 10) : 0;
  int usable = bytes >= 4096 && (bytes & (bytes - 1)) == 0 && bytes <= ((size_t)1 << 36);
  pin_piece = usable ? (size_t)bytes : DEFAULT_PIN_PIECE;
}

size_t h5g_pin_piece_bytes(void) {
  pthread_once(&pin_piece_once, read_pin_piece);
  return pin_piece;
}

size_t h5g_pin_span(const void *p, size_t bytes) {
  size_t piece = h5g_pin_piece_bytes(), left = piece - (size_t)((uintptr_t)p & (piece - 1));
  return bytes < left ? bytes : left;
}

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
  /* one byte of every page the part overlaps, the range being anywhere in its first page */
  volatile char *bytes = r->p;
  for (size_t i = begin; i < end; i = (((uintptr_t)r->p + i) / PAGE + 1) * PAGE - (uintptr_t)r->p)
    bytes[i] = 0;
}

/* Touch threads for one of `ranks_on_node` processes making buffers at once: its share of the
 * cores, or the CPUs it may run on when the launcher gave it fewer, less the one its reader (and
 * NCCL's set-up) runs on. With every core touching pages, NCCL's set-up beside the read waited
 * for cores to load its kernels (bench/RESULTS.md, "Third run: device-resident path"). */
static long touch_threads(int ranks_on_node) {
  long share = h5g_cpus_online() / (ranks_on_node < 1 ? 1 : ranks_on_node), allowed = h5g_cpus_allowed();
  return (allowed < share ? allowed : share) - 1;
}

/* First touch of every page, split among `wanted` threads (clamped to 1..MAX_TOUCH_THREADS, and
 * to the huge pages of the range: touch_part splits it by them, so more parts would be idle). */
static void touch_in_parallel(char *p, size_t bytes, long wanted) {
  touch_range range = {p, bytes};
  size_t huge_pages = (bytes + HUGE_PAGE - 1) / HUGE_PAGE;
  if (wanted > 0 && (size_t)wanted > huge_pages) wanted = (long)huge_pages;
  h5g_parallel(wanted < 1 ? 1 : wanted > MAX_TOUCH_THREADS ? MAX_TOUCH_THREADS : (int)wanted,
               touch_part, &range);
}

static size_t whole_huge_pages(size_t bytes) {
  return (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

/* `bytes` at an address aligned to `align` (a power of two of at least 2 MiB), advised to use
 * huge pages, not yet touched (NULL for 0 bytes); from a scratch file when `spill` and the run
 * spills (base/scratch_memory.h): the file `named` (reused with `reuse`; new, of no name until
 * h5g_buffers_name_scratch, open on *nameless) where one is given. Mapped with room to align it, the room then unmapped: no more
 * address space held than used (posix_memalign keeps the room, up to 128 MiB a buffer aligned to
 * the pin piece, against a limit such as `ulimit -v`). */
static int huge_page_alloc(size_t bytes, size_t align, int spill, const char *named, int reuse,
                           void **p, int *nameless) {
  int rc = H5G_OK;
  size_t rounded = whole_huge_pages(bytes), span = rounded + align;
  char *base = MAP_FAILED, *start = NULL;
  *p = NULL;
  if (bytes == 0) goto done;
  if (rounded < bytes || span < rounded) H5G_FAIL(H5G_ERR_RUNTIME, "out of memory: %zu bytes", bytes);
  /* the aligned range held (no memory behind it), the room around it given back, and the
   * buffer mapped over it: anonymous memory, or a scratch file when the run spills */
  base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) H5G_FAIL(H5G_ERR_RUNTIME, "out of memory: %zu bytes", bytes);
  start = (char *)(((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1));
  if (start > base) munmap(base, (size_t)(start - base));
  size_t tail = (size_t)(base + span - (start + rounded));
  if (tail) munmap(start + rounded, tail);
  if (spill && h5g_scratch_dir() && named) {
    CHECK(h5g_scratch_map_named(named, rounded, reuse, start, p, nameless));
  } else if (spill && h5g_scratch_dir()) {
    CHECK(h5g_scratch_map(rounded, start, p));
  } else {
    if (mmap(start, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
             0) == MAP_FAILED)
      H5G_FAIL(H5G_ERR_RUNTIME, "out of memory: %zu bytes", bytes);
    (void)madvise(start, rounded, MADV_HUGEPAGE); /* advice only: 4 KiB pages work too */
    *p = start;
  }
done:
  if (rc != H5G_OK && start) munmap(start, rounded);
  return rc;
}

static void huge_page_free(void *p, size_t bytes) {
  if (p) munmap(p, whole_huge_pages(bytes));
}

int h5g_resident_alloc(size_t bytes, int ranks_on_node, void **p) {
  int rc = H5G_OK;
  CHECK(huge_page_alloc(bytes, HUGE_PAGE, 1, NULL, 0, p, NULL));
  /* a scratch file's pages come in as they are used: touched, all would be written out again */
  if (*p && !h5g_scratch_dir()) touch_in_parallel(*p, bytes, touch_threads(ranks_on_node));
done:
  return rc;
}

int h5g_untouched_alloc(size_t bytes, void **p) { return huge_page_alloc(bytes, HUGE_PAGE, 0, NULL, 0, p, NULL); }

void h5g_resident_free(void *p, size_t bytes) { huge_page_free(p, bytes); }

/* Before every bulk buffer: how it was made (a 64-byte header keeps the buffer so aligned). */
typedef struct {
  size_t mapped; /* bytes mapped from the header on (huge pages or scratch); 0: aligned_alloc'd */
  char pad[64 - sizeof(size_t)];
} bulk_header;

void *h5g_bulk_alloc(size_t bytes) {
  size_t total = sizeof(bulk_header) + bytes;
  bulk_header *h = NULL;
  void *p = NULL;
  if (total < bytes) return NULL;
  if (bytes == 0 || (!h5g_scratch_dir() && total < HUGE_PAGE)) { /* small, or nothing at all */
    h = aligned_alloc(sizeof(bulk_header), (total + sizeof(bulk_header) - 1) /
                                               sizeof(bulk_header) * sizeof(bulk_header));
    if (h) h->mapped = 0;
  } else if (huge_page_alloc(total, HUGE_PAGE, 1, NULL, 0, &p, NULL) == H5G_OK) { /* or a scratch file's */
    h = p;
    h->mapped = whole_huge_pages(total);
  }
  return h ? h + 1 : NULL;
}

void h5g_bulk_free(void *p) {
  if (!p) return;
  bulk_header *h = (bulk_header *)p - 1;
  if (h->mapped)
    munmap(h, h->mapped);
  else
    free(h);
}

struct h5g_buffer_set {
  h5g_buffer_spec *bufs;
  int count;
  size_t piece_bytes;
  long threads;
  h5g_pin_fn pin;
  h5g_unpin_fn unpin;
  void *ctx;
  int from_scratch;      /* the buffers are scratch files (base/scratch_memory.h): never touched */
  pthread_t helper;      /* makes them resident, or with `pin` pins what the toucher made so */
  int helper_running;
  pthread_t toucher;     /* with `pin`: makes them resident ahead of the pinning */
  int toucher_running;
  pthread_mutex_t lock;
  pthread_cond_t progress;
  int touched_buf;       /* buffers [0, touched_buf) are resident */
  size_t resident_elems; /* elements of buffer touched_buf made resident so far */
  int ready_buf;         /* buffers [0, ready_buf) are resident and pinned */
  size_t pinned_elems;   /* elements of buffer ready_buf pinned so far */
  int rc;                /* the helper's status; its message in `error` */
  char error[H5G_MSG_MAX];
  size_t *pinned_bytes;  /* per buffer: the bytes from its start its registrations cover */
  int *nameless_fds;     /* per buffer: open on its scratch file while that has no name, or -1 */
  pthread_t unpinner;    /* h5g_buffers_unpin_start */
  int unpinner_running;
  double unpin_seconds;
};

/* Returns 0 once the helper failed: nothing will use the buffers, so the rest is left untouched
 * (the run's tear-down would wait for it). */
static int publish_resident(h5g_buffer_set *set, int buf, size_t elems) {
  pthread_mutex_lock(&set->lock);
  set->touched_buf = buf;
  set->resident_elems = elems;
  int go_on = set->rc == H5G_OK;
  pthread_cond_broadcast(&set->progress);
  pthread_mutex_unlock(&set->lock);
  return go_on;
}

static void publish_ready(h5g_buffer_set *set, int buf, size_t pinned, int rc) {
  pthread_mutex_lock(&set->lock);
  set->ready_buf = buf;
  set->pinned_elems = pinned;
  if (rc != H5G_OK) {
    set->rc = rc;
    snprintf(set->error, sizeof set->error, "%s", h5g_error_message());
  }
  pthread_cond_broadcast(&set->progress);
  pthread_mutex_unlock(&set->lock);
}

/* The elements of buffer b wholly in its first `bytes` bytes. */
static size_t elems_within(const h5g_buffer_spec *b, size_t bytes) {
  return bytes == b->n * b->elem_bytes ? b->n : bytes / b->elem_bytes;
}

/* Makes every buffer resident, in order, in parts of at most piece_bytes, and with `pin` at most
 * a pin piece, so the read and the pinning start after the first one (a buffer its first writer
 * fills is left to it unless it is to be pinned); without `pin` that makes it ready. */
static void *touch_all(void *arg) {
  h5g_buffer_set *set = arg;
  size_t part = set->piece_bytes ? set->piece_bytes : 1;
  if (set->pin && part > h5g_pin_piece_bytes()) part = h5g_pin_piece_bytes();
  for (int i = 0; i < set->count; i++) {
    h5g_buffer_spec *b = &set->bufs[i];
    const size_t bytes = b->n * b->elem_bytes;
    for (size_t at = 0; at < bytes; at += part) {
      size_t end = bytes - at < part ? bytes : at + part;
      if (!set->from_scratch && (set->pin || !b->filled_in_place))
        touch_in_parallel((char *)b->p + at, end - at, set->threads);
      if (!publish_resident(set, i, elems_within(b, end))) return NULL;
    }
    if (!publish_resident(set, i + 1, 0)) return NULL;
    if (!set->pin) publish_ready(set, i + 1, 0, H5G_OK);
  }
  return NULL;
}

/* Buffer `which` is resident (or with `pinned` also pinned) through element `upto`; the whole
 * buffer ready (resident, and pinned if it is to be) with upto 0 and `pinned`. */
static int is_ready(const h5g_buffer_set *set, int which, size_t upto, int pinned) {
  if (pinned) return set->ready_buf > which || (upto && set->ready_buf == which && set->pinned_elems >= upto);
  return set->touched_buf > which || (upto && set->touched_buf == which && set->resident_elems >= upto);
}

/* Blocks until is_ready; a failure of the helper is the waiter's only where it left that
 * unready. */
static int wait_for(h5g_buffer_set *set, int which, size_t upto, int pinned) {
  int rc = H5G_OK;
  pthread_mutex_lock(&set->lock);
  while (set->rc == H5G_OK && !is_ready(set, which, upto, pinned))
    pthread_cond_wait(&set->progress, &set->lock);
  int failed = is_ready(set, which, upto, pinned) ? H5G_OK : set->rc;
  pthread_mutex_unlock(&set->lock);
  if (failed != H5G_OK) H5G_FAIL(failed, "%s", set->error);
done:
  return rc;
}

/* Pins every buffer, in order, in pieces of the pin piece as they become resident: each piece
 * starts at a multiple of it in the address space (the buffers are aligned to it), and an element
 * is pinned once the pieces it lies in are. The pinning runs beside the making resident, not
 * after each piece of it in the same thread, which made the read wait for both (bench/RESULTS.md,
 * "Host buffers pinned in pieces"). */
static int pin_all(h5g_buffer_set *set) {
  int rc = H5G_OK;
  const size_t piece = h5g_pin_piece_bytes();
  for (int i = 0; i < set->count; i++) {
    h5g_buffer_spec *b = &set->bufs[i];
    const size_t bytes = b->n * b->elem_bytes;
    for (size_t at = 0; at < bytes; at += piece) {
      size_t end = bytes - at < piece ? bytes : at + piece;
      CHECK(wait_for(set, i, elems_within(b, end), 0));
      CHECK(set->pin(set->ctx, (char *)b->p + at, end - at));
      set->pinned_bytes[i] = end;
      publish_ready(set, i, elems_within(b, end), H5G_OK);
    }
    publish_ready(set, i + 1, 0, H5G_OK);
  }
done:
  return rc;
}

static void *prepare_all(void *arg) {
  h5g_buffer_set *set = arg;
  if (!set->pin) return touch_all(set);
  set->toucher_running = pthread_create(&set->toucher, NULL, touch_all, set) == 0;
  if (!set->toucher_running) touch_all(set); /* no thread: all resident first, then pinned */
  int rc = pin_all(set);
  if (rc != H5G_OK) publish_ready(set, set->ready_buf, set->pinned_elems, rc);
  return NULL;
}

int h5g_buffers_start(h5g_buffer_spec *bufs, int count, size_t piece_bytes, int ranks_on_node,
                      h5g_pin_fn pin, h5g_unpin_fn unpin, void *ctx, h5g_buffer_set **out) {
  int rc = H5G_OK;
  /* pinned pieces start at multiples of the pin piece: the buffers start at one */
  size_t align = pin && h5g_pin_piece_bytes() > HUGE_PAGE ? h5g_pin_piece_bytes() : HUGE_PAGE;
  h5g_buffer_set *set = NULL;
  /* pinned pages stay in memory: a pinned scratch file would not spill */
  if (pin && h5g_scratch_dir())
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: scratch buffers are not to be pinned");
  set = calloc(1, sizeof *set);
  CHECK_ALLOC(set, sizeof *set);
  *set = (h5g_buffer_set){.bufs = bufs, .count = count, .piece_bytes = piece_bytes,
                          .threads = touch_threads(ranks_on_node), .pin = pin, .unpin = unpin,
                          .ctx = ctx, .from_scratch = h5g_scratch_dir() != NULL};
  pthread_mutex_init(&set->lock, NULL);
  pthread_cond_init(&set->progress, NULL);
  set->nameless_fds = malloc((count > 0 ? (size_t)count : 1) * sizeof *set->nameless_fds);
  CHECK_ALLOC(set->nameless_fds, (size_t)count * sizeof *set->nameless_fds);
  for (int i = 0; i < count; i++) set->nameless_fds[i] = -1;
  set->pinned_bytes = calloc(count > 0 ? (size_t)count : 1, sizeof *set->pinned_bytes);
  CHECK_ALLOC(set->pinned_bytes, (size_t)count * sizeof *set->pinned_bytes);
  for (int i = 0; i < count; i++)
    CHECK(huge_page_alloc(bufs[i].n * bufs[i].elem_bytes, align, 1, bufs[i].scratch_file,
                          bufs[i].reuse_file, &bufs[i].p, &set->nameless_fds[i]));
  set->helper_running = pthread_create(&set->helper, NULL, prepare_all, set) == 0;
  if (!set->helper_running) prepare_all(set); /* no thread: prepare them now */
  *out = set;
  set = NULL;
done:
  h5g_buffers_free(set);
  return rc;
}

int h5g_buffers_wait(h5g_buffer_set *set, int which, size_t upto) {
  return upto ? wait_for(set, which, upto, 0) : H5G_OK;
}

int h5g_buffers_pinned(h5g_buffer_set *set, int which, size_t upto) {
  if (!upto) return 1;
  pthread_mutex_lock(&set->lock);
  int pinned = is_ready(set, which, upto, 1);
  pthread_mutex_unlock(&set->lock);
  return pinned;
}

int h5g_buffers_wait_pinned(h5g_buffer_set *set, int which, size_t upto) {
  return upto ? wait_for(set, which, upto, 1) : H5G_OK;
}

int h5g_buffers_wait_all(h5g_buffer_set *set) { return wait_for(set, set->count - 1, 0, 1); }

static void unpin_all(h5g_buffer_set *set) {
  const size_t piece = h5g_pin_piece_bytes();
  for (int i = 0; set->pinned_bytes && i < set->count; i++) {
    for (size_t at = 0; at < set->pinned_bytes[i]; at += piece)
      set->unpin(set->ctx, (char *)set->bufs[i].p + at);
    set->pinned_bytes[i] = 0;
  }
}

/* Whether any buffer holds a registration to release. */
static int any_pinned(const h5g_buffer_set *set) {
  for (int i = 0; set->pinned_bytes && i < set->count; i++)
    if (set->pinned_bytes[i]) return 1;
  return 0;
}

/* The helper, then the toucher it started. */
static void join_helpers(h5g_buffer_set *set) {
  if (set->helper_running) pthread_join(set->helper, NULL);
  set->helper_running = 0;
  if (set->toucher_running) pthread_join(set->toucher, NULL);
  set->toucher_running = 0;
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
  join_helpers(set); /* done: the caller waited for them */
  if (!any_pinned(set)) return;
  /* without a thread, h5g_buffers_free unpins them */
  set->unpinner_running = pthread_create(&set->unpinner, NULL, unpin_in_background, set) == 0;
}

double h5g_buffers_unpin_wait(h5g_buffer_set *set) {
  if (!set || !set->unpinner_running) return 0;
  pthread_join(set->unpinner, NULL);
  set->unpinner_running = 0;
  return set->unpin_seconds;
}

int h5g_buffers_name_scratch(h5g_buffer_set *set) {
  int rc = H5G_OK;
  for (int i = 0; i < set->count; i++) {
    if (set->nameless_fds[i] < 0) continue;
    int fd = set->nameless_fds[i];
    set->nameless_fds[i] = -1;
    CHECK(h5g_scratch_link(fd, set->bufs[i].scratch_file));
  }
done:
  return rc;
}

void h5g_buffers_free(h5g_buffer_set *set) {
  if (!set) return;
  join_helpers(set);
  h5g_buffers_unpin_wait(set);
  unpin_all(set);
  for (int i = 0; i < set->count; i++) {
    huge_page_free(set->bufs[i].p, set->bufs[i].n * set->bufs[i].elem_bytes);
    set->bufs[i].p = NULL;
    if (set->nameless_fds && set->nameless_fds[i] >= 0) close(set->nameless_fds[i]);
  }
  pthread_cond_destroy(&set->progress);
  pthread_mutex_destroy(&set->lock);
  free(set->pinned_bytes);
  free(set->nameless_fds);
  free(set);
}
