/* Phase "validate" (src/validate.c): rank 0 inspects the input, the output path and the carried
 * datasets; every rank then takes the verdict. Makes the verdict (const for every later phase)
 * and the extent's first value, the whole input. Bad input stops every rank here. */
#ifndef H5G_SRC_VALIDATE_H
#define H5G_SRC_VALIDATE_H

#include "src/run.h"

struct stat;
/* The input's size and modification time, as validated (src/write.c compares before the
 * commit). */
void h5g_input_stamp(const struct stat *st, h5g_verdict *v);
/* Rank 0 fills v (the other ranks get it from h5g_share_verdict). */
int h5g_validate(const h5g_run *r, h5g_verdict *v);
/* Collective: rank 0's verdict to every rank, and the extent it gives: every element sorted and
 * written, this rank's share [r*N/P, (r+1)*N/P) of them. */
int h5g_share_verdict(const h5g_run *r, h5g_verdict *v, h5g_extent *extent);

#endif
