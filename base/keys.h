/* Key types and the order-preserving transform to unsigned "ordered bits".
 *
 * After h5g_keys_to_ordered, comparing keys as unsigned integers of `width` bytes gives the
 * requested order: numpy.sort's order (-inf < ... < -0.0 < +0.0 < ... < +inf < NaN, every NaN
 * last whatever its sign) or, with `descending`, its exact reverse (NaN first). `na` moves the
 * NaNs to the other end (--na-position, pandas' na_position), their order among themselves kept.
 * The map is a bijection on bit patterns, so NaN payloads and -0.0 survive the round trip. Keys
 * are in host byte order. */
#ifndef H5G_KEYS_H
#define H5G_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { H5G_KEY_UNSIGNED = 0, H5G_KEY_SIGNED = 1, H5G_KEY_FLOAT = 2 } h5g_key_class;

/* Where NaNs go (--na-position): numpy's place by default (ascending: last; descending: first),
 * so that a zeroed spec keeps numpy's order. Integer keys have no NaN: every value is the same. */
typedef enum { H5G_NA_DEFAULT = 0, H5G_NA_FIRST = 1, H5G_NA_LAST = 2 } h5g_na_position;

typedef struct {
  h5g_key_class cls;
  unsigned width; /* bytes: 1, 2, 4, 8 or 16 (floats: 4 or 8; 16: composed keys, base/compose.h) */
  int descending;
  h5g_na_position na;
} h5g_keyspec;

/* 1 when a float key's NaNs go below -inf in the ascending ordered bits that `descending` then
 * complements: NaN first ascending, NaN last descending (numpy's places are the other ones). */
static inline int h5g_keyspec_nan_low(const h5g_keyspec *ks) {
  return ks->na == (ks->descending ? H5G_NA_LAST : H5G_NA_FIRST);
}

void h5g_keys_to_ordered(void *keys, size_t n, const h5g_keyspec *ks);
void h5g_keys_from_ordered(void *keys, size_t n, const h5g_keyspec *ks);

/* Keys of 16 bytes (several keys composed into one, base/compose.h) are GCC's and nvcc's 128-bit
 * unsigned integer; every key value of any width fits one. */
__extension__ typedef unsigned __int128 h5g_u128;

/* Key i of an array of `width`-byte unsigned keys, widened to 128 bits. A 16-byte key is copied
 * out, so the array (an MPI buffer of uint64 words, say) need not be 16-byte aligned. */
static inline h5g_u128 h5g_key_load(const void *keys, size_t i, unsigned width) {
  h5g_u128 wide;
  switch (width) {
  case 1: return ((const uint8_t *)keys)[i];
  case 2: return ((const uint16_t *)keys)[i];
  case 4: return ((const uint32_t *)keys)[i];
  case 8: return ((const uint64_t *)keys)[i];
  default: memcpy(&wide, (const char *)keys + i * sizeof wide, sizeof wide); return wide;
  }
}

/* uint64 words that hold one key of `width` bytes in an MPI message (a key's bytes copied in). */
static inline size_t h5g_key_slots(unsigned width) { return (width + 7) / 8; }

/* Order-independent checksum of the raw key bits (a sum of mixed 64-bit hashes, mod 2^64):
 * equal for any permutation of the same multiset of bit patterns. */
uint64_t h5g_keys_checksum(const void *keys, size_t n, unsigned width);
/* The same with up to `threads` threads (the caller's one of them). */
uint64_t h5g_keys_checksum_parallel(const void *keys, size_t n, unsigned width, int threads);

/* Adjacent pairs (i - 1, i) of an array of ordered bits out of order: keys[i - 1] > keys[i]
 * (>= with `strict`); *first: the first such i (n when none). */
size_t h5g_keys_out_of_order(const void *keys, size_t n, unsigned width, int strict,
                             size_t *first);

/* Number of keys < x (lower) and <= x (upper) in an ascending array of ordered bits. */
size_t h5g_keys_lower_bound(const void *keys, size_t n, unsigned width, h5g_u128 x);
size_t h5g_keys_upper_bound(const void *keys, size_t n, unsigned width, h5g_u128 x);

#ifdef __cplusplus
}
#endif
#endif
