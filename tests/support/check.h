/* The check helpers of every test and benchmark, C and C++/CUDA alike:
 *   EXPECT(cond, fmt, ...)  one check; a failure prints file:line, the condition and the message
 *                           and the test goes on (the first 25 failures are printed in full);
 *   MUST_OK(call)           an h5g call (base/error.h status) the test cannot go on without;
 *   test_summary(name)      prints the totals; returns the exit status (0: every check passed);
 *   test_rand(&state)       splitmix64: small, seedable, good enough for test data.
 * MPI programs end with test_summary_mpi (check_mpi.h), CUDA programs add check_cuda.h. */
#ifndef H5G_TESTS_SUPPORT_CHECK_H
#define H5G_TESTS_SUPPORT_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/mix.h"

static long test_checks, test_failures;

#define EXPECT(cond, ...)                                                                         \
  do {                                                                                            \
    test_checks++;                                                                                \
    if (!(cond)) {                                                                                \
      if (++test_failures <= 25) {                                                                \
        fprintf(stderr, "%s:%d: FAILED (%s): ", __FILE__, __LINE__, #cond);                      \
        fprintf(stderr, __VA_ARGS__);                                                             \
        fputc('\n', stderr);                                                                      \
      }                                                                                           \
    }                                                                                             \
  } while (0)

/* Stops the program: what follows would only report the same failure again. */
#define MUST_OK(call)                                                                             \
  do {                                                                                            \
    int must_status_ = (call);                                                                    \
    if (must_status_ != H5G_OK) {                                                                 \
      fprintf(stderr, "FATAL %s:%d: %s: status %d: %s\n", __FILE__, __LINE__, #call,              \
              must_status_, h5g_error_message());                                                 \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static inline int test_summary(const char *name) {
  printf("%s: %ld checks, %ld failed\n", name, test_checks, test_failures);
  return test_failures == 0 ? 0 : 1;
}

/* An HDF5 call (or any returning a negative value on failure) a test cannot go on without. */
#define MUST_H5(call)                                                                             \
  do {                                                                                            \
    if ((call) < 0) {                                                                             \
      fprintf(stderr, "FATAL %s:%d: %s failed\n", __FILE__, __LINE__, #call);                     \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

static inline uint64_t test_rand(uint64_t *state) {
  uint64_t z = *state;
  *state += H5G_GOLDEN_GAMMA;
  return h5g_mix64(z);
}

/* 128 random bits (16-byte keys): two draws. */
__extension__ static inline unsigned __int128 test_rand128(uint64_t *state) {
  unsigned __int128 high = test_rand(state);
  return high << 64 | test_rand(state);
}

#endif
