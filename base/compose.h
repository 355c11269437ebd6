/* Several keys composed into one (docs/semantics.md, "Several keys"): each key's ordered bits
 * (base/keys.h), its direction applied, side by side in one unsigned key of up to 128 bits, the
 * first key in the highest bits. Comparing composed keys as unsigned integers is then comparing
 * the key tuples lexicographically, so one radix sort, one set of exact splitters and one merge
 * sort by all the keys at once.
 *
 * Equality is numpy's: in a composed key -0.0 is +0.0 and every NaN is one value (so equal tuples
 * keep their input order in a stable sort, as numpy.lexsort keeps them), first or last as the
 * key's spec says (base/keys.h, --na-position). A composed float is therefore not always its
 * key's exact bits; integers are. */
#ifndef H5G_COMPOSE_H
#define H5G_COMPOSE_H

#include <stddef.h>
#include <stdint.h>

#include "base/keys.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The widest composed key: 128 bits, sorted, split and merged as one key by both backends. */
#define H5G_COMPOSE_MAX_BYTES 16u

/* Bytes of a composed key for keys of `bytes` bytes together: 1, 2, 4, 8 or 16; 0 above 16. */
unsigned h5g_compose_width(unsigned bytes);

/* ORs key `part` (n keys of ks->width bytes, host order; transformed in place, so its contents
 * are lost) into composed[i] (n keys of `width` bytes) at bit `shift`. `composed` starts zeroed.
 * Up to `threads` threads share the rows (the caller's thread one of them). */
void h5g_compose_add(void *composed, unsigned width, void *part, size_t n, const h5g_keyspec *ks,
                     unsigned shift, int threads);

/* The inverse for one key: part[i] gets the key at bit `shift` of composed[i], in host order.
 * Exact for integer keys; for floats -0.0 comes back as +0.0 and a NaN as the smallest positive NaN. */
void h5g_compose_take(const void *composed, unsigned width, void *part, size_t n,
                      const h5g_keyspec *ks, unsigned shift, int threads);

#ifdef __cplusplus
}
#endif
#endif
