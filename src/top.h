/* --top K (src/top.c): the exact cut at global rank K. Cuts the extent. */
#ifndef H5G_SRC_TOP_H
#define H5G_SRC_TOP_H

#include "src/run.h"

/* The rows rank `rank` of `size` receives (its share of K; 0 without --top), which may be more
 * than its share of N (N = 3, K = 2 on 5 ranks: rank 2 holds none and receives one). */
uint64_t h5g_top_rows(const h5g_options *opt, const h5g_verdict *v, int size, int rank);
/* Collective, several ranks: the data's cuts at k*K/P; the extent becomes this rank's share of
 * the first K. */
int h5g_top_cuts(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                 const h5g_data *d, h5g_extent *extent);
/* After the merge (and --unique): the extent keeps the first K of what is written. */
int h5g_top_keep(const h5g_run *r, h5g_extent *extent);

#endif
