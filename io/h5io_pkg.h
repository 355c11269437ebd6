/* io/'s private header (HDF5's H5Dpkg.h pattern): what io/'s own files share and nothing
 * outside io/ includes. The public API is io/h5io.h. */
#ifndef H5G_IO_H5IO_PKG_H
#define H5G_IO_H5IO_PKG_H

#include <hdf5.h>
#include <limits.h>
#include <mpi.h>

#include "io/direct.h"
#include "io/gathered.h"
#include "io/h5check.h"
#include "io/h5io.h"

struct h5g_file {
  MPI_Comm comm;
  hid_t id;
  char path[PATH_MAX]; /* the whole path: direct transfers open it */
  h5g_gathered *gathered; /* filtered chunks kept for rank 0 to store (io/gathered.h) */
};

struct h5g_dset {
  h5g_file *file;
  hid_t id, file_type, mem_type, dxpl;
  hid_t own_file; /* a rank's own serial handle of the file, for virtual datasets (below) */
  int rank;
  hsize_t dims[H5S_MAX_RANK];
  uint64_t row_elems; /* elements per row: product of dims[1..] */
  size_t elem_size;   /* bytes of one element in memory */
  int direct;         /* h5g_io_allow_direct was called */
  int chunk_index;    /* direct chunked reads: 0 not yet checked, 1 its index adds up, -1 not */
  int in_place;       /* written into the dataset the output's copy of the input had there */
  char where[WHERE_MAX];
};


/* h5g_io_configure's settings (io/file.c), read by the transfers (io/transfer.c). */
typedef struct {
  int threads, direct;
  h5g_direct_how write; /* how direct transfers write */
} h5g_io_config;
extern h5g_io_config h5g_io_config_internal;

/* io/file.c: a transfer list for collective MPI-IO (H5I_INVALID_HID on failure). */
hid_t h5g_io_collective_dxpl_internal(void);

/* io/transfer.c: 1 when bytes [address, address + bytes) lie inside the end of file HDF5 reads
 * up to (the superblock's): past it HDF5 reads nothing, and neither may we. */
int h5g_io_inside_file_end_internal(const h5g_dset *d, haddr_t address, hsize_t bytes);

/* io/files.c: why a write to `path` failed, where HDF5 and MPI-IO keep errno to themselves:
 * ": " and the system's words for `error` (errno just after the failed call) when a write fails
 * with it (a full disk or quota, the file-size limit, an I/O error, a read-only file system), else
 * for a full disk or the file-size limit found now; "" when none is found. Static text. */
const char *h5g_io_write_reason_internal(const char *path, int error);

/* io/dataset.c: collective: every rank found `what` (an object of `where`), or none did. */
int h5g_io_agree_found_internal(MPI_Comm comm, int found, const char *what, const char *where);

/* io/attributes.c: collective: every attribute of `from` copied to `to` with its own datatype;
 * `where` names the target in messages. */
int h5g_io_copy_attributes_internal(MPI_Comm comm, hid_t from, hid_t to, const char *where);

/* io/inspect.c: 1 when every prefix of `path` exists as a link in `loc`
 * (H5Lexists fails on missing parents); paths have no length limit, as HDF5's names have none. */
int h5g_io_path_exists_internal(hid_t loc, const char *path);

/* io/storage.c: dataset creation properties (*dcpl) and maximum dimensions
 * for an output of shape dims[0..rank) and elements of elem_bytes, `choice` resolved against the
 * source's creation properties `like_dcpl` (H5I_INVALID_HID: none); file_type (or
 * H5I_INVALID_HID) is the source's type, for its fill value; value_filters as in h5g_io_inspect_storage. */
int h5g_io_storage_plist_internal(const h5g_io_storage_choice *choice, hid_t like_dcpl,
                                  hid_t file_type, size_t elem_bytes, int value_filters, int rank,
                                  const hsize_t *dims, const char *where, hid_t *dcpl,
                                  hsize_t *maxdims);

/* io/replace.c: 1 when the dataset `existing` of `file` can take rows of
 * `file_type` and shape dims[0..rank) (dims[0] rows; any count up to it with rows_change) in
 * place, stored as `dcpl` asks: same type, shape, layout, chunk and filters, in this file, not
 * external, and a length that can become dims[0]. */
int h5g_io_takes_in_place_internal(hid_t file, hid_t existing, hid_t file_type, int rank,
                                   const hsize_t *dims, int rows_change, hid_t dcpl);

/* io/replace.c: h5g_io_inspect_storage's check of its target in `file`. */
int h5g_io_inspect_target_internal(hid_t file, const char *target, hid_t file_type, int rank,
                                   const hsize_t *dims, int rows_change, hid_t dcpl,
                                   const char *where);

#endif
