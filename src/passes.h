/* Keys of several composed words (src/passes.c): one sort per word, the last word first. Keeps
 * data.order (the source index at each position) between passes. */
#ifndef H5G_SRC_PASSES_H
#define H5G_SRC_PASSES_H

#include "src/run.h"

/* Collective: out[i] = key `word` of source row src_index[i], i < count (checksum: the sum of
 * the rank's own keys of `word` added, unless NULL). */
int h5g_passes_word_in_order(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, int word,
                             const uint64_t *src_index, uint64_t count, void *out,
                             uint64_t *checksum);
/* Collective, before the pass of `word`: the order of the pass before followed and `word`'s
 * keys fetched in it into the slice buffer, which becomes the sorted share again. */
int h5g_passes_next(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                    const h5g_extent *extent, h5g_data *d, int word);
/* Collective, after the last pass: the sorted values become source indices. */
int h5g_passes_finish(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *extent, h5g_data *d);

#endif
