/* h5g_buffers (base/host_memory.h): buffers made ready by helper threads, pinned piece by piece.
 * Checks that each non-empty buffer is pinned in pieces that start at multiples of the pin piece
 * in the address space, follow each other and cover it, and empty ones never; that every page of
 * a piece is resident when it is pinned; that buffers are pinned in order; that a wait for
 * resident elements and a wait for pinned ones return only when that holds (the pin log says how
 * far each buffer is pinned); that what is written once a wait returns stays (the helpers touch
 * no element after publishing it, with touch parts that split elements too); that h5g_pin_span
 * stops at the pieces' ends; that a failing pin reaches every later wait with its message while
 * what was pinned before stays usable; and that every piece pinned is unpinned. And
 * h5g_bulk_alloc: 64-byte aligned, every byte usable, a large one not touched ahead (mapped:
 * its pages come in as they are written), freed by h5g_bulk_free whichever way it was made.
 * The pin piece is 64 KiB, or H5GSORT_PIN_PIECE_BYTES where set (ctest runs 4 MiB too, above
 * the 2 MiB alignment of buffers that are not pinned). The intact-bytes check catches a helper
 * that writes published elements only when it runs behind the test: a race, not a proof. */
#define _GNU_SOURCE /* mincore */
#include "base/error.h"
#include "base/host_memory.h"
#include "tests/support/check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

enum { BUFFERS = 3, MAX_PIECES = 4096 };

static size_t pin_piece;

typedef struct {
  pthread_mutex_t lock;
  char *pinned[MAX_PIECES];
  size_t bytes[MAX_PIECES];
  int npinned, unpinned, bad_unpins, not_resident;
  int fail_at; /* the pin call that fails (-1: none) */
} pin_log;

/* Pages of [p, p + bytes) not resident. */
static int pages_not_resident(char *p, size_t bytes) {
  long page = sysconf(_SC_PAGESIZE);
  size_t pages = (bytes + (size_t)page - 1) / (size_t)page;
  unsigned char *vec = malloc(pages ? pages : 1);
  int missing = vec && mincore(p, bytes, vec) == 0 ? 0 : (int)pages;
  for (size_t i = 0; vec && missing == 0 && i < pages; i++) missing += !(vec[i] & 1);
  free(vec);
  return missing;
}

static int fake_pin(void *ctx, void *p, size_t bytes) {
  pin_log *log = ctx;
  int missing = pages_not_resident(p, bytes);
  pthread_mutex_lock(&log->lock);
  int index = log->npinned++;
  if (index < MAX_PIECES) {
    log->pinned[index] = p;
    log->bytes[index] = bytes;
  }
  log->not_resident += missing;
  pthread_mutex_unlock(&log->lock);
  if (index == log->fail_at)
    return h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "pinning piece %d failed", index);
  return H5G_OK;
}

/* Counts an unpin of a piece pinned and not yet unpinned (its log entry is then cleared). */
static void fake_unpin(void *ctx, void *p) {
  pin_log *log = ctx;
  int found = 0;
  pthread_mutex_lock(&log->lock);
  for (int i = 0; i < log->npinned && i < MAX_PIECES && !found; i++)
    if (log->pinned[i] == p && i != log->fail_at) {
      log->pinned[i] = NULL;
      found = 1;
    }
  log->unpinned += found;
  log->bad_unpins += !found;
  pthread_mutex_unlock(&log->lock);
}

/* Bytes from p on that the log's successful pins cover without a gap, each starting at a multiple
 * of the pin piece and ending at the next one or at the buffer's end. */
static size_t pinned_from(pin_log *log, const char *p, size_t bytes) {
  size_t covered = 0;
  pthread_mutex_lock(&log->lock);
  for (int i = 0; i < log->npinned && i < MAX_PIECES; i++) {
    if (log->pinned[i] != p + covered || i == log->fail_at) continue;
    size_t end = covered + log->bytes[i];
    EXPECT((uintptr_t)log->pinned[i] % pin_piece == 0, "piece at %p not aligned", log->pinned[i]);
    EXPECT(end == bytes || (uintptr_t)(p + end) % pin_piece == 0,
           "piece of %zu bytes ends between boundaries", log->bytes[i]);
    covered = end;
  }
  pthread_mutex_unlock(&log->lock);
  return covered;
}

static unsigned char pattern(size_t byte) { return (unsigned char)(byte % 251 + 1); }

/* Buffers of n 4-byte, 0 and n 12-byte elements, made resident in parts of touch_bytes. */
static void check_set(size_t n, size_t touch_bytes) {
  pin_log log = {.lock = PTHREAD_MUTEX_INITIALIZER, .fail_at = -1};
  h5g_buffer_spec specs[BUFFERS] = {{.n = n, .elem_bytes = 4},
                                    {.n = 0, .elem_bytes = 4},
                                    {.n = n, .elem_bytes = 12, .filled_in_place = 1}};
  h5g_buffer_set *set = NULL;
  EXPECT(h5g_buffers_start(specs, BUFFERS, touch_bytes, 1, fake_pin, fake_unpin, &log, &set) == H5G_OK,
         "start: %s", h5g_error_message());
  EXPECT(specs[1].p == NULL && (n == 0) == (specs[0].p == NULL), "buffer pointers for n %zu", n);
  unsigned char *values = specs[2].p;
  size_t filled = 0; /* bytes of buffer 2 written with the pattern */
  for (size_t upto = 1; upto <= n; upto += n / 7 + 1) {
    EXPECT(h5g_buffers_wait(set, 2, upto) == H5G_OK, "wait");
    for (; filled < upto * 12; filled++) values[filled] = pattern(filled); /* resident: writable */
    EXPECT(h5g_buffers_wait_pinned(set, 2, upto) == H5G_OK, "wait pinned");
    EXPECT(h5g_buffers_pinned(set, 0, n), "buffer 0 not pinned while buffer 2 is being pinned");
    EXPECT(pinned_from(&log, specs[2].p, n * 12) >= upto * 12, "%zu elements of 12 bytes "
           "pinned, %zu bytes in the log", upto, pinned_from(&log, specs[2].p, n * 12));
    EXPECT(h5g_buffers_pinned(set, 2, upto), "pinned %zu", upto);
  }
  EXPECT(h5g_buffers_wait_all(set) == H5G_OK, "wait all");
  size_t changed = 0;
  for (size_t i = 0; i < filled; i++) changed += values[i] != pattern(i);
  EXPECT(changed == 0, "%zu of %zu bytes written after the waits changed since", changed, filled);
  int pieces = 0;
  for (int b = 0; b < BUFFERS; b++) {
    size_t bytes = specs[b].n * specs[b].elem_bytes;
    EXPECT(h5g_buffers_pinned(set, b, specs[b].n), "buffer %d", b);
    EXPECT(pinned_from(&log, specs[b].p, bytes) == bytes, "buffer %d (n %zu) pinned whole", b, n);
    pieces += (int)((bytes + pin_piece - 1) / pin_piece);
  }
  EXPECT(log.npinned == pieces, "%d pins for n %zu, %d pieces", log.npinned, n, pieces);
  EXPECT(log.not_resident == 0, "%d pages not resident when pinned (n %zu, parts of %zu)",
         log.not_resident, n, touch_bytes);
  for (size_t at = 0; at < n * 12; at += 999) { /* spans stop at the pieces' ends */
    size_t span = h5g_pin_span(values + at, n * 12 - at);
    EXPECT(span > 0 && (at + span == n * 12 || (uintptr_t)(values + at + span) % pin_piece == 0),
           "span of %zu bytes from %zu", span, at);
  }
  if (n) memset(specs[0].p, 0x5a, n * 4);
  h5g_buffers_free(set);
  EXPECT(log.unpinned == log.npinned && log.bad_unpins == 0,
         "%d pinned, %d unpinned, %d unpins of pieces not pinned", log.npinned, log.unpinned,
         log.bad_unpins);
}

static void check_failing_pin(void) {
  pin_log log = {.lock = PTHREAD_MUTEX_INITIALIZER, .fail_at = 3};
  /* buffer 0: pieces 0 and 1; buffer 1: pieces 2 to 5, of which piece 3 (its second) fails */
  size_t n0 = (pin_piece + pin_piece / 2) / 4, n1 = (3 * pin_piece + pin_piece / 2) / 8;
  h5g_buffer_spec specs[BUFFERS] = {{.n = n0, .elem_bytes = 4, .filled_in_place = 1},
                                    {.n = n1, .elem_bytes = 8},
                                    {.n = 10, .elem_bytes = 4}};
  h5g_buffer_set *set = NULL;
  EXPECT(h5g_buffers_start(specs, BUFFERS, 400, 1, fake_pin, fake_unpin, &log, &set) == H5G_OK, "start");
  EXPECT(h5g_buffers_wait_pinned(set, 0, n0) == H5G_OK, "the buffer before the failure is ready");
  EXPECT(h5g_buffers_wait_pinned(set, 1, pin_piece / 8) == H5G_OK, "its first piece too");
  EXPECT(h5g_buffers_wait_pinned(set, 1, pin_piece / 8 + 1) == H5G_ERR_RUNTIME,
         "a failed pin reaches the waiter");
  EXPECT(strstr(h5g_error_message(), "pinning piece 3 failed") != NULL, "its message: '%s'",
         h5g_error_message());
  h5g_error_clear();
  EXPECT(h5g_buffers_wait_all(set) == H5G_ERR_RUNTIME, "and every later wait");
  h5g_error_clear();
  int resident = h5g_buffers_wait(set, 2, 10); /* returns: resident if the toucher got there */
  EXPECT(resident == H5G_OK || resident == H5G_ERR_RUNTIME, "a wait for residence: %d", resident);
  h5g_error_clear();
  EXPECT(!h5g_buffers_pinned(set, 2, 1), "nothing after the failure is pinned");
  EXPECT(h5g_buffers_pinned(set, 1, pin_piece / 8), "what was pinned before it still is");
  h5g_buffers_free(set);
  EXPECT(log.npinned == 4 && log.unpinned == 3 && log.bad_unpins == 0,
         "the pieces pinned are unpinned (%d of %d, %d bad)", log.unpinned, log.npinned,
         log.bad_unpins);
}

/* A bulk buffer of `bytes` (no scratch directory: from malloc or mapped on huge pages). */
static void check_bulk(size_t bytes) {
  unsigned char *p = h5g_bulk_alloc(bytes);
  EXPECT(p != NULL, "bulk %zu: none", bytes);
  if (!p) return;
  EXPECT((uintptr_t)p % 64 == 0, "bulk %zu: at %p, not 64-byte aligned", bytes, (void *)p);
  if (bytes >= ((size_t)4 << 20)) { /* past its header's page: nothing touched yet */
    long page = sysconf(_SC_PAGESIZE);
    char *first = (char *)(((uintptr_t)p + (uintptr_t)page) & ~(uintptr_t)(page - 1));
    size_t pages = (size_t)((char *)p + bytes - first) / (size_t)page, resident = 0;
    unsigned char *vec = malloc(pages);
    EXPECT(vec && mincore(first, pages * (size_t)page, vec) == 0, "bulk %zu: mincore", bytes);
    for (size_t i = 0; vec && i < pages; i++) resident += vec[i] & 1;
    free(vec);
    EXPECT(resident == 0, "bulk %zu: %zu of %zu pages touched ahead", bytes, resident, pages);
  }
  for (size_t i = 0; i < bytes; i++) p[i] = (unsigned char)(i * 7 + 3);
  size_t wrong = 0;
  for (size_t i = 0; i < bytes; i++) wrong += p[i] != (unsigned char)(i * 7 + 3);
  EXPECT(wrong == 0, "bulk %zu: %zu bytes changed", bytes, wrong);
  h5g_bulk_free(p);
}

int main(void) {
  /* 4 KiB pages only, so that mincore tells each page (a huge page would make its neighbours
   * resident with the first touch); advice only, as in base/host_memory.c */
  (void)prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  /* small pieces, so that small buffers take several; read once, before any buffer is made */
  setenv("H5GSORT_PIN_PIECE_BYTES", "65536", 0);
  pin_piece = h5g_pin_piece_bytes();
  EXPECT(pin_piece == strtoull(getenv("H5GSORT_PIN_PIECE_BYTES"), NULL, 10), "pin piece %zu",
         pin_piece);
  size_t piece_elems = pin_piece / 12; /* of the 12-byte buffer */
  check_set(0, 4096);
  check_set(1, 4096);
  check_set(piece_elems, 4096);         /* one piece */
  check_set(piece_elems + 1, 4096);     /* a second piece of a few bytes */
  check_set(8 * piece_elems + 3, 4096);
  check_set(8 * piece_elems + 3, 40000); /* touch parts that split elements */
  check_set(piece_elems / 8 + piece_elems, 3); /* parts smaller than one element */
  check_failing_pin();
  static const size_t bulk[] = {1, 4096, ((size_t)2 << 20) - 64, (size_t)2 << 20,
                                ((size_t)8 << 20) + 5};
  for (size_t i = 0; i < sizeof bulk / sizeof bulk[0]; i++) check_bulk(bulk[i]);
  h5g_bulk_free(NULL);
  return test_summary("test_host_memory");
}
