/* h5g_buffers (src/host_memory.h): buffers made ready by a helper thread. Checks that every
 * piece is pinned exactly once, within one run and no larger than the piece size, that the
 * pieces tile each buffer, that a wait returns only once the pieces it covers are pinned, that
 * the buffers are usable (written in full), that a failing pin reaches the waiter with its
 * message, and that every pinned piece is unpinned. */
#include "src/error.h"
#include "src/host_memory.h"
#include "tests/unit/test_util.h"

#include <pthread.h>

enum { MAX_PIECES = 4096 };

typedef struct {
  pthread_mutex_t lock;
  char *piece[MAX_PIECES];
  size_t bytes[MAX_PIECES];
  int pinned, unpinned;
  int fail_at; /* the pin call that fails (-1: none) */
} pin_log;

static int fake_pin(void *ctx, void *p, size_t bytes) {
  pin_log *log = ctx;
  pthread_mutex_lock(&log->lock);
  int index = log->pinned;
  if (index < MAX_PIECES) {
    log->piece[index] = p;
    log->bytes[index] = bytes;
  }
  log->pinned++;
  pthread_mutex_unlock(&log->lock);
  if (index == log->fail_at)
    return h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "pinning piece %d failed", index);
  return H5G_OK;
}

static void fake_unpin(void *ctx, void *p) {
  pin_log *log = ctx;
  pthread_mutex_lock(&log->lock);
  for (int i = 0; i < log->pinned && i < MAX_PIECES; i++)
    if (log->piece[i] == p) log->unpinned++;
  pthread_mutex_unlock(&log->lock);
}

/* Is byte `at` of a buffer inside a pinned piece? */
static int pinned_covers(pin_log *log, const char *at) {
  pthread_mutex_lock(&log->lock);
  int found = 0;
  for (int i = 0; i < log->pinned && i < MAX_PIECES && !found; i++)
    found = at >= log->piece[i] && at < log->piece[i] + log->bytes[i];
  pthread_mutex_unlock(&log->lock);
  return found;
}

static void check_set(size_t n, size_t nruns, size_t piece_bytes) {
  pin_log log = {.lock = PTHREAD_MUTEX_INITIALIZER, .fail_at = -1};
  uint64_t runs[8];
  for (size_t j = 0; j <= nruns; j++) runs[j] = n * j / nruns;
  h5g_buffer_spec specs[3] = {{n, 4, NULL}, {0, 4, NULL}, {n, 8, NULL}};
  h5g_buffer_set *set = NULL;
  EXPECT(h5g_buffers_start(specs, 3, runs, nruns, piece_bytes, fake_pin, fake_unpin, &log, &set) ==
             H5G_OK, "start: %s", h5g_error_message());
  EXPECT(specs[1].p == NULL && (n == 0) == (specs[0].p == NULL), "buffer pointers for n %zu", n);
  for (int b = 0; b < 3; b += 2)
    for (size_t upto = 1; upto <= n; upto += n / 7 + 1) {
      EXPECT(h5g_buffers_wait(set, b, upto) == H5G_OK, "wait");
      EXPECT(pinned_covers(&log, (char *)specs[b].p + (upto - 1) * specs[b].elem_bytes),
             "element %zu of buffer %d not pinned after the wait", upto - 1, b);
    }
  EXPECT(h5g_buffers_wait_all(set) == H5G_OK, "wait all");
  if (n) {
    memset(specs[0].p, 0x5a, n * 4);
    memset(specs[2].p, 0xa5, n * 8);
  }
  /* the pieces tile both buffers, none crossing a run boundary or larger than a piece */
  size_t covered[3] = {0, 0, 0};
  for (int i = 0; i < log.pinned && i < MAX_PIECES; i++) {
    int b = log.piece[i] >= (char *)specs[2].p && specs[2].p &&
                    log.piece[i] < (char *)specs[2].p + n * 8 ? 2 : 0;
    size_t elem = specs[b].elem_bytes, first = (size_t)(log.piece[i] - (char *)specs[b].p) / elem;
    size_t count = log.bytes[i] / elem, run = 0;
    while (runs[run + 1] <= first) run++;
    EXPECT(first + count <= runs[run + 1], "piece [%zu, %zu) crosses run end %llu", first,
           first + count, (unsigned long long)runs[run + 1]);
    EXPECT(log.bytes[i] <= piece_bytes || count == 1, "piece of %zu bytes", log.bytes[i]);
    covered[b] += count;
  }
  EXPECT(covered[0] == n && covered[2] == n, "pieces cover %zu and %zu of %zu elements", covered[0],
         covered[2], n);
  h5g_buffers_free(set);
  EXPECT(log.unpinned == log.pinned, "%d pinned, %d unpinned", log.pinned, log.unpinned);
}

static void check_failing_pin(void) {
  pin_log log = {.lock = PTHREAD_MUTEX_INITIALIZER, .fail_at = 2};
  uint64_t runs[2] = {0, 1000};
  h5g_buffer_spec specs[1] = {{1000, 4, NULL}};
  h5g_buffer_set *set = NULL;
  EXPECT(h5g_buffers_start(specs, 1, runs, 1, 400, fake_pin, fake_unpin, &log, &set) == H5G_OK,
         "start");
  EXPECT(h5g_buffers_wait(set, 0, 100) == H5G_OK, "the first piece is ready before the failure");
  EXPECT(h5g_buffers_wait_all(set) == H5G_ERR_RUNTIME, "a failed pin reaches the waiter");
  EXPECT(strstr(h5g_error_message(), "pinning piece 2 failed") != NULL, "its message: '%s'",
         h5g_error_message());
  h5g_error_clear();
  h5g_buffers_free(set);
  EXPECT(log.unpinned == 2, "the 2 pieces pinned before the failure are unpinned (%d)", log.unpinned);
}

int main(void) {
  check_set(0, 1, 4096);
  check_set(1, 1, 4096);
  check_set(100000, 1, 4096);
  check_set(100003, 3, 40000);
  check_set(77777, 7, 1 << 20);
  check_set(1000, 5, 3); /* pieces smaller than one 8-byte element */
  check_failing_pin();
  return test_summary("test_host_memory");
}
