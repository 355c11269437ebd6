/* h5g_buffers (base/host_memory.h): buffers made ready by a helper thread. Checks that each
 * non-empty buffer is pinned once, whole, and empty ones never; that a wait for resident
 * elements and a wait for the pin return only when that holds (the pin log says which buffers
 * are pinned); that the buffers are usable (written in full); that a failing pin reaches every
 * later wait with its message while earlier buffers stay usable; and that every pinned buffer is
 * unpinned. */
#include "base/error.h"
#include "base/host_memory.h"
#include "tests/support/check.h"

#include <pthread.h>

enum { BUFFERS = 3 };

typedef struct {
  pthread_mutex_t lock;
  void *pinned[BUFFERS];
  size_t bytes[BUFFERS];
  int npinned, unpinned;
  int fail_at; /* the pin call that fails (-1: none) */
} pin_log;

static int fake_pin(void *ctx, void *p, size_t bytes) {
  pin_log *log = ctx;
  pthread_mutex_lock(&log->lock);
  int index = log->npinned++;
  if (index < BUFFERS) {
    log->pinned[index] = p;
    log->bytes[index] = bytes;
  }
  pthread_mutex_unlock(&log->lock);
  if (index == log->fail_at)
    return h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "pinning buffer %d failed", index);
  return H5G_OK;
}

static void fake_unpin(void *ctx, void *p) {
  pin_log *log = ctx;
  pthread_mutex_lock(&log->lock);
  for (int i = 0; i < log->npinned && i < BUFFERS; i++)
    if (log->pinned[i] == p) log->unpinned++;
  pthread_mutex_unlock(&log->lock);
}

static int was_pinned(pin_log *log, const void *p, size_t bytes) {
  pthread_mutex_lock(&log->lock);
  int found = 0;
  for (int i = 0; i < log->npinned && i < BUFFERS; i++)
    found |= log->pinned[i] == p && log->bytes[i] == bytes;
  pthread_mutex_unlock(&log->lock);
  return found;
}

static void check_set(size_t n, size_t piece_bytes) {
  pin_log log = {.lock = PTHREAD_MUTEX_INITIALIZER, .fail_at = -1};
  h5g_buffer_spec specs[BUFFERS] = {{n, 4, NULL, 0}, {0, 4, NULL, 0}, {n, 8, NULL, 1}};
  h5g_buffer_set *set = NULL;
  EXPECT(h5g_buffers_start(specs, BUFFERS, piece_bytes, 1, fake_pin, fake_unpin, &log, &set) == H5G_OK,
         "start: %s", h5g_error_message());
  EXPECT(specs[1].p == NULL && (n == 0) == (specs[0].p == NULL), "buffer pointers for n %zu", n);
  for (size_t upto = 1; upto <= n; upto += n / 7 + 1) {
    EXPECT(h5g_buffers_wait(set, 2, upto) == H5G_OK, "wait");
    EXPECT(h5g_buffers_pinned(set, 0), "buffer 0 not pinned while buffer 2 is being prepared");
    ((volatile char *)specs[2].p)[upto * 8 - 1] = 1; /* resident: writable */
  }
  for (int b = 0; b < BUFFERS; b++) {
    EXPECT(h5g_buffers_wait_pinned(set, b) == H5G_OK, "wait pinned");
    EXPECT(h5g_buffers_pinned(set, b), "buffer %d", b);
    EXPECT(!specs[b].n || was_pinned(&log, specs[b].p, specs[b].n * specs[b].elem_bytes),
           "buffer %d (n %zu) pinned whole", b, n);
  }
  EXPECT(h5g_buffers_wait_all(set) == H5G_OK, "wait all");
  EXPECT(log.npinned == (n ? 2 : 0), "%d pins for n %zu", log.npinned, n);
  if (n) {
    memset(specs[0].p, 0x5a, n * 4);
    memset(specs[2].p, 0xa5, n * 8);
  }
  h5g_buffers_free(set);
  EXPECT(log.unpinned == log.npinned, "%d pinned, %d unpinned", log.npinned, log.unpinned);
}

static void check_failing_pin(void) {
  pin_log log = {.lock = PTHREAD_MUTEX_INITIALIZER, .fail_at = 1};
  h5g_buffer_spec specs[BUFFERS] = {{1000, 4, NULL, 1}, {3000, 8, NULL, 0}, {10, 4, NULL, 0}};
  h5g_buffer_set *set = NULL;
  EXPECT(h5g_buffers_start(specs, BUFFERS, 400, 1, fake_pin, fake_unpin, &log, &set) == H5G_OK, "start");
  EXPECT(h5g_buffers_wait_pinned(set, 0) == H5G_OK, "the buffer before the failure is ready");
  EXPECT(h5g_buffers_wait_pinned(set, 1) == H5G_ERR_RUNTIME, "a failed pin reaches the waiter");
  EXPECT(strstr(h5g_error_message(), "pinning buffer 1 failed") != NULL, "its message: '%s'",
         h5g_error_message());
  h5g_error_clear();
  EXPECT(h5g_buffers_wait_all(set) == H5G_ERR_RUNTIME, "and every later wait");
  h5g_error_clear();
  EXPECT(!h5g_buffers_pinned(set, 2), "nothing after the failure is pinned");
  h5g_buffers_free(set);
  EXPECT(log.npinned == 2 && log.unpinned == 1, "the one buffer pinned is unpinned (%d of %d)",
         log.unpinned, log.npinned);
}

int main(void) {
  check_set(0, 4096);
  check_set(1, 4096);
  check_set(100000, 4096);
  check_set(100003, 40000);
  check_set(777777, 1 << 20);
  check_set(1000, 3); /* pieces smaller than one 8-byte element */
  check_failing_pin();
  return test_summary("test_host_memory");
}
