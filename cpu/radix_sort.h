/* CPU LSD radix sort of unsigned keys (the CPU backend's local sort). */
#ifndef H5G_RADIX_SORT_H
#define H5G_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts n unsigned keys of `width` bytes (1, 2, 4, 8) ascending; `scratch` holds n keys and the
 * result is in `keys`. With values == NULL keys only (scratch_values unused); otherwise values[i]
 * moves with keys[i], scratch_values holds n values, and the sort is stable (equal keys keep
 * their order), which is what makes record sorts deterministic. Digit passes whose digit is
 * equal for every key are skipped. */
void h5g_radix_sort(void *keys, uint64_t *values, void *scratch, uint64_t *scratch_values,
                    size_t n, unsigned width);

#endif
