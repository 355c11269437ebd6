/* Phase "read" (src/read.c): this rank's slice, run by run, into the data's slice buffer (the
 * buffer's contents change, none of h5g_data's fields); on the device paths each run goes on to
 * the GPU as it is read (src/local_sort.h). Its cursors are its own. */
#ifndef H5G_SRC_READ_H
#define H5G_SRC_READ_H

#include "src/local_sort.h"
#include "src/run.h"

/* Collective: opens r->in_file. */
int h5g_read_open_file(h5g_run *r);
/* Collective: opens r->keys_in. */
int h5g_read_open_keys(h5g_run *r, const h5g_verdict *v);
/* Collective, after h5g_read_open_keys: where the keys are taken from a table's (or a 2-D
 * dataset's) rows as they are in the file, the bytes the carry would read again, the read keeps
 * the rows in d->table_rows, made here as big as the carry's buffer of rows as read (which the
 * memory check counts), and the carry moves them from there (src/carry.c; where it is planned
 * to move them on the GPU, the buffer is pinned in the background as the read goes). Not while
 * the run spills: that buffer is then a scratch file. */
int h5g_read_keep_rows(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, h5g_data *d);
/* Collective: every run of the slice read (from_file; else the keys of word `word` are in the
 * slice buffer already: a later pass of src/passes.c), but those `kept` (sorted already); on the
 * device paths each run goes to the GPU and its sort starts as soon as it is read and the slice
 * buffer is pinned (each sorted run then recorded: src/local_sort.h). Adds to the input checksum
 * (metrics) for --verify, and sets d->run_checksums as it goes. */
int h5g_read_runs(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, const h5g_data *d,
                  int word, int from_file, const h5g_sorted_runs *kept);
/* Collective: the input checksum summed over the ranks. */
int h5g_read_checksum(h5g_run *r);

#endif
