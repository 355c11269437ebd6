/* The environment's writers of the h5gsort process: setenv, unsetenv, putenv and clearenv,
 * defined here and exported (src/environment.syms), so that every library's call reaches them
 * instead of the C library's. glibc before 2.41 grows the environment array with realloc, which
 * frees the array that getenv in another thread may be walking, and unsets a variable by shifting
 * the entries behind it, so that such a getenv can miss one it never changed. h5gsort's GPU context
 * is made in a thread while MPI_Init changes the environment (src/main.c), and the CUDA driver
 * reads it there. As in glibc 2.41 ("stdlib: Make getenv thread-safe in more cases"), no array or
 * string that was in the environment is ever freed and an entry is added into room already ended
 * by NULLs; unlike it, a variable is unset by publishing a new array without it (glibc 2.41
 * deletes in place and its getenv retries, which the getenv of glibc 2.36-2.39 does not). So the
 * C library's own getenv, unchanged, always walks an array that stays whole and holds every
 * variable no writer touched. The writers hold one lock among themselves. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* The C library's own allocator (glibc exports it), as its setenv uses: blocks that live as long
 * as the process, outside the allocator a tool puts in place, so that a leak checker does not
 * count the arrays left behind and tests/faults' allocation shim counts only h5gsort's own
 * allocations, not the environment's that MPI_Init makes through these writers. */
#ifdef __GLIBC__
extern void *__libc_malloc(size_t bytes);
extern void *__libc_calloc(size_t count, size_t bytes);
#define ENV_MALLOC __libc_malloc
#define ENV_CALLOC __libc_calloc
#else
#define ENV_MALLOC malloc
#define ENV_CALLOC calloc
#endif

static pthread_mutex_t writers = PTHREAD_MUTEX_INITIALIZER;
/* The array these writers made last, and its room: entries are added into it while it lasts
 * (glibc 2.41's doubling), so the arrays left behind add up to about twice the largest. */
static char **owned;
static size_t room;
static char *empty[1];

/* A new array with room for `n` entries and more, all NULL, made the writers' own. */
static char **fresh_array(size_t n) {
  size_t more = 2 * (n + 2) < 64 ? 64 : 2 * (n + 2);
  char **env = ENV_CALLOC(more, sizeof *env);
  if (env) {
    owned = env;
    room = more;
  }
  return env;
}

static size_t entries(char **env) {
  size_t n = 0;
  while (env && env[n]) n++;
  return n;
}

/* Whether `entry` ("NAME=value") is the variable of the `len` bytes at `name`. */
static int names(const char *entry, const char *name, size_t len) {
  return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static int valid_name(const char *name) {
  return name && *name && !strchr(name, '=');
}

/* The slot of variable `name` (the `len` bytes at it) in `env`, or NULL. */
static char **slot_of(char **env, const char *name, size_t len) {
  for (; env && *env; env++)
    if (names(*env, name, len)) return env;
  return NULL;
}

/* The environment with `entry` put in place of variable `name` (the `len` bytes at it), or
 * added: a reader sees the old pointer or the new one, and an added entry appears whole, in
 * room already ended by NULLs, or in a new array published once it is whole. */
static int publish_with(const char *name, size_t len, char *entry) {
  char **env = environ, **slot = slot_of(env, name, len);
  if (slot) {
    __atomic_store_n(slot, entry, __ATOMIC_RELEASE);
    return 0;
  }
  size_t n = entries(env);
  if (env != owned || n + 2 > room) {
    char **grown = fresh_array(n);
    if (!grown) return -1;
    if (n) memcpy(grown, env, n * sizeof *grown);
    __atomic_store_n(&environ, grown, __ATOMIC_RELEASE);
    env = grown;
  }
  __atomic_store_n(&env[n], entry, __ATOMIC_RELEASE); /* env[n + 1] is NULL already */
  return 0;
}

int setenv(const char *name, const char *value, int overwrite) {
  if (!valid_name(name)) {
    errno = EINVAL;
    return -1;
  }
  size_t len = strlen(name), value_len = strlen(value);
  int rc = 0;
  pthread_mutex_lock(&writers);
  if (overwrite || !slot_of(environ, name, len)) {
    char *entry = ENV_MALLOC(len + value_len + 2); /* never freed: a getenv may hold it */
    if (entry) {
      memcpy(entry, name, len);
      entry[len] = '=';
      memcpy(entry + len + 1, value, value_len + 1);
    }
    rc = entry ? publish_with(name, len, entry) : -1;
    if (rc != 0) errno = ENOMEM;
  }
  pthread_mutex_unlock(&writers);
  return rc;
}

int putenv(char *string) {
  const char *eq = strchr(string, '=');
  if (!eq) return unsetenv(string); /* glibc's way with no '=' */
  pthread_mutex_lock(&writers);
  int rc = publish_with(string, (size_t)(eq - string), string);
  pthread_mutex_unlock(&writers);
  if (rc != 0) errno = ENOMEM;
  return rc;
}

int unsetenv(const char *name) {
  if (!valid_name(name)) {
    errno = EINVAL;
    return -1;
  }
  size_t len = strlen(name);
  pthread_mutex_lock(&writers);
  if (slot_of(environ, name, len)) {
    char **old = environ;
    size_t n = entries(old), kept = 0;
    char **env = fresh_array(n);
    /* out of memory: glibc's way, the entries behind moved down in place (a getenv meanwhile
     * may miss one of them), so that unsetting, like glibc's, cannot fail */
    char **to = env ? env : old;
    for (size_t i = 0; i < n; i++)
      if (!names(old[i], name, len)) __atomic_store_n(&to[kept++], old[i], __ATOMIC_RELEASE);
    for (size_t i = kept; i < n; i++) /* in place: what was behind the end goes too */
      __atomic_store_n(&to[i], NULL, __ATOMIC_RELEASE);
    if (env) __atomic_store_n(&environ, env, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&writers);
  return 0;
}

int clearenv(void) {
  pthread_mutex_lock(&writers);
  /* an empty array, not glibc's NULL: glibc's getenv reads environ twice, NULL-checked once */
  __atomic_store_n(&environ, empty, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&writers);
  return 0;
}
