/* Several keys sorted as one (docs/semantics.md, "Several keys"): the keys of a run (several
 * -d, the fields of a compound table, the columns of a 2-D dataset) read side by side and
 * composed into one unsigned key (base/compose.h) that the rest of the pipeline sorts, splits,
 * exchanges and merges as it would one key. Internal to src/. */
#ifndef H5G_SRC_KEYSET_H
#define H5G_SRC_KEYSET_H

#include <mpi.h>
#include <stdint.h>

#include "io/h5io.h"
#include "src/options.h"

/* Keys of up to 128 bits together are composed into one key (base/compose.h) and sorted once. Keys
 * of more are composed into several 128-bit words, word 0 holding the first keys: the pipeline
 * then sorts once per word, the last word first, each sort stable (src/passes.c). */
typedef struct {
  int count;                          /* keys, in priority order */
  int words;                          /* composed words: 1 unless the keys take over 16 bytes */
  h5g_dataset_info key[H5G_MAX_KEYS]; /* each key's type and rows */
  int word[H5G_MAX_KEYS];             /* the word that holds each key */
  unsigned shift[H5G_MAX_KEYS];       /* where each key's bits start in its word */
} h5g_key_layout;

/* Serial (rank 0): every key of `opt` in `file`, of the same length; `composed` describes the
 * key one word of them makes (unsigned, 1-16 bytes; 16 when there are several words). Usage
 * error otherwise. */
int h5g_keyset_inspect(const h5g_options *opt, const char *file, h5g_key_layout *layout,
                       h5g_dataset_info *composed);

/* 1 when the keys move by source index (records): when a key is a float (equal composed keys
 * may differ in their bits: -0.0 and +0.0, NaNs; the sort is then stable and a float key of
 * several -d is fetched by source index, as its composed bits are numpy's equality, not its
 * bits), or when they take several words (each pass sorts the order of the pass before, and
 * every key of several -d is fetched by source index). */
int h5g_keyset_by_index(const h5g_key_layout *layout);
/* 1 when key i of several -d is written by fetching its rows by source index (src/carry.c),
 * 0 when it is taken out of the sorted composed keys (src/write.c). */
int h5g_keyset_fetched(const h5g_key_layout *layout, int i);

/* Collective: opens the datasets holding the keys in `f`, d[0..count). --key-column: d[0] only,
 * the 2-D dataset; --key-field: d[0] only, the table as raw rows, when every field's bytes are
 * its value (its rows are then read once, not once per field, and without conversion), else
 * one per field. `output`: the datasets as written to OUTPUT (the table or 2-D dataset at
 * --output-dataset). */
int h5g_keyset_open(MPI_Comm comm, const h5g_options *opt, h5g_file *f, int output, h5g_dset **d);
/* Collective: closes what h5g_keyset_open opened (NULLs skipped); an error if a close failed. */
int h5g_keyset_close(h5g_dset **d);

/* Collective: rows [row, row + rows) of the keys of word `word` composed into `composed` (rows
 * keys of `width` bytes, the composed key's), by up to `threads` threads. Each key, or a table's
 * (a 2-D dataset's) whole rows once for every key, is read into `scratch` (scratch_bytes,
 * resident; NULL: none) when it fits there, else into memory of its own: the rows read into
 * scratch stay there (src/read.h, h5g_read_keep_rows). */
int h5g_keyset_read(MPI_Comm comm, const h5g_options *opt, const h5g_key_layout *layout,
                    h5g_dset *const *d, int word, uint64_t row, uint64_t rows, unsigned width,
                    void *composed, int threads, void *scratch, size_t scratch_bytes);

#endif
