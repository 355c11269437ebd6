/* Direct transfers (internal to io/): the bytes of a contiguous dataset moved with pread/pwrite
 * by several threads, piece by piece, beside HDF5's own file handle: one rank's collective
 * MPI-IO read moves a fraction of what the rank's threads of pread move (bench/RESULTS.md,
 * "Fourth run: what users wait for"). */
#ifndef H5G_IO_DIRECT_H
#define H5G_IO_DIRECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/h5io.h"

/* Bytes per direct piece: small enough that the GPU copy of one piece runs while the next is
 * read, large enough that handing each piece to the I/O threads is noise (bench/RESULTS.md,
 * "Worker threads kept between calls"). */
#define H5G_DIRECT_PIECE_BYTES ((size_t)128 << 20)

/* How a direct transfer moves the bytes. Writes go through a shared mapping of the file by
 * default: threads copying into a mapping scale where threads of buffered pwrite do not
 * (buffered writes to one file go one at a time), and O_DIRECT is slower still (bench_raw_io:
 * bench/RESULTS.md, "How to write the output"). H5GSORT_IO=pwrite forces pwrite. SHARED writes
 * a file that ranks on other nodes write too (docs/io-paths.md, "Several nodes"): pwrite, never a
 * mapping (not coherent between NFS clients), in pieces aligned to units of
 * h5g_direct_shared_unit (so no two writers share a file system block but at the ends of a
 * rank's range), then fdatasync, so the rank's bytes are on the server before the ranks agree and
 * rank 0 closes and renames the file. */
typedef enum {
  H5G_DIRECT_READ,
  H5G_DIRECT_PWRITE,
  H5G_DIRECT_MAPPED,
  H5G_DIRECT_SHARED
} h5g_direct_how;

/* The smallest unit a SHARED write aligns to: Lustre's 1 MiB default stripe, and large enough
 * that each write request is large whatever block the file system reports. */
#define H5G_DIRECT_SHARED_MIN_BYTES ((off_t)1 << 20)

/* A SHARED write's unit for a file of block size `blksize` (st_blksize: Lustre reports its stripe
 * size, GPFS its block size, NFS its write size): the smallest multiple of it of at least
 * H5G_DIRECT_SHARED_MIN_BYTES; a page's multiple when blksize is not positive. */
off_t h5g_direct_shared_unit(long blksize);

/* Part `part` of `parts` of file bytes [offset, offset + bytes): [*from, *to), whole units of
 * the file, the first and last part taking the partial units at the range's ends; empty
 * (*from == *to) when there are fewer units than parts. */
void h5g_direct_split(off_t offset, size_t bytes, off_t unit, int part, int parts, off_t *from,
                      off_t *to);

/* Where the bytes written so far end once a piece ending at file offset `piece_end` is ready, in
 * a transfer ending at `end` whose writes end on multiples of `unit` (1: anywhere): the piece's
 * last partial unit waits for the next piece, the transfer's last bytes do not. */
off_t h5g_direct_written_end(off_t piece_end, off_t end, off_t unit);

/* Moves rows [0, rows) of `row_bytes` each between buf and the file at `offset`, in pieces of
 * about H5G_DIRECT_PIECE_BYTES (or `max_piece_bytes`, the caller's piece, when smaller: tests
 * shrink it) split among `threads` threads, calling `each` before (moved 0) and after (moved 1)
 * each piece as h5g_io_read_each does (a SHARED write's piece counts as moved once its held-back
 * last unit is written, with a later piece). Local: no MPI. */
int h5g_direct_transfer(const char *path, off_t offset, char *buf, uint64_t rows, size_t row_bytes,
                        h5g_direct_how how, int threads, uint64_t max_piece_bytes,
                        h5g_io_piece_fn each, void *ctx, const char *where);

#endif
