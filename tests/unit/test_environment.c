/* src/environment.c, the environment's writers h5gsort puts in place of the C library's: what
 * setenv, unsetenv, putenv and clearenv do (as POSIX and glibc have them), and that getenv in
 * other threads, the C library's own, finds every variable no writer touches, with its value,
 * while one thread adds, replaces and removes thousands of others (glibc 2.36's writers free the
 * array such a reader walks, and shift entries under it). Linked with src/environment.c and
 * exported as h5gsort is (src/CMakeLists.txt), so its writers are the ones a library's call
 * finds. */
#define _GNU_SOURCE
#include "tests/support/check.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

#ifdef __GLIBC__
/* src/environment.c allocates with the C library's own allocator; these definitions, this
 * program's, come first and can fail it on demand, passing on to the C library's otherwise. */
static int fail_allocations;
void *__libc_malloc(size_t bytes);
void *__libc_calloc(size_t count, size_t bytes);
void *__libc_malloc(size_t bytes) {
  static void *(*next)(size_t);
  if (!next) *(void **)&next = dlsym(RTLD_NEXT, "__libc_malloc");
  return fail_allocations || !next ? NULL : next(bytes);
}
void *__libc_calloc(size_t count, size_t bytes) {
  static void *(*next)(size_t, size_t);
  if (!next) *(void **)&next = dlsym(RTLD_NEXT, "__libc_calloc");
  return fail_allocations || !next ? NULL : next(count, bytes);
}

#endif

static int count_named(const char *name) {
  size_t len = strlen(name);
  int n = 0;
  for (char **e = environ; e && *e; e++) n += strncmp(*e, name, len) == 0 && (*e)[len] == '=';
  return n;
}

static void check_semantics(void) {
  EXPECT(setenv("H5G_ENV_A", "one", 0) == 0 && strcmp(getenv("H5G_ENV_A"), "one") == 0, "added");
  EXPECT(setenv("H5G_ENV_A", "two", 0) == 0 && strcmp(getenv("H5G_ENV_A"), "one") == 0,
         "kept without overwrite");
  EXPECT(setenv("H5G_ENV_A", "three", 1) == 0 && strcmp(getenv("H5G_ENV_A"), "three") == 0,
         "overwritten");
  EXPECT(count_named("H5G_ENV_A") == 1, "one entry, %d found", count_named("H5G_ENV_A"));
  EXPECT(setenv("H5G_ENV_EMPTY", "", 1) == 0 && strcmp(getenv("H5G_ENV_EMPTY"), "") == 0,
         "an empty value");
  errno = 0;
  EXPECT(setenv("", "x", 1) == -1 && errno == EINVAL, "empty name refused");
  errno = 0;
  EXPECT(setenv("H5G=X", "x", 1) == -1 && errno == EINVAL, "a name with '=' refused");
  errno = 0;
  EXPECT(unsetenv("A=B") == -1 && errno == EINVAL, "unsetenv: a name with '=' refused");
  EXPECT(getenv("H5G_ENV_A") && !getenv("H5G_ENV_A_LONGER") && !getenv("H5G_ENV"),
         "names match whole");

  static char put[] = "H5G_ENV_PUT=first";
  EXPECT(putenv(put) == 0 && strcmp(getenv("H5G_ENV_PUT"), "first") == 0, "putenv added");
  memcpy(put + strlen("H5G_ENV_PUT="), "later", 6); /* the string itself is the entry */
  EXPECT(strcmp(getenv("H5G_ENV_PUT"), "later") == 0, "putenv's string is the entry");
  static char put_again[] = "H5G_ENV_PUT=again";
  EXPECT(putenv(put_again) == 0 && strcmp(getenv("H5G_ENV_PUT"), "again") == 0 &&
             count_named("H5G_ENV_PUT") == 1,
         "putenv replaced");
  static char bare[] = "H5G_ENV_PUT";
  EXPECT(putenv(bare) == 0 && !getenv("H5G_ENV_PUT"), "putenv without '=' unsets");

  EXPECT(unsetenv("H5G_ENV_A") == 0 && !getenv("H5G_ENV_A") && count_named("H5G_ENV_A") == 0,
         "unset");
  EXPECT(unsetenv("H5G_ENV_NEVER_SET") == 0, "unsetting an absent variable");
  EXPECT(getenv("H5G_ENV_EMPTY") != NULL, "the others kept");
}

#ifdef __GLIBC__
/* Out of memory: setenv fails with ENOMEM and changes nothing (putenv needs no allocation while
 * the array has room); unsetenv still unsets
 * (in place), every other variable kept, and what is set later lands whole after it. */
static void check_out_of_memory(void) {
  setenv("H5G_OOM_A", "a", 1);
  setenv("H5G_OOM_B", "b", 1);
  setenv("H5G_OOM_C", "c", 1);
  int before = 0;
  for (char **e = environ; *e; e++) before++;
  fail_allocations = 1;
  errno = 0;
  EXPECT(setenv("H5G_OOM_NEW", "x", 1) == -1 && errno == ENOMEM && !getenv("H5G_OOM_NEW"),
         "setenv out of memory: ENOMEM, nothing set");
  errno = 0;
  EXPECT(setenv("H5G_OOM_A", "x", 1) == -1 && errno == ENOMEM &&
             strcmp(getenv("H5G_OOM_A"), "a") == 0,
         "setenv out of memory: the old value kept");
  EXPECT(unsetenv("H5G_OOM_B") == 0 && !getenv("H5G_OOM_B"), "unsetenv out of memory: unset");
  fail_allocations = 0;
  int after = 0;
  for (char **e = environ; *e; e++) after++;
  EXPECT(after == before - 1, "%d variables after one unset of %d", after, before);
  EXPECT(strcmp(getenv("H5G_OOM_A"), "a") == 0 && strcmp(getenv("H5G_OOM_C"), "c") == 0,
         "the others kept");
  EXPECT(setenv("H5G_OOM_D", "d", 1) == 0 && strcmp(getenv("H5G_OOM_D"), "d") == 0 &&
             environ[after + 1] == NULL && count_named("H5G_OOM_C") == 1,
         "an entry added after the unset: the array ends right after it");
}
#endif

enum { STEADY = 16, READERS = 3, WRITES = 100000, CHURN = 700, CHURN_BEFORE = 50 };
static volatile int writing = 1;
static char steady_names[STEADY][32], steady_values[STEADY][32];

/* Looks up every steady variable until the writer is done; returns the lookups that failed. */
static void *read_steady(void *arg) {
  (void)arg;
  long wrong = 0, lookups = 0;
  while (__atomic_load_n(&writing, __ATOMIC_ACQUIRE) || lookups < 1000) {
    for (int i = 0; i < STEADY; i++, lookups++) {
      const char *value = getenv(steady_names[i]);
      wrong += !value || strcmp(value, steady_values[i]) != 0;
    }
  }
  return (void *)wrong;
}

/* Adds, replaces and removes other variables, in every way the writers have. */
static void write_others(void) {
  char name[48], value[48];
  for (int w = 0; w < WRITES; w++) {
    snprintf(name, sizeof name, "H5G_ENV_CHURN_%d", w % CHURN);
    snprintf(value, sizeof value, "%d", w);
    switch (w / CHURN % 5) { /* each variable in turn set, unset, put, ... */
    case 0:
    case 1: setenv(name, value, 1); break;
    case 2: unsetenv(name); break;
    case 3: { /* putenv keeps the string: static, not a leak to a leak checker */
      static char entries[WRITES / 5 + 1][sizeof name + sizeof value];
      static int used;
      snprintf(entries[used], sizeof entries[used], "%s=%s", name, value);
      putenv(entries[used++]);
      break;
    }
    default: setenv(name, value, 0); break;
    }
  }
}

static void check_readers_during_writes(void) {
  /* some of the churn's variables first, so that removing them moves the steady ones in an
   * array changed in place */
  for (int i = 0; i < CHURN_BEFORE; i++) {
    char name[48];
    snprintf(name, sizeof name, "H5G_ENV_CHURN_%d", i);
    setenv(name, "0", 1);
  }
  for (int i = 0; i < STEADY; i++) {
    snprintf(steady_names[i], sizeof steady_names[i], "H5G_ENV_STEADY_%d", i);
    snprintf(steady_values[i], sizeof steady_values[i], "value-%d", i * 7919);
    setenv(steady_names[i], steady_values[i], 1);
  }
  pthread_t readers[READERS];
  int started = 0;
  for (; started < READERS; started++)
    if (pthread_create(&readers[started], NULL, read_steady, NULL) != 0) break;
  EXPECT(started == READERS, "%d of %d reader threads started", started, READERS);
  write_others();
  __atomic_store_n(&writing, 0, __ATOMIC_RELEASE);
  for (int t = 0; t < started; t++) {
    void *wrong = NULL;
    pthread_join(readers[t], &wrong);
    EXPECT(wrong == NULL, "reader %d: %ld lookups of untouched variables failed", t, (long)wrong);
  }
  for (int i = 0; i < CHURN; i++) {
    char name[48];
    snprintf(name, sizeof name, "H5G_ENV_CHURN_%d", i);
    EXPECT(count_named(name) <= 1, "%s: %d entries", name, count_named(name));
  }
}

/* A library's call finds the first definition in the process's lookup order: this program's
 * exported one, not the C library's. */
static void check_exported(void) {
  EXPECT(dlsym(RTLD_DEFAULT, "setenv") == (void *)setenv, "setenv not exported");
  EXPECT(dlsym(RTLD_DEFAULT, "unsetenv") == (void *)unsetenv, "unsetenv not exported");
  EXPECT(dlsym(RTLD_DEFAULT, "putenv") == (void *)putenv, "putenv not exported");
  EXPECT(dlsym(RTLD_DEFAULT, "clearenv") == (void *)clearenv, "clearenv not exported");
}

int main(void) {
  check_exported();
  check_semantics();
#ifdef __GLIBC__
  check_out_of_memory();
#endif
  check_readers_during_writes();
  EXPECT(clearenv() == 0 && environ && !environ[0] && !getenv("H5G_ENV_STEADY_0"),
         "clearenv: an empty environment");
  EXPECT(setenv("H5G_ENV_AFTER", "1", 1) == 0 && strcmp(getenv("H5G_ENV_AFTER"), "1") == 0 &&
             environ[1] == NULL,
         "set after clearenv");
  return test_summary("test_environment");
}
