/* Direct transfers (internal to io/): the bytes of a contiguous dataset moved with pread/pwrite
 * by several threads, piece by piece, beside HDF5's own file handle. On the H200 machine one
 * rank's collective MPI-IO read of 4 GiB moved 3.3 GB/s, 16 threads of pread 40 GB/s
 * (shared/gpu/README.md). */
#ifndef H5G_IO_DIRECT_H
#define H5G_IO_DIRECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/h5io.h"

/* Bytes per direct piece: small enough that the GPU copy of one piece runs while the next is
 * read, large enough that the per-piece thread start (~20 us per thread) is noise. */
#define H5G_DIRECT_PIECE_BYTES ((size_t)128 << 20)

/* How a direct transfer moves the bytes. Writes go through a shared mapping of the file by
 * default: on the H200 machine (ext4, page cache) 16 threads copying into a mapping wrote 4 GiB
 * in 0.39 s and 16 GiB in 1.2-1.4 s, against 1.2 s and 4.5-4.7 s for 1 to 16 threads of pwrite
 * (buffered writes to one file go one at a time) and 1.7-2.0 s / 6.1-7.1 s for O_DIRECT
 * (bench_raw_io, bench/RESULTS.md). H5GSORT_IO=pwrite forces pwrite. */
typedef enum { H5G_DIRECT_READ, H5G_DIRECT_PWRITE, H5G_DIRECT_MAPPED } h5g_direct_how;

/* Moves rows [0, rows) of `row_bytes` each between buf and the file at `offset`, in pieces of
 * about H5G_DIRECT_PIECE_BYTES (or `max_piece_bytes`, the caller's piece, when smaller: tests
 * shrink it) split among `threads` threads, calling `each` before (moved 0) and after (moved 1)
 * each piece as h5g_io_read_each does. Local: no MPI. */
int h5g_direct_transfer(const char *path, off_t offset, char *buf, uint64_t rows, size_t row_bytes,
                        h5g_direct_how how, int threads, uint64_t max_piece_bytes,
                        h5g_io_piece_fn each, void *ctx, const char *where);

#endif
