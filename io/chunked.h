/* Direct transfers of chunked datasets (internal to io/). Reading, the calling thread fetches
 * the stored bytes of the chunks that overlap a rank's rows (H5Dread_chunk, in order) and several
 * threads decode them (io/filters.h) as they arrive, each straight into the slice buffer where
 * the chunk lies inside it; chunks HDF5 never wrote are left to HDF5
 * (its fill value rules), through `fallback`. Writing, threads encode the chunks. HDF5's own
 * chunked transfers run the filters on one thread per rank (HDF5 is not thread-safe): for gzip
 * that thread, not the disk, sets the time. */
#ifndef H5G_IO_CHUNKED_H
#define H5G_IO_CHUNKED_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "io/convert.h"
#include "io/filters.h"
#include "io/h5io.h"

typedef struct {
  hid_t dset;             /* for the chunk look-ups, made on the calling thread only */
  const char *path;       /* the file the chunks are read from */
  haddr_t eoa;            /* where HDF5 takes that file to end (HDF5 reads no chunk past it) */
  uint64_t rows_total;    /* the dataset's first dimension */
  uint64_t chunk_rows;    /* rows per chunk (every chunk holds whole rows) */
  size_t row_bytes;       /* bytes of one row, in memory and in the file alike */
  h5g_filter_pipeline pipeline;
  h5g_convert convert;    /* reading: made by the threads on the rows they land */
  /* reads rows [row, row + rows) into buf through HDF5 (independent transfer) */
  int (*fallback)(void *ctx, uint64_t row, uint64_t rows, void *buf);
  void *fallback_ctx;
  const char *where;
  uint64_t max_piece_bytes; /* the caller's piece: pieces are H5G_DIRECT_PIECE_BYTES or this */
} h5g_chunked_source;

/* How many bytes each chunk overlapping rows [row, row + rows) has stored (0: never written),
 * looked up on the calling thread in HDF5's chunk index, one search per chunk. *counted: those
 * of them whose first row lies in [row, row + rows), so that the counts of ranks holding a
 * partition of the rows add up to the dataset's allocated chunks (h5g_chunked_allocated): a
 * chunk index that answers look-ups but does not add up is damaged, and HDF5 is left to read
 * it. */
typedef struct h5g_chunk_index h5g_chunk_index;
int h5g_chunked_index(const h5g_chunked_source *src, uint64_t row, uint64_t rows,
                      h5g_chunk_index **index, uint64_t *counted);
/* Allocated chunks of the whole dataset as HDF5's index iteration counts them; -1 on failure. */
int64_t h5g_chunked_allocated(const h5g_chunked_source *src);
void h5g_chunked_index_free(h5g_chunk_index *index);

/* Reads rows [row, row + rows) (those `index` was made for) into buf with `threads` threads,
 * calling `each` before and after each piece of about H5G_DIRECT_PIECE_BYTES (whole chunks), as
 * h5g_io_read_each does. Local: no MPI. A chunk that does not decode fails the read ("cannot read
 * the chunk at row N: ..."). */
int h5g_chunked_read(const h5g_chunked_source *src, h5g_chunk_index *index, uint64_t row,
                     uint64_t rows, char *buf, int threads, h5g_io_piece_fn each, void *ctx);
/* Stores one encoded chunk, its first row `first` (H5Dwrite_chunk; `where` names the dataset in
 * the error). */
int h5g_chunked_store(hid_t dset, uint64_t first, unsigned mask, size_t bytes, const void *data,
                      const char *where);

/* Where encoded chunks go, one at a time and in order, on the calling thread: `store` gets the
 * chunk's first row, its filter mask and its stored bytes. */
typedef struct {
  int (*store)(void *ctx, uint64_t first, unsigned mask, size_t bytes, const void *data);
  void *ctx;
} h5g_chunk_sink;

/* Writes rows [row, row + rows) (whole chunks: row and row + rows on chunk boundaries, or the
 * latter the dataset's end) from buf: the threads encode the chunks of each piece, then the
 * calling thread hands them to `sink` in order (NULL: H5Dwrite_chunk into src->dset, only where
 * no other process writes the file: HDF5 allocates a chunk's space on the rank that writes it,
 * and in a file opened by several ranks their views of it would part; io/gathered.h keeps the
 * chunks of several ranks for one writer instead). */
int h5g_chunked_write(const h5g_chunked_source *src, uint64_t row, uint64_t rows, const char *buf,
                      int threads, const h5g_chunk_sink *sink, h5g_io_piece_fn each, void *ctx);

#endif
