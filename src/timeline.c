#include "src/timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/h5io.h"

/* Out of core the read and the sort take turns run by run: past MARKS - KEPT marks the phases
 * left are one "phase:more" span, and KEPT slots stay for the marks after them. */
enum { MARKS = 256, KEPT = 16, LINE = 48 };

static struct {
  const char *prefix, *name;
  struct timespec at;
} marks[MARKS];
static int count, last_phase = -1;

static void put(const char *prefix, const char *name) {
  clock_gettime(CLOCK_REALTIME, &marks[count].at);
  marks[count].prefix = prefix;
  marks[count++].name = name;
}

void h5g_timeline_mark(const char *name) {
  if (count < MARKS) put("", name);
}

void h5g_timeline_phase(int phase, const char *name) {
  if (phase == last_phase) return;
  last_phase = phase;
  if (count < MARKS - KEPT) put("phase:", name);
  else if (count == MARKS - KEPT) put("phase:", "more");
}

void h5g_timeline_write(const char *input, const char *output) {
  const char *path = getenv("H5GSORT_TIMELINE");
  if (!path || !path[0]) return;
  if ((input && h5g_files_same(path, input)) || (output && h5g_files_same(path, output))) {
    fprintf(stderr, "h5gsort: warning: H5GSORT_TIMELINE names INPUT or OUTPUT: not written (%s)\n",
            path);
    return;
  }
  char text[MARKS * LINE];
  size_t used = 0;
  for (int i = 0; i < count; i++)
    used += (size_t)snprintf(text + used, sizeof text - used, "%s%s %lld.%09ld\n",
                             marks[i].prefix, marks[i].name, (long long)marks[i].at.tv_sec,
                             marks[i].at.tv_nsec);
  /* one append, so that runs sharing FILE (a benchmark's repeats) never interleave lines */
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ssize_t wrote = fd < 0 ? -1 : write(fd, text, used);
  int err = errno;
  if (fd >= 0 && close(fd) != 0 && wrote == (ssize_t)used) {
    err = errno;
    wrote = -1;
  }
  if (wrote != (ssize_t)used)
    fprintf(stderr, "h5gsort: warning: cannot write the timeline: %s (%s)\n",
            wrote < 0 ? strerror(err) : "short write", path);
}
