/* Verification of a sorted dataset spread over ranks: order within and across ranks, count, and
 * the order-independent checksum of the key bits. Used by --verify and by --check. */
#ifndef H5G_VERIFY_H
#define H5G_VERIFY_H

#include <mpi.h>
#include <stdint.h>

#include "base/keys.h"
#include "src/options.h" /* H5G_MAX_KEYS */

typedef struct {
  uint64_t n;            /* keys over all ranks */
  uint64_t out_of_order; /* adjacent pairs out of order, within and across ranks */
  uint64_t first_bad;    /* global index of the first key out of order; UINT64_MAX if none */
  uint64_t checksum;     /* h5g_keys_checksum of all raw keys, summed over ranks */
} h5g_verify_result;

/* Collective. `keys` is this rank's consecutive share starting at global index `offset`, in host
 * byte order; it is transformed to ordered bits in place. Keys of several composed words
 * (src/keyset.h, `words` > 1): keys[0..words), each n unsigned keys of ks->width bytes, compared
 * word 0 first; the checksum is the sum of the words'. `strict`: equal neighbours count as out
 * of order too (--unique). */
int h5g_verify_share(MPI_Comm comm, void *const *keys, int words, uint64_t n, uint64_t offset,
                     const h5g_keyspec *ks, int strict, h5g_verify_result *res);

/* The same checks made on the share piece by piece, so that it need not be held whole: begin,
 * then h5g_verify_piece for each consecutive piece of the share in order, then (collective)
 * h5g_verify_end, whose result is h5g_verify_share's on the whole share. */
typedef struct {
  const h5g_keyspec *ks;
  int words, strict, threads;
  uint64_t offset; /* global index of the share's first key */
  uint64_t n, out_of_order, first_bad, checksum; /* of the keys checked so far (local) */
  /* ordered bits of the share's first key and of the last key checked, word by word: the pair
   * across each piece's start, and the ranks' edges */
  h5g_u128 first[H5G_MAX_KEYS], last[H5G_MAX_KEYS];
} h5g_verify_state;

void h5g_verify_begin(h5g_verify_state *s, int words, uint64_t offset, const h5g_keyspec *ks,
                      int strict, int threads);
/* The next n keys of the share (keys[0..words) as in h5g_verify_share, transformed in place),
 * checked by up to s->threads threads. */
void h5g_verify_piece(h5g_verify_state *s, void *const *keys, uint64_t n);
int h5g_verify_end(MPI_Comm comm, const h5g_verify_state *s, h5g_verify_result *res);

/* Collective: h5g_keys_checksum summed over ranks. */
int h5g_checksum_share(MPI_Comm comm, const void *keys, uint64_t n, unsigned width,
                       uint64_t *checksum);

#endif
