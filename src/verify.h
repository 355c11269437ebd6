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

/* Collective: h5g_keys_checksum summed over ranks. */
int h5g_checksum_share(MPI_Comm comm, const void *keys, uint64_t n, unsigned width,
                       uint64_t *checksum);

#endif
