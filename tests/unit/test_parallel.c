/* h5g_parallel and h5g_parallel_copy: every part runs exactly once, also in calls made from
 * several threads at once; calls one after another run their parts on the same few threads (the
 * workers are kept); gathered copies land byte for byte where one memcpy per segment puts them
 * (segments of 0 bytes, of a few bytes and of many MiB, 1 to 17 threads), and no byte outside
 * the segments is written. */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "base/parallel.h"
#include "tests/support/check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void count_part(void *arg, int part, int parts) {
  int *runs = arg;
  __atomic_add_fetch(&runs[part], 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&runs[H5G_MAX_PARTS], parts, __ATOMIC_RELAXED);
}

static void check_parts(int asked, int expected) {
  int runs[H5G_MAX_PARTS + 1] = {0};
  h5g_parallel(asked, count_part, runs);
  for (int p = 0; p < H5G_MAX_PARTS; p++)
    EXPECT(runs[p] == (p < expected), "%d parts asked: part %d ran %d times", asked, p, runs[p]);
  EXPECT(runs[H5G_MAX_PARTS] == expected * expected, "%d parts asked: parts told %d", asked,
         runs[H5G_MAX_PARTS]);
}

enum { CALLERS = 4, CALLS = 500, CALL_PARTS = 9 };

/* CALLS calls of CALL_PARTS parts; returns the calls in which a part did not run exactly once. */
static void *call_many(void *arg) {
  intptr_t wrong = 0;
  (void)arg;
  for (int c = 0; c < CALLS; c++) {
    int runs[H5G_MAX_PARTS + 1] = {0};
    h5g_parallel(CALL_PARTS, count_part, runs);
    for (int p = 0; p < CALL_PARTS; p++)
      if (runs[p] != 1) {
        wrong++;
        break;
      }
  }
  return (void *)wrong;
}

static void check_concurrent_calls(void) {
  pthread_t callers[CALLERS];
  int started[CALLERS];
  for (int t = 0; t < CALLERS; t++)
    started[t] = pthread_create(&callers[t], NULL, call_many, NULL) == 0;
  for (int t = 0; t < CALLERS; t++) {
    void *wrong = NULL;
    EXPECT(started[t], "caller thread %d not started", t);
    if (started[t]) pthread_join(callers[t], &wrong);
    EXPECT(wrong == NULL, "caller %d: %ld of %d calls ran a part other than once", t,
           (long)(intptr_t)wrong, CALLS);
  }
}

enum { SEQUENTIAL_CALLS = 200 };

/* Records the thread each part runs on. */
static void note_thread(void *arg, int part, int parts) {
  long *tids = arg;
  (void)parts;
  tids[part] = (long)syscall(SYS_gettid);
}

/* Calls one after another find the workers of the call before idle and take them: their parts
 * run on this thread and CALL_PARTS - 1 workers, not on a new thread per part per call. */
static void check_workers_kept(void) {
  long seen[CALL_PARTS * SEQUENTIAL_CALLS];
  int distinct = 0;
  for (int c = 0; c < SEQUENTIAL_CALLS; c++) {
    long tids[CALL_PARTS] = {0};
    h5g_parallel(CALL_PARTS, note_thread, tids);
    for (int p = 0; p < CALL_PARTS; p++) {
      int known = 0;
      for (int k = 0; k < distinct && !known; k++) known = seen[k] == tids[p];
      if (!known) seen[distinct++] = tids[p];
    }
  }
  EXPECT(distinct <= CALL_PARTS, "%d calls of %d parts ran on %d threads", SEQUENTIAL_CALLS,
         CALL_PARTS, distinct);
}

/* h5g_parallel_strided of n elements of `width` bytes, from rows of src_stride to rows of
 * dst_stride, against a byte loop. */
static void check_strided(size_t width, size_t src_stride, size_t dst_stride, int swap,
                          int threads) {
  enum { N = 70001 };
  unsigned char *src = malloc(N * src_stride), *got = malloc(N * dst_stride);
  unsigned char *want = malloc(N * dst_stride);
  EXPECT(src && got && want, "out of memory");
  if (src && got && want) {
    uint64_t state = width * 131 + src_stride * 7 + dst_stride + (uint64_t)swap;
    for (size_t i = 0; i < N * src_stride; i++) src[i] = (unsigned char)test_rand(&state);
    memset(got, 0x5A, N * dst_stride);
    memset(want, 0x5A, N * dst_stride);
    for (size_t i = 0; i < N; i++)
      for (size_t b = 0; b < width; b++)
        want[i * dst_stride + b] = src[i * src_stride + (swap ? width - 1 - b : b)];
    h5g_parallel_strided(got, dst_stride, src, src_stride, width, N, swap, threads);
    EXPECT(memcmp(got, want, N * dst_stride) == 0,
           "strided copy of width %zu, strides %zu -> %zu, swap %d, %d threads differs", width,
           src_stride, dst_stride, swap, threads);
  }
  free(src);
  free(got);
  free(want);
}

/* h5g_parallel_interleave of n rows of `count` fields against a byte loop, and
 * h5g_parallel_split of its rows against the columns they came from. */
static void check_interleave(const size_t *widths, int count, size_t n, int threads) {
  size_t row_bytes = 0;
  for (int j = 0; j < count; j++) row_bytes += widths[j];
  unsigned char *columns = malloc(n * row_bytes + 1), *got = malloc(n * row_bytes + 1);
  unsigned char *want = malloc(n * row_bytes + 1);
  EXPECT(columns && got && want, "out of memory");
  if (columns && got && want) {
    uint64_t state = n * 31 + row_bytes + (uint64_t)count;
    for (size_t i = 0; i < n * row_bytes; i++) columns[i] = (unsigned char)test_rand(&state);
    memset(got, 0x5A, n * row_bytes + 1);
    memset(want, 0x5A, n * row_bytes + 1);
    for (int j = 0, offset = 0; j < count; offset += (int)widths[j++])
      for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < widths[j]; b++)
          want[i * row_bytes + (size_t)offset + b] = columns[(size_t)offset * n + i * widths[j] + b];
    h5g_parallel_interleave(got, columns, widths, count, n, threads);
    EXPECT(memcmp(got, want, n * row_bytes + 1) == 0,
           "interleave of %d fields (%zu-byte rows), %zu rows, %d threads differs", count,
           row_bytes, n, threads);
    /* and back: the rows split into columns give the columns */
    memset(want, 0x5A, n * row_bytes + 1);
    h5g_parallel_split(want, got, widths, count, n, threads);
    EXPECT(memcmp(want, columns, n * row_bytes) == 0 && want[n * row_bytes] == 0x5A,
           "split of %d fields (%zu-byte rows), %zu rows, %d threads differs", count, row_bytes,
           n, threads);
  }
  free(columns);
  free(got);
  free(want);
}

int main(void) {
  static const size_t fields[] = {4, 4, 4, 8, 1, 3, 16, 2};
  check_interleave(fields, 3, 200003, 4); /* x, y, z */
  check_interleave(fields + 2, 6, 70001, 3);
  check_interleave(fields + 3, 1, 4099, 2);
  check_interleave(fields, 8, 1, 4);
  check_interleave(fields, 2, 0, 4);
  static const size_t widths[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16};
  for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++)
    for (int swap = 0; swap <= 1; swap++) {
      size_t w = widths[k];
      check_strided(w, w + 12, w, swap, 5);  /* a field taken out of rows */
      check_strided(w, w, 3 * w + 4, swap, 3); /* put into rows */
      check_strided(w, w, w, swap, 1);
    }
  check_parts(0, 1);
  check_parts(1, 1);
  check_parts(7, 7);
  check_parts(H5G_MAX_PARTS + 5, H5G_MAX_PARTS);
  check_workers_kept();
  check_concurrent_calls();

  enum { SEGMENTS = 9 };
  static const size_t sizes[SEGMENTS] = {0, 3, 5u << 20, 1, 0, 12345677, 4096, 9u << 20, 7};
  size_t total = 0;
  for (int i = 0; i < SEGMENTS; i++) total += sizes[i];
  unsigned char *src = malloc(total), *got = malloc(total + 2 * SEGMENTS);
  unsigned char *want = malloc(total + 2 * SEGMENTS);
  EXPECT(src && got && want, "out of memory");
  if (!src || !got || !want) return test_summary("test_parallel");
  uint64_t state = 7;
  for (size_t i = 0; i < total; i++) src[i] = (unsigned char)test_rand(&state);
  for (int threads = 1; threads <= 17; threads += 4) {
    /* segments copied to places in reverse order, a guard byte between two */
    h5g_copy_segment segments[SEGMENTS];
    memset(got, 0xA5, total + 2 * SEGMENTS);
    memset(want, 0xA5, total + 2 * SEGMENTS);
    size_t from = 0, to = total + 2 * SEGMENTS;
    for (int i = 0; i < SEGMENTS; i++) {
      to -= sizes[i] + 2;
      segments[i] = (h5g_copy_segment){got + to + 1, src + from, sizes[i]};
      memcpy(want + to + 1, src + from, sizes[i]);
      from += sizes[i];
    }
    h5g_parallel_copy(segments, SEGMENTS, threads);
    EXPECT(memcmp(got, want, total + 2 * SEGMENTS) == 0, "%d threads: copies differ", threads);
  }
  h5g_parallel_copy(NULL, 0, 4); /* nothing to copy */
  free(src);
  free(got);
  free(want);
  return test_summary("test_parallel");
}
