/* Phase "carry" (src/carry.c): every carried dataset, and with --key-field the compound table
 * itself, permuted by the sorted values (source indices) into OUTPUT. Changes no shared state. */
#ifndef H5G_SRC_CARRY_H
#define H5G_SRC_CARRY_H

#include "src/run.h"

int h5g_carry_all(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                  const h5g_extent *extent, const h5g_data *d);

#endif
