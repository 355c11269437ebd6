/* Ping-pong between a key buffer (with its values) and scratch, shared by the CPU radix sort and
 * merge: each pass reads one buffer and writes the other; the result ends where the last pass
 * wrote, and is copied back when that is the scratch. */
#ifndef H5G_PINGPONG_H
#define H5G_PINGPONG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/keys.h" /* h5g_u128, the type of 16-byte keys */

/* Key width 1, 2, 4, 8, 16 -> index 0..4 of a table of typed instances (any other width takes
 * the 8-byte ones). */
static inline unsigned h5g_width_index(unsigned width) {
  return width == 1 ? 0 : width == 2 ? 1 : width == 4 ? 2 : width == 16 ? 4 : 3;
}

/* Swaps the roles of src and dst (and of their values) after a pass. */
#define H5G_PINGPONG_SWAP(T, src, dst, src_values, dst_values)                                    \
  do {                                                                                            \
    T *pingpong_keys_ = (src);                                                                    \
    (src) = (dst);                                                                                \
    (dst) = pingpong_keys_;                                                                       \
    uint64_t *pingpong_values_ = (src_values);                                                    \
    (src_values) = (dst_values);                                                                  \
    (dst_values) = pingpong_values_;                                                              \
  } while (0)

/* Leaves the result in keys/values: copies n elements back when the last pass wrote elsewhere.
 * `values` is NULL when only keys move. */
static inline void h5g_pingpong_finish(void *keys, const void *src, size_t key_bytes,
                                       uint64_t *values, const uint64_t *src_values, size_t n) {
  if (src == keys) return;
  memcpy(keys, src, n * key_bytes);
  if (values) memcpy(values, src_values, n * sizeof(uint64_t));
}

#endif
