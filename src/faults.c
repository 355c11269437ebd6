/* Test hooks for tests/faults, so tests can prove that a failing run never costs data:
 * H5GSORT_TEST_KILL=<point>[:<rank>] sends SIGKILL to that rank (every rank when none is named)
 * on reaching <point>, a phase name, "write-create" (the temporary output about to be made) or
 * "write-data" (output created, data not yet written) or "carry-moved" (a batch of carried
 * datasets read and moved, not yet written: the carry's progress half counted), "runs-kept" (a
 * spilling run's sorted runs recorded before their merge), "run-sorted" (a spilling run's runs
 * sorted so far recorded, each time) or "merge-half" (half the chunks of a host merge done);
 * H5GSORT_TEST_SLEEP=<point>:<seconds> stops every rank there a while, so a test can change the
 * file system under a running job (each rank says so on stderr first: a test can wait for it). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/run.h"

/* True when the test-hook variable `name` names `point` ("<point>" or "<point>:<arg>"); *arg is
 * then the text after the colon ("" without one). */
static int hook_names(const char *name, const char *point, const char **arg) {
  const char *spec = getenv(name);
  size_t len = strlen(point);
  if (!spec || strncmp(spec, point, len) != 0 || (spec[len] != '\0' && spec[len] != ':')) return 0;
  *arg = spec[len] ? spec + len + 1 : "";
  return 1;
}

void h5g_fault_point(const h5g_run *r, const char *point) {
  const char *arg;
  if (hook_names("H5GSORT_TEST_SLEEP", point, &arg)) {
    fprintf(stderr, "h5gsort: test hook: rank %d sleeps %d s at %s\n", r->rank, atoi(arg), point);
    sleep((unsigned)atoi(arg));
  }
  if (hook_names("H5GSORT_TEST_KILL", point, &arg) && (!arg[0] || atoi(arg) == r->rank))
    raise(SIGKILL);
}
