/* Filtered outputs written by several ranks (internal to io/): every rank encodes the chunks that
 * lie wholly in its rows with its own threads (io/chunked.h), and after the collective close one
 * writer, rank 0, reopens the file on its own and stores every rank's encoded chunks with
 * H5Dwrite_chunk, in order; a chunk whose rows several ranks hold reaches it as raw rows and is
 * encoded there. HDF5 1.10 writes filtered data in parallel only collectively, each rank
 * filtering its chunks on one thread, many times slower than one rank's threads (issue 29;
 * bench/RESULTS.md, "Chunked datasets read and written by threads"). The chunks are the ones
 * HDF5 would write, byte for byte, since io/filters.h encodes as HDF5 does. */
#ifndef H5G_IO_GATHERED_H
#define H5G_IO_GATHERED_H

#include <mpi.h>
#include <stdint.h>

#include "io/chunked.h"

/* One file's kept chunks: one entry per dataset written this way, in the order the datasets
 * were first written (the same on every rank: every rank makes every transfer). */
typedef struct h5g_gathered h5g_gathered;

/* Local: rows [row, row + rows) of dataset `path` of the file (described by `src`, whose chunks
 * take at most H5G_GATHERED_CHUNK_MAX encoded bytes) are kept in *g (made on first use): whole
 * chunks encoded by `threads` threads, the rows of a chunk that other calls or ranks share kept
 * raw. `each` is called around each piece of rows, as h5g_io_write_each does. */
#define H5G_GATHERED_CHUNK_MAX ((uint64_t)1 << 30)
int h5g_gathered_add(h5g_gathered **g, const char *path, const h5g_chunked_source *src,
                     uint64_t row, uint64_t rows, const char *buf, int threads,
                     h5g_io_piece_fn each, void *ctx);

/* Collective, after every rank closed the file at `file`: rank 0 opens it alone and stores
 * every rank's kept chunks (the other ranks send theirs), then the ranks agree. Frees g (NULL on
 * every rank: nothing to do). */
int h5g_gathered_write(MPI_Comm comm, h5g_gathered *g, const char *file);

void h5g_gathered_free(h5g_gathered *g);

#endif
