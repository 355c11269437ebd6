/* Phase "carry" (src/carry.c): every carried dataset, and with --key-field the compound table
 * itself, permuted by the sorted values (source indices) into OUTPUT. Changes no shared state. */
#ifndef H5G_SRC_CARRY_H
#define H5G_SRC_CARRY_H

#include "src/run.h"

/* Carried datasets (--carry) move in batches: consecutive ones whose rows together take at most
 * H5G_CARRY_BATCH_BYTES are interleaved into one row, so that a row moved by source index costs
 * one random access for all of them, not one each (bench/RESULTS.md, "Carried columns and
 * tables"). Returns how many datasets (rows of row_bytes[0..count)) the batch from `first`
 * takes. */
enum { H5G_CARRY_BATCH_BYTES = 64 };
int h5g_carry_batch(const uint64_t *row_bytes, int count, int first);

/* The bytes of one row of everything the carry moves by source index: the carried datasets,
 * the keys of several -d fetched by source index, or the table (--key-field, --key-column). */
uint64_t h5g_carry_row_bytes(const h5g_options *opt, const h5g_verdict *v);
/* The bytes of one of the carry's two buffers of rows on a rank that reads n rows of `size`
 * ranks: the widest row moved, for the most rows it reads or writes (its output share is at most
 * the largest share). What the memory check counts, and what the read makes for the table's
 * rows it keeps (src/read.c); the carry makes each for the rows it has. */
uint64_t h5g_carry_buffer_bytes(const h5g_verdict *v, uint64_t n, int size);
/* Whole rows (--key-field, --key-column) whose keys were read from the file's bytes of one
 * dataset, keys_in[0]: the table's rows may be read directly, or kept from that read. */
int h5g_carry_rows_are_keys(const h5g_options *opt, h5g_dset *const *keys_in);

/* The carry is planned to put its rows in order on the GPU, where the keys' sort leaves their
 * source indices and the host's are the same: one rank whose slice the GPU sorts into the output
 * (plan.sort_is_output), all rows kept (no --top or --unique), in one pass (not keys of several
 * words, src/passes.c), with pinned buffers (not spilling). It does where the rows then fit the
 * GPU's budget beside the sorted run. */
int h5g_carry_gpu_planned(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan);

int h5g_carry_all(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                  const h5g_extent *extent, const h5g_data *d);

#endif
