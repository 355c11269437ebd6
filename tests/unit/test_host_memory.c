/* h5g_buffers (base/host_memory.h): buffers made ready by a helper thread, pinned piece by piece.
 * Checks that each non-empty buffer is pinned in pieces that start at multiples of the pin piece
 * in the address space, follow each other and cover it, and empty ones never; that buffers are
 * pinned in order; that a wait for resident elements and a wait for pinned ones return only when
 * that holds (the pin log says how far each buffer is pinned); that h5g_pin_span stops at those boundaries; that the buffers are
 * usable (written in full); that a failing pin reaches every later wait with its message while
 * what was pinned before stays usable; and that every piece pinned is unpinned. */
#include "base/error.h"
#include "base/host_memory.h"
#include "tests/support/check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

enum { BUFFERS = 3, MAX_PIECES = 4096, PIN_PIECE = 65536 };

typedef struct {
  pthread_mutex_t lock;
  char *pinned[MAX_PIECES];
  size_t bytes[MAX_PIECES];
  int npinned, unpinned, bad_unpins;
  int fail_at; /* the pin call that fails (-1: none) */
} pin_log;

static int fake_pin(void *ctx, void *p, size_t bytes) {
  pin_log *log = ctx;
  pthread_mutex_lock(&log->lock);
  int index = log->npinned++;
  if (index < MAX_PIECES) {
    log->pinned[index] = p;
    log->bytes[index] = bytes;
  }
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
    EXPECT((uintptr_t)log->pinned[i] % PIN_PIECE == 0, "piece at %p not aligned", log->pinned[i]);
    EXPECT(end == bytes || (uintptr_t)(p + end) % PIN_PIECE == 0, "piece of %zu bytes ends "
           "between boundaries", log->bytes[i]);
    covered = end;
  }
  pthread_mutex_unlock(&log->lock);
  return covered;
}

static void check_set(size_t n) {
  pin_log log = {.lock = PTHREAD_MUTEX_INITIALIZER, .fail_at = -1};
  h5g_buffer_spec specs[BUFFERS] = {{n, 4, NULL, 0}, {0, 4, NULL, 0}, {n, 12, NULL, 1}};
  h5g_buffer_set *set = NULL;
  EXPECT(h5g_buffers_start(specs, BUFFERS, 4096, 1, fake_pin, fake_unpin, &log, &set) == H5G_OK,
         "start: %s", h5g_error_message());
  EXPECT(specs[1].p == NULL && (n == 0) == (specs[0].p == NULL), "buffer pointers for n %zu", n);
  for (size_t upto = 1; upto <= n; upto += n / 7 + 1) {
    EXPECT(h5g_buffers_wait(set, 2, upto) == H5G_OK, "wait");
    ((volatile char *)specs[2].p)[upto * 12 - 1] = 1; /* resident: writable */
    EXPECT(h5g_buffers_wait_pinned(set, 2, upto) == H5G_OK, "wait pinned");
    EXPECT(h5g_buffers_pinned(set, 0, n), "buffer 0 not pinned while buffer 2 is being pinned");
    EXPECT(pinned_from(&log, specs[2].p, n * 12) >= upto * 12, "%zu elements of 12 bytes "
           "pinned, %zu bytes in the log", upto, pinned_from(&log, specs[2].p, n * 12));
    EXPECT(h5g_buffers_pinned(set, 2, upto), "pinned %zu", upto);
  }
  EXPECT(h5g_buffers_wait_all(set) == H5G_OK, "wait all");
  int pieces = 0;
  for (int b = 0; b < BUFFERS; b++) {
    size_t bytes = specs[b].n * specs[b].elem_bytes;
    EXPECT(h5g_buffers_pinned(set, b, specs[b].n), "buffer %d", b);
    EXPECT(pinned_from(&log, specs[b].p, bytes) == bytes, "buffer %d (n %zu) pinned whole", b, n);
    pieces += (int)((bytes + PIN_PIECE - 1) / PIN_PIECE);
  }
  EXPECT(log.npinned == pieces, "%d pins for n %zu, %d pieces", log.npinned, n, pieces);
  const char *values = specs[2].p;
  for (size_t at = 0; at < n * 12; at += 999) { /* spans stop at the pieces' ends */
    size_t span = h5g_pin_span(values + at, n * 12 - at);
    EXPECT(span > 0 && (at + span == n * 12 || (uintptr_t)(values + at + span) % PIN_PIECE == 0),
           "span of %zu bytes from %zu", span, at);
  }
  if (n) {
    memset(specs[0].p, 0x5a, n * 4);
    memset(specs[2].p, 0xa5, n * 12);
  }
  h5g_buffers_free(set);
  EXPECT(log.unpinned == log.npinned && log.bad_unpins == 0,
         "%d pinned, %d unpinned, %d unpins of pieces not pinned", log.npinned, log.unpinned,
         log.bad_unpins);
}

static void check_failing_pin(void) {
  pin_log log = {.lock = PTHREAD_MUTEX_INITIALIZER, .fail_at = 3};
  /* buffer 0: 2 pieces, buffer 1: pieces 2 to 5, of which piece 3 (its second) fails */
  h5g_buffer_spec specs[BUFFERS] = {{20000, 4, NULL, 1}, {30000, 8, NULL, 0}, {10, 4, NULL, 0}};
  h5g_buffer_set *set = NULL;
  EXPECT(h5g_buffers_start(specs, BUFFERS, 400, 1, fake_pin, fake_unpin, &log, &set) == H5G_OK, "start");
  EXPECT(h5g_buffers_wait_pinned(set, 0, 20000) == H5G_OK, "the buffer before the failure is ready");
  EXPECT(h5g_buffers_wait_pinned(set, 1, PIN_PIECE / 8) == H5G_OK, "its first piece too");
  EXPECT(h5g_buffers_wait_pinned(set, 1, PIN_PIECE / 8 + 1) == H5G_ERR_RUNTIME,
         "a failed pin reaches the waiter");
  EXPECT(strstr(h5g_error_message(), "pinning piece 3 failed") != NULL, "its message: '%s'",
         h5g_error_message());
  h5g_error_clear();
  EXPECT(h5g_buffers_wait_all(set) == H5G_ERR_RUNTIME, "and every later wait");
  h5g_error_clear();
  EXPECT(!h5g_buffers_pinned(set, 2, 1), "nothing after the failure is pinned");
  EXPECT(h5g_buffers_pinned(set, 1, PIN_PIECE / 8), "what was pinned before it still is");
  h5g_buffers_free(set);
  EXPECT(log.npinned == 4 && log.unpinned == 3 && log.bad_unpins == 0,
         "the pieces pinned are unpinned (%d of %d, %d bad)", log.unpinned, log.npinned,
         log.bad_unpins);
}

int main(void) {
  /* small pieces, so small buffers take several; read once, before any buffer is made */
  setenv("H5GSORT_PIN_PIECE_BYTES", "65536", 1);
  EXPECT(h5g_pin_piece_bytes() == PIN_PIECE, "pin piece %zu", h5g_pin_piece_bytes());
  check_set(0);
  check_set(1);
  check_set(5000);  /* one piece */
  check_set(5462);  /* 65544 bytes: a second piece of 8 */
  check_set(100003);
  check_set(777777);
  check_failing_pin();
  return test_summary("test_host_memory");
}
