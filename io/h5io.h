/* io/, h5gsort's HDF5 and file-system layer: its one public header, all that src/, tools/ and
 * bench/ use (io/'s own files share io/h5io_pkg.h). Validate inputs, open and create files and
 * datasets, read and write row ranges collectively, copy attributes, the atomic output's file
 * steps. Knows nothing of CUDA. Every function returns an h5g
 * status (base/error.h); HDF5's own error stack is silenced and turned into one message.
 *
 * A dataset is read and written by rows (the first dimension): row i of an N-D dataset is the
 * block [i, :, :, ...]. A dataset is opened either as keys (elements converted to host byte
 * order; of a compound, only the named field) or as raw rows (bytes exactly as in the file). */
#ifndef H5G_IO_H5IO_H
#define H5G_IO_H5IO_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/keys.h"

typedef struct {
  uint64_t n;            /* number of elements (rows) */
  h5g_key_class cls;     /* integer signed/unsigned or IEEE float */
  unsigned width;        /* bytes per key */
  int big_endian;        /* byte order in the file */
  char type_name[48];    /* e.g. "uint32 (big-endian)" */
  uint64_t row_bytes;    /* bytes of one row of the dataset (a record, a 2-D row) */
} h5g_dataset_info;

typedef struct h5g_file h5g_file;
typedef struct h5g_dset h5g_dset;

/* Silences HDF5's automatic error stack printing (call once, every rank). */
void h5g_io_quiet(void);
/* --version: the HDF5 library this process runs, whether it is parallel, and the headers it was
 * built with: "1.10.8, parallel (built with the headers of 1.10.8)". */
void h5g_io_library(char *buf, size_t size);

/* Serial inspection (one rank) of the key dataset: file exists and is HDF5, path names a 1-D
 * dataset of a supported type (or, with key_field, a 1-D compound with that numeric field; with
 * column >= 0, a 2-D dataset with that column; -1: none). Returns H5G_ERR_USAGE with a message
 * that names the problem otherwise. */
int h5g_io_inspect(const char *file, const char *dataset, const char *key_field, int column,
                   h5g_dataset_info *info);
/* Serial (io/references.c): usage error when file:dataset's rows hold references (a table with
 * a reference field), which rows copied into a new OUTPUT would keep as dangling addresses. */
int h5g_io_inspect_no_references(const char *file, const char *dataset);
/* h5g_io_inspect_unmoved's report of one dataset: its path, and whether it is a coordinate of the
 * key (a dimension scale attached to its rows: netCDF-4's coordinate variable). */
typedef void (*h5g_io_unmoved_fn)(void *ctx, const char *path, int coordinate);
/* Serial: `each` for every dataset of `file` with `rows` rows (rank 1 or more) that is none of
 * moved[0..count) (paths; those not in the file are skipped), in the order HDF5 visits them:
 * where OUTPUT starts as a copy of INPUT, these stay in the input's order. netCDF-4's dimensions
 * without a variable (scales that hold no values) are left out. `key` is the key dataset. */
int h5g_io_inspect_unmoved(const char *file, const char *key, uint64_t rows,
                           const char *const *moved, int count, h5g_io_unmoved_fn each,
                           void *ctx);
/* Serial inspection of a dataset carried with the keys: integer or float elements, any rank >= 1,
 * first dimension `rows` (each of *bytes_per_row bytes). Usage error otherwise. */
int h5g_io_inspect_rows(const char *file, const char *dataset, uint64_t rows,
                        uint64_t *bytes_per_row);

/* Collective file access through MPI-IO. */
int h5g_io_open_file(MPI_Comm comm, const char *path, int writable, h5g_file **f);
int h5g_io_create_file(MPI_Comm comm, const char *path, h5g_file **f);
/* Collective close; an error if flushing failed. Safe with NULL. Filtered chunks kept by
 * several ranks' writes are dropped: error paths close so. */
int h5g_io_close_file(h5g_file *f);
/* Collective, a file written to the end: closed, then the filtered chunks that several ranks'
 * writes kept stored in it by rank 0 alone (io/gathered.h); the ranks agree on the status. */
int h5g_io_finish_file(h5g_file *f);

/* Collective dataset opens. */
int h5g_io_open_keys(h5g_file *f, const char *dataset, const char *key_field, h5g_dset **d);
int h5g_io_open_rows(h5g_file *f, const char *dataset, h5g_dset **d);
/* Output storage as asked for (--layout, --chunk, --compress), resolved for each dataset written
 * against the one it is made like (io/storage.c). All zero (or NULL): keep the source's layout,
 * chunk length and filters, as h5repack does; contiguous, compact or virtual sources give
 * contiguous output. CHUNKED, a chunk length or a compressor make chunked output; GZIP replaces
 * the filters by shuffle (elements wider than a byte) + deflate; NONE drops them. */
typedef enum { H5G_LAYOUT_KEEP = 0, H5G_LAYOUT_CONTIGUOUS, H5G_LAYOUT_CHUNKED } h5g_layout_choice;
/* SCALEOFFSET (integer scale-offset, minimum bits found per chunk) and NBIT (the n-bit filter,
 * packing the file type's precision) are lossless on integer types only; h5gsort-gen writes them,
 * h5gsort's --compress does not offer them. */
typedef enum {
  H5G_COMPRESS_KEEP = 0, H5G_COMPRESS_NONE, H5G_COMPRESS_GZIP, H5G_COMPRESS_SCALEOFFSET,
  H5G_COMPRESS_NBIT
} h5g_compress_choice;
typedef struct {
  h5g_layout_choice layout;
  uint64_t chunk_rows; /* rows per chunk; 0: the source's, or about 1 MiB of rows */
  h5g_compress_choice compress;
  int gzip_level;      /* 0-9, with H5G_COMPRESS_GZIP */
} h5g_io_storage_choice;
/* Where an output dataset lands when OUTPUT starts as a copy of INPUT (--whole-file, in place):
 * its path there and its rows. */
typedef struct {
  const char *path;
  uint64_t rows;
  int rows_change; /* the count is known only after the sort (--unique): any up to `rows` */
} h5g_io_target;
/* Serial (one rank, before any work): resolves `choice` for the output made like file:dataset
 * (value_filters 0: for the uint64 index that follows it); *filtered tells whether that output
 * has filters, so its size is not known before it is written. Usage error for chunks HDF5
 * cannot take. With `target` (NULL: a new OUTPUT), also a usage error when target->path is a
 * group or another object than a dataset, or a dataset whose storage cannot take the output in
 * place (io/replace.c) while a hard link or a reference to it would be lost. */
int h5g_io_inspect_storage(const char *file, const char *dataset,
                           const h5g_io_storage_choice *choice, int value_filters,
                           const h5g_io_target *target, int *filtered);
/* Collective: creates `dataset` in `out` (intermediate groups created, an existing link of that
 * name replaced) with the datatype, shape (but `rows` rows) and attributes of `like`, stored as
 * `storage` resolved against `like`'s storage, accessed like `like` (but see h5g_io_file_form). */
int h5g_io_create_like(h5g_file *out, const char *dataset, const h5g_dset *like, uint64_t rows,
                       const h5g_io_storage_choice *storage, h5g_dset **d);
/* Collective: creates a contiguous 1-D uint64 dataset of n elements. */
int h5g_io_create_index(h5g_file *out, const char *dataset, uint64_t n, h5g_dset **d);
/* The same, its storage `storage` resolved against that of `keys` (the index follows the keys:
 * their chunk length and filters, less those that describe the keys' values: scale-offset,
 * n-bit). */
int h5g_io_create_index_like(h5g_file *out, const char *dataset, uint64_t n, const h5g_dset *keys,
                             const h5g_io_storage_choice *storage, h5g_dset **d);
/* 1 when d takes its rows in the file's own form, not the host's: an output of another byte
 * order or of padded integers (a precision below the size) is written without conversion, so
 * that the rank's threads write it (direct or by chunks: HDF5 converts on one thread, and a type
 * conversion breaks its collective filtered writes). h5g_io_convert_rows turns such rows (whole
 * rows of d) into the file's form (to_file 1) and back, in place: a byte swap, or a widening to
 * the host, by the rank's threads (io/convert.h); anything else through HDF5. */
int h5g_io_file_form(const h5g_dset *d);
int h5g_io_convert_rows(const h5g_dset *d, void *buf, uint64_t rows, int to_file);
/* Collective: copies the attributes of group `group` of `in` to the group of that path in `out`,
 * when both files have it as a group (nothing otherwise). */
int h5g_io_copy_group_attributes(h5g_file *in, h5g_file *out, const char *group);
/* A dataset written to OUTPUT: its path in INPUT and in OUTPUT. */
typedef struct {
  const char *from, *to;
} h5g_io_written;
/* Serial (one rank), on a new OUTPUT (not a copy of INPUT) closed by its collective writers:
 * no attribute keeps a reference copied as bytes (a file address, meaningless in another file).
 * The dimension scales of the written datasets are attached with the dimension-scale API (a
 * scale OUTPUT does not hold is copied from INPUT as it is, at its path); attributes of object
 * references to objects OUTPUT holds are made anew; any other attribute holding references is
 * left out, with one line on `warnings` (NULL: none) naming it. io/scales.c. */
int h5g_io_carry_references(const char *input, const char *output, const h5g_io_written *written,
                            int count, FILE *warnings);
/* Collective: creates `dataset` in `f` (intermediate groups created; an error when it exists) of
 * HDF5 type `file_type` and shape dims[0..rank) (rows first), stored as `storage` says (NULL:
 * contiguous; "keep" has nothing to keep: contiguous unless chunks or gzip are asked for);
 * h5g_io_write takes its rows in `mem_type`. No fill values, no timestamps. */
int h5g_io_create(h5g_file *f, const char *dataset, hid_t file_type, hid_t mem_type, int rank,
                  const hsize_t *dims, const h5g_io_storage_choice *storage, h5g_dset **d);
/* Collective: adds attribute `name` to `d`, of HDF5 type `file_type`, scalar (n == 0) or 1-D of n
 * elements, its values `buf` in `mem_type`. */
int h5g_io_write_attribute(h5g_dset *d, const char *name, hid_t file_type, hid_t mem_type,
                           uint64_t n, const void *buf);
/* Collective read/write of rows [row, row + rows). Every rank calls it the same number of times
 * (rows may be 0); pieces of h5g_io_piece_bytes() keep MPI-IO counts below 2^31. */
int h5g_io_read(h5g_dset *d, uint64_t row, uint64_t rows, void *buf);
int h5g_io_write(h5g_dset *d, uint64_t row, uint64_t rows, const void *buf);
/* The same, calling `each` before (moved == 0) and after (moved == 1) each piece this rank
 * moves, with the piece's rows [first, first + count) counted from `row` (count > 0), so the
 * caller can work on one piece while the next one moves (the pipeline waits for a piece's buffer
 * and starts its GPU copies there). A status other than H5G_OK fails the transfer on every rank,
 * as a failed read does. */
typedef int (*h5g_io_piece_fn)(void *ctx, uint64_t first, uint64_t count, int moved);
int h5g_io_read_each(h5g_dset *d, uint64_t row, uint64_t rows, void *buf, h5g_io_piece_fn each,
                     void *ctx);
int h5g_io_write_each(h5g_dset *d, uint64_t row, uint64_t rows, const void *buf,
                      h5g_io_piece_fn each, void *ctx);
/* How the ranks' transfers meet the file (docs/io-paths.md, "Several nodes"). */
typedef enum {
  H5G_IO_ONE_NODE,         /* every rank on this node: direct reads, writes into a mapping */
  H5G_IO_MULTINODE,        /* ranks on several nodes: direct reads, aligned pwrite + fdatasync */
  H5G_IO_MULTINODE_FORCED, /* the same on one node: H5GSORT_IO_POLICY=multinode */
  H5G_IO_MPIO              /* HDF5's collective MPI-IO throughout: H5GSORT_IO=mpio */
} h5g_io_policy;
/* "one-node", "multinode", "multinode-forced", "mpio". */
const char *h5g_io_policy_name(h5g_io_policy policy);
/* Process-wide, before any transfer: the host threads a rank's direct transfers use, and the
 * policy (*policy) by topology (`one_node`: every rank on this node) and the environment:
 * H5GSORT_IO=mpio forces collective MPI-IO, H5GSORT_IO=pwrite pwrite on one node,
 * H5GSORT_IO_POLICY=multinode the multi-node policy (auto or unset: by topology; anything else
 * is a usage error). */
int h5g_io_configure(int threads, int one_node, h5g_io_policy *policy);
/* Lets the transfers of `d` bypass MPI-IO with threaded pread/pwrite (io/direct.h) when the
 * dataset is contiguous, allocated, stored exactly as in memory and not external, in a file
 * without a user block: the rank's slice is then one byte range of the file. Collective (every
 * rank calls it for the same dataset); the checkers keep reading through HDF5. */
void h5g_io_allow_direct(h5g_dset *d);

/* Bytes of one row in memory. */
size_t h5g_io_row_bytes(const h5g_dset *d);
/* Of a compound dataset opened as raw rows: where field `name` lies in a row (*offset), and its
 * byte order. 1 when its bytes are its value as h5g_io_open_keys would give it (an integer or
 * bitfield whose value bits fill its bytes, or an IEEE float; swapped when *big_endian differs
 * from the host's), 0 otherwise (a padded integer, no such field). */
int h5g_io_plain_field(const h5g_dset *d, const char *name, size_t *offset, int *big_endian);
/* 1 when d's rows come in the file's own form, with no conversion (opened as raw rows, or as
 * keys already in host order). */
int h5g_io_unconverted(const h5g_dset *d);
/* Collective close; an error if closing failed. Safe with NULL. */
int h5g_io_close(h5g_dset *d);

/* ---- the file system steps of the atomic output (io/files.c), called by one rank ---------- */
/* NULL for a regular file (or none at all), else what `path` is ("directory", "FIFO (named
 * pipe)", ...): inputs must be regular files, checked before anything opens them. */
const char *h5g_files_kind(const char *path);
/* Usage errors for an OUTPUT that cannot be produced: an empty name or one ending in '/', exists
 * without --force, is not a regular file (a directory, a device, a FIFO: never replaced, even
 * with --force), its directory is missing or not writable. Sets *same_as_input when OUTPUT is
 * INPUT (the same file by device and inode, however named). */
int h5g_files_check_output(const char *input, const char *output, int force, int *same_as_input);
/* Usage error when the --report file cannot be created (checked before any work): an empty
 * name, a directory or socket, a missing or unwritable directory, or the input or OUTPUT. */
int h5g_files_check_report(const char *report, const char *input, const char *output);
/* Usage error when the temporary file's name is the input's (it would be overwritten). */
int h5g_files_check_temp(const char *temp, const char *input);
/* A name beside `output` that no other run uses: "<dir>/.<base>.h5gsort-<host>-<pid>.tmp",
 * within the directory's file-name limit (a long base is cut and a hash of it added). */
int h5g_files_temp_name(const char *output, char *name, size_t len);
/* Removes temporary files of `output` left by runs that were killed: those named for this host
 * whose run holds no lock on "<temp>.lock" (h5g_files_hold_temp_lock), the files MPI-IO made
 * beside them ("<temp>.data.0", ...) and the lock file; never `input`. Where the file system
 * has no flock (Lustre without -o flock), whether the named process exists decides. Returns how
 * many were removed. */
int h5g_files_remove_stale(const char *output, const char *input);
/* The run's claim on its temporary file's name (rank 0, for the run's life): "<temp>.lock",
 * held with flock, tells other runs' sweeps that this run is alive, which a PID cannot (it means
 * nothing across PID namespaces, and may belong to another program by now). A file system
 * without flock is no error (the sweep falls back to the PID); a lock another live run holds
 * (the same name from another PID namespace) is. drop: the lock file removed and let go (none
 * held: nothing). */
int h5g_files_hold_temp_lock(const char *temp);
void h5g_files_drop_temp_lock(void);
/* Byte copy of src to a new file dst (not fsynced: h5g_files_commit makes an in-place temporary
 * file durable, copy and written dataset together). */
int h5g_files_copy(const char *src, const char *dst);
/* Fails early (runtime error) when `bytes` more cannot be written beside `output`: over the
 * process's file-size limit or the free space of its file system. Writing past either would
 * fail inside HDF5, whose 1.10 library cannot then close the file cleanly. */
int h5g_files_check_space(const char *output, unsigned long long bytes);
/* 1 when a and b name the same file (device and inode; links and ./ spellings alike). */
int h5g_files_same(const char *a, const char *b);
/* Serial (one rank, before any work): usage error when one of the files that file:dataset's
 * data lie in (the file itself, an external link's target, a virtual dataset's sources) is one
 * of `written` (count paths the run writes: OUTPUT unless in place, the report, the temporary
 * file; NULL entries skipped): writing it would change the input. */
int h5g_io_inspect_sources(const char *file, const char *dataset, const char *const *written,
                           int count);
/* Fails (runtime error, naming a full disk or the file-size limit) when `path` cannot grow by
 * `bytes` more: checked as a filtered output is written, whose size is known only then. */
int h5g_files_check_growth(const char *path, unsigned long long bytes);
/* The directory `path` is in ("." for a bare name), as dirname(3) says, in dir[len]. */
void h5g_files_directory_of(const char *path, char *dir, size_t len);
/* Bytes free (for an unprivileged writer) on the file system OUTPUT is written to; 0 if unknown. */
unsigned long long h5g_files_free_bytes(const char *output);
/* Reserves disk blocks for the first `bytes` of `path` without changing its size, so the writes
 * that follow cannot run out of space half-way (a shared scratch file system may fill up during
 * a long write). Where the file system has no such call nothing is reserved. Runtime error when
 * the space is not there. */
int h5g_files_reserve(const char *path, unsigned long long bytes);
/* Atomically puts `tmp` at `output` (blocks reserved past its end given back, rename): without
 * `replace` never over a file that is there (one made since the run checked: usage error, exit
 * 2), with it replacing whatever is there.
 * With `durable`, tmp's data reaches the disk before the rename and the directory after it:
 * in-place sorts use it, so a crash can never leave the input replaced by unwritten data.
 * Without, the file is left to the page cache as `cp` and h5repack leave theirs (a directory
 * fsync alone would make the name durable, not the data it names). */
int h5g_files_commit(const char *tmp, const char *output, int durable, int replace);

/* HDF5 objects (files, datasets, types, ...) still open in this process: 0 after a clean run. */
long h5g_io_open_objects(void);
/* Bytes per collective read/write call. */
uint64_t h5g_io_piece_bytes(void);

#endif
