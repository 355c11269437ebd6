/* Several keys sorted as one (README "Several keys"): the keys of a run (several -d, the fields
 * of a compound table, the columns of a 2-D dataset) read side by side and composed into one
 * unsigned key (base/compose.h) that the rest of the pipeline sorts, splits, exchanges and merges
 * as it would one key. Internal to src/. */
#ifndef H5G_SRC_KEYSET_H
#define H5G_SRC_KEYSET_H

#include <mpi.h>
#include <stdint.h>

#include "io/h5io.h"
#include "src/options.h"

typedef struct {
  int count;                          /* keys, in priority order */
  h5g_dataset_info key[H5G_MAX_KEYS]; /* each key's type and rows */
  unsigned shift[H5G_MAX_KEYS];       /* where each key's bits start in the composed key */
} h5g_key_layout;

/* Serial (rank 0): every key of `opt` in `file`, of the same length, together at most 64 bits;
 * `composed` describes the key they make (unsigned, 1-8 bytes). Usage error otherwise. */
int h5g_keyset_inspect(const h5g_options *opt, const char *file, h5g_key_layout *layout,
                       h5g_dataset_info *composed);

/* 1 when a key is a float: the composed keys are then sorted stably (equal composed keys may
 * differ in their bits: -0.0 and +0.0, NaNs), and a float key of several -d is written by
 * fetching its rows by source index (its composed bits are numpy's equality, not its bits). */
int h5g_keyset_any_float(const h5g_key_layout *layout);

/* Collective: opens the datasets holding the keys in `f`, d[0..count). --key-column: d[0] only,
 * the 2-D dataset; --key-field: d[0] only, the table as raw rows, when every field's bytes are
 * its value (its rows are then read once, not once per field, and without conversion), else
 * one per field. `output`: the datasets as written to OUTPUT (the table or 2-D dataset at
 * --output-dataset). */
int h5g_keyset_open(MPI_Comm comm, const h5g_options *opt, h5g_file *f, int output, h5g_dset **d);
/* Collective: closes what h5g_keyset_open opened (NULLs skipped); an error if a close failed. */
int h5g_keyset_close(h5g_dset **d);

/* Collective: rows [row, row + rows) of every key composed into `composed` (rows keys of
 * `width` bytes, the composed key's), by up to `threads` threads. Each key is read into
 * `scratch` (scratch_bytes, resident; NULL: none) when it fits there, else into memory of its
 * own. */
int h5g_keyset_read(MPI_Comm comm, const h5g_options *opt, const h5g_key_layout *layout,
                    h5g_dset *const *d, uint64_t row, uint64_t rows, unsigned width,
                    void *composed, int threads, void *scratch, size_t scratch_bytes);

#endif
