/* CPU merge of sorted runs of unsigned keys. */
#ifndef H5G_MERGE_H
#define H5G_MERGE_H

#include <stddef.h>
#include <stdint.h>

/* keys[run_offsets[i] .. run_offsets[i+1]) is sorted ascending for i < nruns
 * (run_offsets has nruns + 1 entries, run_offsets[nruns] == n). Merges them so that keys[0..n)
 * is sorted; `scratch` holds n keys. With values == NULL keys only (scratch_values unused);
 * otherwise values[i] moves with keys[i], scratch_values holds n values, and the merge is
 * stable: of equal keys, those of the earlier run come first, each run's in their order. */
void h5g_merge_runs(void *keys, uint64_t *values, void *scratch, uint64_t *scratch_values,
                    size_t n, unsigned width, const uint64_t *run_offsets, size_t nruns);

#endif
