#include "io/h5io.h"

#include <hdf5.h>
#include <limits.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/chunked.h"
#include "io/direct.h"
#include "io/h5check.h"
#include "io/superblock.h"
#include "mpi/agree.h"
#include "mpi/topology.h"


struct h5g_file {
  MPI_Comm comm;
  hid_t id;
  char path[PATH_MAX]; /* the whole path: direct transfers open it */
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

/* h5g_io_configure */
static struct {
  int threads, direct;
  h5g_direct_how write; /* how direct transfers write */
} io_config = {1, 0, H5G_DIRECT_MAPPED};

void h5g_io_configure(int threads, int direct) {
  const char *forced = getenv("H5GSORT_IO");
  io_config.threads = threads > 0 ? threads : 1;
  io_config.direct = direct && !(forced && strcmp(forced, "mpio") == 0);
  io_config.write = forced && strcmp(forced, "pwrite") == 0 ? H5G_DIRECT_PWRITE : H5G_DIRECT_MAPPED;
}

void h5g_io_allow_direct(h5g_dset *d) { d->direct = 1; }

/* What every direct transfer of `d` needs (io/h5io.h: h5g_io_allow_direct): allowed, rows stored
 * exactly as in memory, in this file (through an external link the data lie in another one),
 * which has no user block. */
static int direct_allowed(const h5g_dset *d) {
  hid_t fcpl = H5I_INVALID_HID;
  hsize_t userblock = 1;
  H5O_info_t in_dset, in_file;
  int allowed = d->direct && io_config.direct && H5Tequal(d->file_type, d->mem_type) > 0 &&
                H5Oget_info2(d->id, &in_dset, H5O_INFO_BASIC) >= 0 &&
                H5Oget_info2(d->file->id, &in_file, H5O_INFO_BASIC) >= 0 &&
                in_dset.fileno == in_file.fileno && (fcpl = H5Fget_create_plist(d->file->id)) >= 0 &&
                H5Pget_userblock(fcpl, &userblock) >= 0 && userblock == 0;
  CLOSE_ID(H5Pclose, fcpl);
  return allowed;
}

/* 1 when bytes [address, address + bytes) lie inside the end of file HDF5 reads up to (the
 * superblock's): past it HDF5 reads nothing, and neither may we. */
static int inside_file_end(const h5g_dset *d, haddr_t address, hsize_t bytes) {
  haddr_t eoa = 0;
  return address != HADDR_UNDEF && h5g_superblock_eoa(d->file->path, &eoa) == 0 &&
         address <= eoa && bytes <= eoa - address;
}

/* The file offset of a contiguous dataset that a direct transfer may move, or -1. A file being
 * written has its end in the superblock only once HDF5 flushes it: that bound is for reads. */
static off_t direct_offset(const h5g_dset *d, int writing) {
  hid_t dcpl = H5I_INVALID_HID;
  haddr_t address = HADDR_UNDEF;
  if (direct_allowed(d) && (dcpl = H5Dget_create_plist(d->id)) >= 0 &&
      H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0 &&
      H5Pget_nfilters(dcpl) == 0)
    address = H5Dget_offset(d->id);
  if (!writing && !inside_file_end(d, address, H5Dget_storage_size(d->id))) address = HADDR_UNDEF;
  CLOSE_ID(H5Pclose, dcpl);
  return address == HADDR_UNDEF ? (off_t)-1 : (off_t)address;
}

/* Rows [row, row + rows) through HDF5, independently: a direct chunked read's chunks that HDF5
 * never wrote (their fill value is HDF5's to give). */
static int read_rows_independent(void *ctx, uint64_t row, uint64_t rows, void *buf) {
  int rc = H5G_OK;
  h5g_dset *d = ctx;
  hid_t file_space = H5I_INVALID_HID, mem_space = H5I_INVALID_HID;
  hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK], mem_len = rows * d->row_elems;
  start[0] = row;
  count[0] = rows;
  for (int k = 1; k < d->rank; k++) count[k] = d->dims[k];
  CHECK_H5(file_space = H5Dget_space(d->id), "cannot read the shape (%s)", d->where);
  CHECK_H5(mem_space = H5Screate_simple(1, &mem_len, NULL), "cannot read the dataset (%s)", d->where);
  CHECK_H5(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL),
           "cannot read the dataset (%s)", d->where);
  CHECK_H5(H5Dread(d->id, d->mem_type, mem_space, file_space, d->dxpl, buf),
           "cannot read the dataset (%s)", d->where);
done:
  CLOSE_ID(H5Sclose, mem_space);
  CLOSE_ID(H5Sclose, file_space);
  return rc;
}

/* 1 when the transfers of `d` may go through io/chunked.h, *src filled: a chunked dataset of
 * this file (no user block) moved with no conversion, whose chunks hold whole rows and whose
 * filters io/filters.h knows (h5g_io_allow_direct, as for contiguous data). Anything else, or
 * any HDF5 query that fails, leaves the transfer to HDF5. */
static int chunked_source(h5g_dset *d, int writing, h5g_chunked_source *src) {
  hid_t dcpl = H5I_INVALID_HID;
  hsize_t chunk[H5S_MAX_RANK];
  unsigned chunk_opts = 0;
  int had_error = h5g_error_code() != H5G_OK, ours = 0, eligible =
      d->dims[0] > 0 && direct_allowed(d) &&
      (dcpl = H5Dget_create_plist(d->id)) >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
      H5Pget_chunk(dcpl, d->rank, chunk) == d->rank &&
      /* an edge chunk stored unfiltered says so in the layout, not in its filter mask */
      H5Pget_chunk_opts(dcpl, &chunk_opts) >= 0 && !(chunk_opts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) &&
      (writing || h5g_superblock_eoa(d->file->path, &src->eoa) == 0) &&
      h5g_filters_from_dcpl(dcpl, d->elem_size, &src->pipeline, &ours, d->where) == H5G_OK && ours;
  for (int k = 1; eligible && k < d->rank; k++) eligible = chunk[k] == d->dims[k];
  if (eligible) {
    src->dset = d->id;
    src->path = d->file->path;
    src->rows_total = d->dims[0];
    src->chunk_rows = chunk[0];
    src->row_bytes = h5g_io_row_bytes(d);
    src->fallback = read_rows_independent;
    src->fallback_ctx = d;
    src->where = d->where;
  }
  CLOSE_ID(H5Pclose, dcpl);
  if (!had_error) h5g_error_clear(); /* a failed query above only means: HDF5 reads it */
  return eligible;
}

/* 1 when rows [row, row + rows) are whole chunks of `src` (the last one may end the dataset). */
static int whole_chunks(const h5g_chunked_source *src, uint64_t row, uint64_t rows) {
  uint64_t end = row + rows;
  return row % src->chunk_rows == 0 && (end == src->rows_total || end % src->chunk_rows == 0);
}

/* Collective, once per dataset read by chunks: 1 when its chunk index adds up (io/chunked.h),
 * each rank looking up the chunks that start in an even share of the rows. */
static int chunk_index_adds_up(h5g_dset *d, const h5g_chunked_source *src) {
  int rc = H5G_OK, size, rank;
  h5g_chunk_index *index = NULL;
  uint64_t counted = 0, total = 0;
  MPI_Comm comm = d->file->comm;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  uint64_t begin = h5g_share_begin((uint64_t)rank, d->dims[0], (uint64_t)size);
  uint64_t share = h5g_share_begin((uint64_t)rank + 1, d->dims[0], (uint64_t)size) - begin;
  int had_error = h5g_error_code() != H5G_OK;
  int looked_up = h5g_chunked_index(src, begin, share, &index, &counted) == H5G_OK, all_looked_up;
  if (!had_error) h5g_error_clear(); /* a failed look-up only means: HDF5 reads it */
  CHECK_MPI(MPI_Allreduce(&looked_up, &all_looked_up, 1, MPI_INT, MPI_MIN, comm));
  CHECK_MPI(MPI_Allreduce(&counted, &total, 1, MPI_UINT64_T, MPI_SUM, comm));
  int adds_up = all_looked_up && (int64_t)total == h5g_chunked_allocated(src), all_add_up;
  CHECK_MPI(MPI_Allreduce(&adds_up, &all_add_up, 1, MPI_INT, MPI_MIN, comm));
  d->chunk_index = all_add_up ? 1 : -1;
done:
  h5g_chunked_index_free(index);
  return rc;
}

void h5g_io_quiet(void) {
  if (!getenv("H5GSORT_HDF5_ERRORS")) H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* debugging aid */
}

uint64_t h5g_io_piece_bytes(void) {
  /* 1 GiB per call keeps every MPI-IO count far below 2^31 and measured no slower than
   * larger pieces (one collective call per GiB is noise next to the transfer). */
  const char *env = getenv("H5GSORT_IO_PIECE_BYTES");
  uint64_t bytes = env ? strtoull(env, NULL, 10) : 0;
  return bytes ? bytes : (uint64_t)1 << 30;
}

long h5g_io_open_objects(void) { return (long)H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); }

/* True for an integer or bitfield whose value bits do not fill its bytes (a precision below its
 * size, or an offset): padding bits that the memory type must not carry. */
static int padded_integer(hid_t type) {
  H5T_class_t cls = H5Tget_class(type);
  return (cls == H5T_INTEGER || cls == H5T_BITFIELD) &&
         (H5Tget_precision(type) != 8 * H5Tget_size(type) || H5Tget_offset(type) != 0);
}

/* The memory type of keys stored as `file_type`: the same type in host byte order, or for a
 * padded integer the full-width native integer (bitfield) of its size and sign, into which HDF5
 * converts it as it does for h5py (sign-extended from its precision). */
static hid_t native_order_copy(hid_t file_type) {
  if (padded_integer(file_type)) {
    size_t size = H5Tget_size(file_type);
    int bits = H5Tget_class(file_type) == H5T_BITFIELD, is_signed = !bits && H5Tget_sign(file_type) == H5T_SGN_2;
    hid_t full = bits ? (size == 1 ? H5T_NATIVE_B8 : size == 2 ? H5T_NATIVE_B16 : size == 4 ? H5T_NATIVE_B32 : H5T_NATIVE_B64)
                 : is_signed ? (size == 1 ? H5T_NATIVE_INT8 : size == 2 ? H5T_NATIVE_INT16 : size == 4 ? H5T_NATIVE_INT32 : H5T_NATIVE_INT64)
                             : (size == 1 ? H5T_NATIVE_UINT8 : size == 2 ? H5T_NATIVE_UINT16 : size == 4 ? H5T_NATIVE_UINT32 : H5T_NATIVE_UINT64);
    return H5Tcopy(full);
  }
  hid_t mem = H5Tcopy(file_type);
  if (mem >= 0 && H5Tset_order(mem, H5Tget_order(H5T_NATIVE_INT)) < 0) {
    H5Tclose(mem);
    return H5I_INVALID_HID;
  }
  return mem;
}

static hid_t collective_dxpl(void) {
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  if (dxpl >= 0 && H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0) {
    H5Pclose(dxpl);
    return H5I_INVALID_HID;
  }
  return dxpl;
}

static hid_t mpio_fapl(MPI_Comm comm) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0 && H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0) {
    H5Pclose(fapl);
    return H5I_INVALID_HID;
  }
  return fapl;
}

/* An attribute whose values take at least this many bytes may not fit one object header message
 * of the earliest file format (64 KiB with its name, datatype and shape): HDF5 stores it only
 * densely, in an object made under a lower library-version bound of 1.8 or later. */
#define LARGE_ATTRIBUTE_BYTES 60000

static herr_t find_large_attribute(hid_t obj, const char *name, const H5A_info_t *info,
                                   void *found) {
  (void)obj;
  (void)name;
  if (info->data_size < LARGE_ATTRIBUTE_BYTES) return 0;
  *(int *)found = 1;
  return 1;
}

/* 1 when an attribute that a new file may be given is large: one of a file, dataset or group
 * open in this process (the input's root and the datasets read), or of a group on such a
 * dataset's path. A failed query counts as none. */
static int open_objects_hold_large_attributes(void) {
  unsigned types = H5F_OBJ_FILE | H5F_OBJ_DATASET | H5F_OBJ_GROUP;
  ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, types);
  hid_t *ids = n > 0 ? calloc((size_t)n, sizeof *ids) : NULL;
  int found = 0;
  n = ids ? H5Fget_obj_ids(H5F_OBJ_ALL, types, (size_t)n, ids) : 0;
  for (ssize_t i = 0; i < n && !found; i++) {
    char path[WHERE_MAX];
    ssize_t len = H5Iget_type(ids[i]) == H5I_FILE ? 0 : H5Iget_name(ids[i], path, sizeof path);
    H5Aiterate2(ids[i], H5_INDEX_NAME, H5_ITER_NATIVE, NULL, find_large_attribute, &found);
    for (ssize_t k = len - 1; k > 0 && !found && (size_t)len < sizeof path; k--) {
      if (path[k] != '/') continue; /* the groups on the path, its root included */
      char keep = path[k + 1];
      path[k + 1] = '\0';
      H5Aiterate_by_name(ids[i], path, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, find_large_attribute,
                         &found, H5P_DEFAULT);
      path[k + 1] = keep;
    }
  }
  free(ids);
  return found;
}

/* Collective: a new file, or one opened for writing, takes 1.8 as its lower library-version bound
 * (dense attribute storage; readable by HDF5 1.8 and later) when it may be given a large
 * attribute; else the earliest format, as before. */
static int bounds_for_attributes(MPI_Comm comm, hid_t fapl, const char *path) {
  int rc = H5G_OK, mine = open_objects_hold_large_attributes(), any = 0;
  CHECK_MPI(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm));
  if (any)
    CHECK_H5(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18),
             "cannot allow large attributes (%s)", path);
done:
  return rc;
}

/* A file opened for writing writes its metadata collectively (H5Pset_coll_metadata_write). Else
 * HDF5 1.10.8 flushes the metadata cache at a sync point met inside a collective write of
 * filtered chunks (the chunk index growing past 256 KiB of dirty metadata) one entry at a time
 * through the transfer's collective MPI-IO mode, each rank its own share: the ranks' collective
 * calls part ("mca_fbtl_posix_pwritev: error in writev: Bad address" then a hang at 2 ranks, 44k
 * gzip chunks of 64 u4 rows; a crash at 3 ranks). */
static int open_file(MPI_Comm comm, const char *path, int create, int writable, h5g_file **out) {
  int rc = H5G_OK;
  hid_t fapl = H5I_INVALID_HID;
  h5g_file *f = calloc(1, sizeof *f);
  /* every rank, or none, goes on to the collective open */
  CHECK(h5g_agree_alloc(comm, f != NULL, sizeof *f));
  f->comm = comm;
  f->id = H5I_INVALID_HID;
  if ((size_t)snprintf(f->path, sizeof f->path, "%s", path) >= sizeof f->path)
    H5G_FAIL(H5G_ERR_USAGE, "path too long (%s)", path);
  CHECK_H5(fapl = mpio_fapl(comm), "cannot set up MPI-IO (%s)", path);
  if (writable) CHECK_H5(H5Pset_coll_metadata_write(fapl, 1), "cannot set up MPI-IO (%s)", path);
  if (writable) CHECK(bounds_for_attributes(comm, fapl, path));
  if (create)
    CHECK_H5(f->id = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
             "cannot create output file (%s)", path);
  else
    CHECK_H5(f->id = H5Fopen(path, writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl),
             "cannot open file (%s)", path);
  *out = f;
  f = NULL;
done:
  CLOSE_ID(H5Pclose, fapl);
  h5g_io_close_file(f);
  return rc;
}

int h5g_io_open_file(MPI_Comm comm, const char *path, int writable, h5g_file **f) {
  return open_file(comm, path, 0, writable, f);
}

int h5g_io_create_file(MPI_Comm comm, const char *path, h5g_file **f) {
  return open_file(comm, path, 1, 1, f);
}

int h5g_io_close_file(h5g_file *f) {
  int rc = H5G_OK;
  if (!f) return rc;
  if (f->id >= 0 && H5Fclose(f->id) < 0)
    rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "cannot flush and close the file (%s)",
                       f->path);
  free(f);
  return rc;
}

/* Collective: a dataset handle of `f`, agreed on, so that no rank goes on to a collective open
 * or create that another one, out of memory, never reaches. */
static int new_dset(h5g_file *f, const char *dataset, h5g_dset **out) {
  int rc = H5G_OK;
  h5g_dset *d = calloc(1, sizeof *d);
  *out = NULL;
  CHECK(h5g_agree_alloc(f->comm, d != NULL, sizeof *d));
  d->file = f;
  d->id = d->file_type = d->mem_type = d->dxpl = d->own_file = H5I_INVALID_HID;
  int used = snprintf(d->where, sizeof d->where, "%s:", f->path);
  if (used > 0 && (size_t)used < sizeof d->where)
    snprintf(d->where + used, sizeof d->where - (size_t)used, "%s", dataset);
  *out = d;
  d = NULL;
done:
  free(d);
  return rc;
}

/* Shape, element size and transfer list, once id and mem_type are set. */
static int finish_dset(h5g_dset *d) {
  int rc = H5G_OK;
  hid_t space = H5I_INVALID_HID;
  CHECK_H5(space = H5Dget_space(d->id), "cannot read the shape (%s)", d->where);
  d->rank = H5Sget_simple_extent_ndims(space);
  if (d->rank < 1) H5G_FAIL(H5G_ERR_USAGE, "scalar dataset (%s)", d->where);
  H5Sget_simple_extent_dims(space, d->dims, NULL);
  d->row_elems = 1;
  for (int i = 1; i < d->rank; i++) d->row_elems *= d->dims[i];
  d->elem_size = H5Tget_size(d->mem_type);
  CHECK_H5(d->dxpl = collective_dxpl(), "cannot set up collective I/O (%s)", d->where);
done:
  CLOSE_ID(H5Sclose, space);
  return rc;
}

/* How a dataset opened for reading is read. Independently, with no MPI call inside HDF5, so a
 * read that fails on one rank (a corrupt chunk index; HDF5 1.10.8's collective read of filtered
 * chunks, which reads unwritten chunks at HADDR_UNDEF) cannot strand the others: transfer()
 * agrees after every piece. Only contiguous data lying wholly inside the file's allocated space
 * keeps the collective read (MPI-IO aggregation): there every rank sees the same layout message
 * and the same bounds, so HDF5 fails on all ranks or none before its MPI calls. */
static int choose_read_transfer(h5g_dset *d) {
  int rc = H5G_OK;
  hid_t dcpl = H5I_INVALID_HID;
  CHECK_H5(dcpl = H5Dget_create_plist(d->id), "cannot read the dataset's storage (%s)", d->where);
  int collective = H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0 &&
                   inside_file_end(d, H5Dget_offset(d->id), H5Dget_storage_size(d->id));
  if (!collective)
    CHECK_H5(H5Pset_dxpl_mpio(d->dxpl, H5FD_MPIO_INDEPENDENT), "cannot set up the read (%s)",
             d->where);
done:
  CLOSE_ID(H5Pclose, dcpl);
  return rc;
}

/* HDF5 1.10 reads no virtual dataset through MPI-IO ("parallel reads not supported on virtual
 * datasets"): each rank reads its rows of one through a serial handle of its own (a driver other
 * than the MPI-IO one, so HDF5 opens the file anew), sources included. */
static int reopen_virtual(h5g_dset *d, const char *dataset) {
  int rc = H5G_OK;
  hid_t dcpl = H5I_INVALID_HID;
  CHECK_H5(dcpl = H5Dget_create_plist(d->id), "cannot read the dataset's storage (%s)", d->where);
  if (H5Pget_layout(dcpl) != H5D_VIRTUAL) goto done;
  H5Dclose(d->id);
  d->id = H5I_INVALID_HID;
  CHECK_H5(d->own_file = H5Fopen(d->file->path, H5F_ACC_RDONLY, H5P_DEFAULT),
           "cannot open the file for the virtual dataset (%s)", d->where);
  CHECK_H5(d->id = H5Dopen2(d->own_file, dataset, H5P_DEFAULT), "cannot open dataset (%s)", d->where);
done:
  CLOSE_ID(H5Pclose, dcpl);
  return rc;
}

/* The local part of opening a dataset for reading: the handle, the memory type (raw: the file
 * type; else host byte order and, of a compound, only key_field), shape and transfer. */
static int open_for_reading(h5g_dset *d, const char *dataset, const char *key_field, int raw) {
  int rc = H5G_OK;
  hid_t member = H5I_INVALID_HID, native = H5I_INVALID_HID;
  CHECK_H5(d->id = H5Dopen2(d->file->id, dataset, H5P_DEFAULT), "cannot open dataset (%s)", d->where);
  CHECK(reopen_virtual(d, dataset));
  CHECK_H5(d->file_type = H5Dget_type(d->id), "cannot read the datatype (%s)", d->where);
  if (raw) {
    CHECK_H5(d->mem_type = H5Tcopy(d->file_type), "cannot copy the datatype (%s)", d->where);
  } else if (key_field) { /* a compound holding only the key field: HDF5 picks it out by name */
    int index = H5Tget_member_index(d->file_type, key_field);
    CHECK_H5(index, "no field '%s' (%s)", key_field, d->where);
    CHECK_H5(member = H5Tget_member_type(d->file_type, (unsigned)index), "bad field (%s)", d->where);
    CHECK_H5(native = native_order_copy(member), "cannot build the memory type (%s)", d->where);
    CHECK_H5(d->mem_type = H5Tcreate(H5T_COMPOUND, H5Tget_size(native)),
             "cannot build the memory type (%s)", d->where);
    CHECK_H5(H5Tinsert(d->mem_type, key_field, 0, native), "cannot build the memory type (%s)",
             d->where);
  } else {
    CHECK_H5(d->mem_type = native_order_copy(d->file_type), "cannot build the memory type (%s)",
             d->where);
  }
  CHECK(finish_dset(d));
  CHECK(choose_read_transfer(d));
done:
  CLOSE_ID(H5Tclose, native);
  CLOSE_ID(H5Tclose, member);
  return rc;
}

/* Collective: the ranks agree on the open (a corrupt file may fail it on one rank only) before
 * any of them goes on to a transfer. */
static int open_reading(h5g_file *f, const char *dataset, const char *key_field, int raw,
                        h5g_dset **out) {
  int rc = H5G_OK;
  h5g_dset *d = NULL;
  CHECK(new_dset(f, dataset, &d));
  CHECK(h5g_agree(f->comm, open_for_reading(d, dataset, key_field, raw)));
  *out = d;
  d = NULL;
done:
  h5g_io_close(d);
  return rc;
}

int h5g_io_open_keys(h5g_file *f, const char *dataset, const char *key_field, h5g_dset **out) {
  return open_reading(f, dataset, key_field, 0, out);
}

int h5g_io_open_rows(h5g_file *f, const char *dataset, h5g_dset **out) {
  return open_reading(f, dataset, NULL, 1, out);
}


/* Dataset creation properties for `storage` (NULL: contiguous); sets maxdims (an empty chunked
 * dataset is made extendible: a fixed-size one needs chunks no larger than itself). No fill
 * (every byte gets written) and no modification times (the same input gives a byte-identical
 * file). */
static int storage_properties(const h5g_io_storage *storage, int rank, const hsize_t *dims,
                              hsize_t *maxdims, const char *where, hid_t *dcpl) {
  int rc = H5G_OK;
  hsize_t chunk[H5S_MAX_RANK];
  for (int k = 0; k < rank; k++) maxdims[k] = chunk[k] = dims[k];
  CHECK_H5(*dcpl = H5Pcreate(H5P_DATASET_CREATE), "cannot create property list (%s)", where);
  CHECK_H5(H5Pset_fill_time(*dcpl, H5D_FILL_TIME_NEVER), "cannot set fill time (%s)", where);
  CHECK_H5(H5Pset_obj_track_times(*dcpl, 0), "cannot set up the dataset (%s)", where);
  if (!storage || storage->layout == H5G_IO_CONTIGUOUS) goto done;
  if (storage->chunk_rows == 0) H5G_FAIL(H5G_ERR_USAGE, "chunks of 0 rows (%s)", where);
  chunk[0] = dims[0] == 0 || storage->chunk_rows < dims[0] ? storage->chunk_rows : dims[0];
  if (dims[0] == 0) maxdims[0] = H5S_UNLIMITED;
  CHECK_H5(H5Pset_chunk(*dcpl, rank, chunk), "cannot set chunking (%s)", where);
  if (storage->shuffle) CHECK_H5(H5Pset_shuffle(*dcpl), "cannot set the shuffle filter (%s)", where);
  if (storage->gzip_level > 0)
    CHECK_H5(H5Pset_deflate(*dcpl, (unsigned)storage->gzip_level), "cannot set the deflate filter (%s)",
             where);
done:
  return rc;
}

/* Collective: every rank found `what` (an object of `where`), or none did. The ranks see the
 * same metadata, but a look-up that failed otherwise (out of memory) on one rank must not let the
 * others go on alone to the collective call that follows. */
static int agree_found(MPI_Comm comm, int found, const char *what, const char *where) {
  int rc = H5G_OK;
  int mine[2] = {found, -found}, all[2];
  CHECK_MPI(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, comm));
  if (all[0] != -all[1]) H5G_FAIL(H5G_ERR_RUNTIME, "cannot look up %s (%s)", what, where);
done:
  return rc;
}

/* Collective, where `dataset` exists in `out` (a copy of the input): 1 when its storage takes the
 * output in place (io/replace.c), and then d's handle is that dataset, its length set to
 * dims[0]; 0 when it is to be replaced. Every rank reads the same metadata, and agrees. */
static int open_in_place(h5g_file *out, const char *dataset, hid_t file_type, int rank,
                         const hsize_t *dims, hid_t dcpl, h5g_dset *d, int *in_place) {
  int rc = H5G_OK;
  hid_t existing = H5Dopen2(out->id, dataset, H5P_DEFAULT);
  int mine = existing >= 0 && h5g_io_takes_in_place_internal(out->id, existing, file_type, rank,
                                                             dims, 0, dcpl);
  CHECK_MPI(MPI_Allreduce(&mine, in_place, 1, MPI_INT, MPI_MIN, out->comm));
  if (!*in_place) goto done;
  hsize_t now[H5S_MAX_RANK];
  hid_t space = H5Dget_space(existing);
  int same_length = space >= 0 && H5Sget_simple_extent_dims(space, now, NULL) == rank &&
                    now[0] == dims[0];
  CLOSE_ID(H5Sclose, space);
  if (!same_length) { /* chunked (io/replace.c): shrinks or grows */
    CHECK_H5(H5Dset_extent(existing, dims), "cannot set the output's length (%s)", d->where);
    /* the cut fills the rest of a chunk it keeps in HDF5's chunk cache, which would write that
     * chunk back over the rows the transfers write past it: closing flushes and drops it */
    CHECK_H5(H5Dclose(existing), "cannot set the output's length (%s)", d->where);
    existing = H5I_INVALID_HID;
    CHECK_H5(existing = H5Dopen2(out->id, dataset, H5P_DEFAULT), "cannot open dataset (%s)",
             d->where);
  }
  CHECK_H5(d->file_type = H5Tcopy(file_type), "cannot copy the datatype (%s)", d->where);
  d->id = existing;
  existing = H5I_INVALID_HID;
done:
  CLOSE_ID(H5Dclose, existing);
  return rc;
}

/* Creates a dataset with intermediate groups. With `replace` (the output is a copy of the input),
 * a dataset of that name takes the rows in place where its storage can (d->in_place), else it is
 * replaced; validation made sure that nothing refers to one replaced and that no group is.
 * Without `replace`, an existing name is an error. */
static int create_dataset(h5g_file *out, const char *dataset, hid_t file_type, int rank,
                          const hsize_t *dims, hid_t dcpl, const hsize_t *maxdims, int replace,
                          h5g_dset *d) {
  int rc = H5G_OK;
  hid_t lcpl = H5I_INVALID_HID, space = H5I_INVALID_HID;
  int exists = replace && h5g_io_path_exists_internal(out->id, dataset);
  if (replace) CHECK(agree_found(out->comm, exists, dataset, out->path));
  if (exists) CHECK(open_in_place(out, dataset, file_type, rank, dims, dcpl, d, &d->in_place));
  if (d->in_place) goto done;
  if (exists)
    CHECK_H5(H5Ldelete(out->id, dataset, H5P_DEFAULT), "cannot replace the dataset (%s)", d->where);
  CHECK_H5(space = H5Screate_simple(rank, dims, maxdims), "cannot create dataspace (%s)", d->where);
  CHECK_H5(lcpl = H5Pcreate(H5P_LINK_CREATE), "cannot create property list (%s)", d->where);
  CHECK_H5(H5Pset_create_intermediate_group(lcpl, 1), "cannot set up groups (%s)", d->where);
  CHECK_H5(d->file_type = H5Tcopy(file_type), "cannot copy the datatype (%s)", d->where);
  CHECK_H5(d->id = H5Dcreate2(out->id, dataset, d->file_type, space, lcpl, dcpl, H5P_DEFAULT),
           replace ? "cannot create the output dataset (%s)"
                   : "cannot create the dataset (%s): does it exist already?", d->where);
done:
  CLOSE_ID(H5Pclose, lcpl);
  CLOSE_ID(H5Sclose, space);
  return rc;
}

typedef struct {
  MPI_Comm comm;
  hid_t target;
  int status;
} attr_copy;

/* The local half of an attribute copy: its type (a transient copy: committed types do not cross
 * files), shape and values. */
static int read_attribute(hid_t src, const char *name, hid_t *type, hid_t *space, void **buf) {
  int rc = H5G_OK;
  hid_t attr = H5I_INVALID_HID, stored = H5I_INVALID_HID;
  CHECK_H5(attr = H5Aopen(src, name, H5P_DEFAULT), "cannot copy attribute '%s'", name);
  CHECK_H5(stored = H5Aget_type(attr), "cannot copy attribute '%s'", name);
  CHECK_H5(*type = H5Tcopy(stored), "cannot copy attribute '%s'", name);
  CHECK_H5(*space = H5Aget_space(attr), "cannot copy attribute '%s'", name);
  hssize_t points = H5Sget_simple_extent_npoints(*space);
  size_t bytes = (size_t)(points > 0 ? points : 1) * H5Tget_size(*type);
  *buf = calloc(1, bytes);
  CHECK_ALLOC(*buf, bytes);
  CHECK_H5(H5Aread(attr, *type, *buf), "cannot copy attribute '%s'", name);
done:
  CLOSE_ID(H5Tclose, stored);
  CLOSE_ID(H5Aclose, attr);
  return rc;
}

static int write_attribute(hid_t target, const char *name, hid_t file_type, hid_t mem_type,
                           hid_t space, const void *buf) {
  int rc = H5G_OK;
  hid_t dst = H5I_INVALID_HID;
  char file[PATH_MAX] = "?", object[WHERE_MAX] = "?"; /* for messages */
  if (H5Fget_name(target, file, sizeof file) < 0) snprintf(file, sizeof file, "?");
  if (H5Iget_name(target, object, sizeof object) < 0) snprintf(object, sizeof object, "?");
  CHECK_H5(dst = H5Acreate2(target, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT),
           "cannot write attribute '%s' (%s:%s)", name, file, object);
  CHECK_H5(H5Awrite(dst, mem_type, buf), "cannot write attribute '%s' (%s:%s)", name, file,
           object);
done:
  CLOSE_ID(H5Aclose, dst);
  return rc;
}

/* Copies one attribute with its own datatype (variable-length data included). Every rank is
 * called for the same attributes in the same order; reading is local and creating collective,
 * so the ranks agree after each half and all stop at the same attribute when one fails. */
static herr_t copy_attribute(hid_t src, const char *name, const H5A_info_t *ainfo, void *data) {
  (void)ainfo;
  attr_copy *copy = data;
  int rc = H5G_OK;
  hid_t type = H5I_INVALID_HID, space = H5I_INVALID_HID;
  void *buf = NULL;
  int got = read_attribute(src, name, &type, &space, &buf);
  CHECK(h5g_agree(copy->comm, got));
  CHECK(h5g_agree(copy->comm, write_attribute(copy->target, name, type, type, space, buf)));
done:
  if (buf && got == H5G_OK &&
      (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0))
    H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
  free(buf);
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Tclose, type);
  copy->status = rc;
  return rc == H5G_OK ? 0 : -1;
}

/* A chunked output stays extendible where its source is (an appendable dataset stays one, as
 * h5repack keeps it). The ranks read the same metadata: a failed read keeps the fixed size. */
static void keep_unlimited(const h5g_dset *like, int rank, hsize_t *maxdims) {
  hsize_t like_max[H5S_MAX_RANK];
  hid_t space = H5Dget_space(like->id);
  if (space >= 0 && H5Sget_simple_extent_ndims(space) == rank &&
      H5Sget_simple_extent_dims(space, NULL, like_max) == rank)
    for (int k = 0; k < rank; k++)
      if (like_max[k] == H5S_UNLIMITED) maxdims[k] = H5S_UNLIMITED;
  CLOSE_ID(H5Sclose, space);
}

/* Collective: the creation properties of an output stored as `storage` resolved against the
 * storage of `like` (NULL: contiguous), agreed on before the collective create. */
static int like_properties(const h5g_dset *d, const h5g_dset *like, const h5g_io_storage_choice *storage,
                           int value_filters, hid_t file_type, int rank, const hsize_t *dims,
                           hid_t *dcpl, hsize_t *maxdims) {
  int rc = H5G_OK;
  static const h5g_io_storage_choice contiguous = {H5G_LAYOUT_CONTIGUOUS, 0, H5G_COMPRESS_NONE, 0};
  hid_t like_dcpl = like ? H5Dget_create_plist(like->id) : H5I_INVALID_HID;
  int made = like && like_dcpl < 0
                 ? h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "cannot read the storage (%s)",
                                 like->where)
                 : h5g_io_storage_plist_internal(like ? storage : &contiguous, like_dcpl,
                                                 value_filters ? like->file_type : H5I_INVALID_HID,
                                                 H5Tget_size(file_type), value_filters, rank, dims,
                                                 d->where, dcpl, maxdims);
  CHECK(h5g_agree(d->file->comm, made));
  if (like && H5Pget_layout(*dcpl) == H5D_CHUNKED) keep_unlimited(like, rank, maxdims);
done:
  CLOSE_ID(H5Pclose, like_dcpl);
  return rc;
}

/* The end of every create: the memory type the rows are written in, shape and transfer. */
static int finish_created(h5g_dset *d, hid_t mem_type) {
  int rc = H5G_OK;
  CHECK_H5(d->mem_type = H5Tcopy(mem_type), "cannot copy the memory type (%s)", d->where);
  CHECK(finish_dset(d));
done:
  return rc;
}

int h5g_io_create_like(h5g_file *out, const char *dataset, const h5g_dset *like, uint64_t rows,
                       const h5g_io_storage_choice *storage, h5g_dset **result) {
  int rc = H5G_OK;
  h5g_dset *d = NULL;
  hid_t dcpl = H5I_INVALID_HID;
  hsize_t maxdims[H5S_MAX_RANK], dims[H5S_MAX_RANK];
  memcpy(dims, like->dims, sizeof dims);
  dims[0] = rows;
  CHECK(new_dset(out, dataset, &d));
  CHECK(like_properties(d, like, storage, 1, like->file_type, like->rank, dims, &dcpl, maxdims));
  CHECK(create_dataset(out, dataset, like->file_type, like->rank, dims, dcpl, maxdims, 1, d));
  attr_copy copy = {out->comm, d->id, H5G_OK};
  hsize_t idx = 0;
  /* a dataset written in place has its attributes */
  if (!d->in_place &&
      H5Aiterate2(like->id, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, copy_attribute, &copy) < 0)
    H5G_FAIL(copy.status == H5G_OK ? H5G_ERR_RUNTIME : copy.status, "cannot copy attributes (%s)",
             d->where);
  /* a filtered output whose file type is not its memory type takes its rows in the file's form
   * (h5g_io_file_form) */
  H5T_class_t cls = H5Tget_class(like->mem_type);
  int raw = H5Pget_nfilters(dcpl) > 0 &&
            (cls == H5T_INTEGER || cls == H5T_FLOAT || cls == H5T_BITFIELD) &&
            H5Tequal(like->mem_type, like->file_type) <= 0;
  CHECK(finish_created(d, raw ? like->file_type : like->mem_type));
  *result = d;
  d = NULL;
done:
  CLOSE_ID(H5Pclose, dcpl);
  h5g_io_close(d);
  return rc;
}

int h5g_io_create_index_like(h5g_file *out, const char *dataset, uint64_t n, const h5g_dset *keys,
                             const h5g_io_storage_choice *storage, h5g_dset **result) {
  int rc = H5G_OK;
  h5g_dset *d = NULL;
  hid_t dcpl = H5I_INVALID_HID;
  hsize_t maxdims[H5S_MAX_RANK], dims = n;
  CHECK(new_dset(out, dataset, &d));
  CHECK(like_properties(d, keys, storage, 0, H5T_STD_U64LE, 1, &dims, &dcpl, maxdims));
  CHECK(create_dataset(out, dataset, H5T_STD_U64LE, 1, &dims, dcpl, maxdims, 1, d));
  CHECK(finish_created(d, H5T_NATIVE_UINT64));
  *result = d;
  d = NULL;
done:
  CLOSE_ID(H5Pclose, dcpl);
  h5g_io_close(d);
  return rc;
}

int h5g_io_create_index(h5g_file *out, const char *dataset, uint64_t n, h5g_dset **result) {
  return h5g_io_create_index_like(out, dataset, n, NULL, NULL, result);
}

int h5g_io_file_form(const h5g_dset *d) {
  H5T_class_t cls = H5Tget_class(d->mem_type);
  return (cls == H5T_INTEGER || cls == H5T_FLOAT || cls == H5T_BITFIELD) &&
         (padded_integer(d->mem_type) || H5Tget_order(d->mem_type) != H5Tget_order(H5T_NATIVE_INT));
}

int h5g_io_convert_rows(const h5g_dset *d, void *buf, uint64_t rows, int to_file) {
  int rc = H5G_OK;
  hid_t native = H5I_INVALID_HID;
  size_t count = (size_t)(rows * d->row_elems);
  CHECK_H5(native = native_order_copy(d->file_type), "cannot build the memory type (%s)", d->where);
  CHECK_H5(H5Tconvert(to_file ? native : d->file_type, to_file ? d->file_type : native, count, buf,
                      NULL, H5P_DEFAULT),
           "cannot convert the rows to the %s's form (%s)", to_file ? "file" : "host", d->where);
done:
  CLOSE_ID(H5Tclose, native);
  return rc;
}

int h5g_io_copy_group_attributes(h5g_file *in, h5g_file *out, const char *group) {
  int rc = H5G_OK;
  hid_t src = H5I_INVALID_HID, dst = H5I_INVALID_HID;
  H5O_info_t a, b;
  /* a missing link on the way fails the look-up: "no such group" */
  int found = H5Oget_info_by_name(in->id, group, &a, H5P_DEFAULT) >= 0 &&
              H5Oget_info_by_name(out->id, group, &b, H5P_DEFAULT) >= 0 &&
              a.type == H5O_TYPE_GROUP && b.type == H5O_TYPE_GROUP;
  CHECK(agree_found(out->comm, found, group, out->path));
  if (!found) goto done;
  src = H5Gopen2(in->id, group, H5P_DEFAULT);
  dst = H5Gopen2(out->id, group, H5P_DEFAULT);
  int opened = src >= 0 && dst >= 0 ? H5G_OK
                                    : h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                    "cannot open group %s (%s)", group, out->path);
  CHECK(h5g_agree(out->comm, opened));
  attr_copy copy = {out->comm, dst, H5G_OK};
  hsize_t idx = 0;
  if (H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, copy_attribute, &copy) < 0)
    H5G_FAIL(copy.status == H5G_OK ? H5G_ERR_RUNTIME : copy.status,
             "cannot copy the attributes of group %s (%s)", group, out->path);
done:
  CLOSE_ID(H5Gclose, dst);
  CLOSE_ID(H5Gclose, src);
  return rc;
}

int h5g_io_create(h5g_file *f, const char *dataset, hid_t file_type, hid_t mem_type, int rank,
                  const hsize_t *dims, const h5g_io_storage *storage, h5g_dset **result) {
  int rc = H5G_OK;
  h5g_dset *d = NULL;
  hid_t dcpl = H5I_INVALID_HID;
  hsize_t maxdims[H5S_MAX_RANK];
  CHECK(new_dset(f, dataset, &d));
  CHECK(storage_properties(storage, rank, dims, maxdims, d->where, &dcpl));
  CHECK(create_dataset(f, dataset, file_type, rank, dims, dcpl, maxdims, 0, d));
  CHECK(finish_created(d, mem_type));
  *result = d;
  d = NULL;
done:
  CLOSE_ID(H5Pclose, dcpl);
  h5g_io_close(d);
  return rc;
}

int h5g_io_write_attribute(h5g_dset *d, const char *name, hid_t file_type, hid_t mem_type,
                           uint64_t n, const void *buf) {
  int rc = H5G_OK;
  hid_t space = H5I_INVALID_HID;
  hsize_t dims = n;
  space = n ? H5Screate_simple(1, &dims, NULL) : H5Screate(H5S_SCALAR);
  int made = space >= 0 ? H5G_OK
                        : h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                        "cannot write attribute '%s' (%s)", name, d->where);
  CHECK(h5g_agree(d->file->comm, made)); /* creating it is collective */
  CHECK(h5g_agree(d->file->comm, write_attribute(d->id, name, file_type, mem_type, space, buf)));
done:
  CLOSE_ID(H5Sclose, space);
  return rc;
}

size_t h5g_io_row_bytes(const h5g_dset *d) { return (size_t)d->row_elems * d->elem_size; }

int h5g_io_unconverted(const h5g_dset *d) { return H5Tequal(d->mem_type, d->file_type) > 0; }

int h5g_io_plain_field(const h5g_dset *d, const char *name, size_t *offset, int *big_endian) {
  hid_t member = H5I_INVALID_HID;
  int index = H5Tget_class(d->file_type) == H5T_COMPOUND ? H5Tget_member_index(d->file_type, name)
                                                          : -1;
  if (index < 0 || (member = H5Tget_member_type(d->file_type, (unsigned)index)) < 0) return 0;
  H5T_class_t cls = H5Tget_class(member);
  size_t size = H5Tget_size(member);
  int plain = (cls == H5T_INTEGER || cls == H5T_BITFIELD || cls == H5T_FLOAT) &&
              (size == 1 || size == 2 || size == 4 || size == 8) && !padded_integer(member);
  *offset = H5Tget_member_offset(d->file_type, (unsigned)index);
  *big_endian = H5Tget_order(member) == H5T_ORDER_BE;
  H5Tclose(member);
  return plain;
}

int h5g_io_close(h5g_dset *d) {
  int rc = H5G_OK;
  if (!d) return rc;
  CLOSE_ID(H5Pclose, d->dxpl);
  CLOSE_ID(H5Tclose, d->mem_type);
  CLOSE_ID(H5Tclose, d->file_type);
  if (d->id >= 0 && H5Dclose(d->id) < 0)
    rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "cannot close the dataset (%s)",
                       d->where);
  CLOSE_ID(H5Fclose, d->own_file);
  free(d);
  return rc;
}

/* Collective transfer of rows [row, row + rows) in pieces of at most h5g_io_piece_bytes().
 * Every rank makes the same number of H5Dread/H5Dwrite calls (empty selections where it has
 * nothing left) and the ranks agree after each piece, so a failure on one rank never leaves the
 * others waiting inside the next collective call; every rank then holds the failing rank's error. */
/* One rank's status for a piece: the caller's own error (already recorded), else HDF5's. */
static int piece_status(int failed, int piece_rc, int writing, const char *where) {
  if (!failed) return H5G_OK;
  return h5g_error_set(piece_rc != H5G_OK ? piece_rc : H5G_ERR_RUNTIME, __FILE__, __LINE__,
                       "cannot %s the dataset (%s)", writing ? "write" : "read", where);
}

static int transfer(h5g_dset *d, uint64_t row, uint64_t rows, void *buf, int writing,
                    h5g_io_piece_fn each, void *ctx) {
  int rc = H5G_OK;
  MPI_Comm comm = d->file->comm;
  hid_t file_space = H5I_INVALID_HID, mem_space = H5I_INVALID_HID;
  h5g_chunk_index *index = NULL;
  size_t row_bytes = h5g_io_row_bytes(d);
  if (row_bytes == 0) goto done; /* rows of zero elements: nothing to move, on every rank */
  /* direct transfers when every rank can make them: no collective call inside, one agreement
   * at the end. Chunks are written directly by a run of one rank only (io/chunked.h). */
  enum { THROUGH_HDF5, CONTIGUOUS_BYTES, CHUNKS };
  h5g_chunked_source chunked;
  int ranks;
  CHECK_MPI(MPI_Comm_size(comm, &ranks));
  off_t offset = direct_offset(d, writing);
  int chunks = chunked_source(d, writing, &chunked) &&
               (!writing || (ranks == 1 && chunked.pipeline.count > 0 &&
                             whole_chunks(&chunked, row, rows)));
  int mode = offset >= 0 ? CONTIGUOUS_BYTES : chunks ? CHUNKS : THROUGH_HDF5;
  int modes[2] = {mode, -mode}, agreed[2];
  CHECK_MPI(MPI_Allreduce(modes, agreed, 2, MPI_INT, MPI_MIN, comm));
  if (agreed[0] != -agreed[1]) mode = THROUGH_HDF5;
  if (mode == CONTIGUOUS_BYTES) {
    CHECK(h5g_agree(comm, h5g_direct_transfer(d->file->path, offset + (off_t)(row * row_bytes), buf,
                                              rows, row_bytes,
                                              writing ? io_config.write : H5G_DIRECT_READ,
                                              io_config.threads, each,
                                              ctx, d->where)));
    goto done;
  }
  if (mode == CHUNKS && writing) {
    CHECK(h5g_agree(comm, h5g_chunked_write(&chunked, row, rows, buf, io_config.threads, each, ctx)));
    goto done;
  }
  if (mode == CHUNKS && d->chunk_index == 0) CHECK(chunk_index_adds_up(d, &chunked));
  if (mode == CHUNKS && d->chunk_index > 0) {
    uint64_t counted;
    int status = h5g_chunked_index(&chunked, row, rows, &index, &counted);
    if (status == H5G_OK)
      status = h5g_chunked_read(&chunked, index, row, rows, buf, io_config.threads, each, ctx);
    CHECK(h5g_agree(comm, status));
    goto done;
  }
  uint64_t piece = h5g_io_piece_bytes() / row_bytes;
  if (piece == 0) piece = 1;
  uint64_t my_pieces = (rows + piece - 1) / piece, pieces = 0;
  CHECK_MPI(MPI_Allreduce(&my_pieces, &pieces, 1, MPI_UINT64_T, MPI_MAX, comm));
  file_space = H5Dget_space(d->id);
  CHECK(h5g_agree(comm, piece_status(file_space < 0, H5G_OK, writing, d->where)));
  for (uint64_t i = 0; i < pieces; i++) {
    uint64_t done_rows = i * piece;
    uint64_t len = done_rows < rows ? (rows - done_rows < piece ? rows - done_rows : piece) : 0;
    hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
    start[0] = row + done_rows;
    count[0] = len;
    for (int k = 1; k < d->rank; k++) count[k] = d->dims[k];
    hsize_t mem_len = len ? len * d->row_elems : 1;
    int failed = 0;
    mem_space = H5Screate_simple(1, &mem_len, NULL);
    if (mem_space < 0) failed = 1;
    if (!failed && len == 0)
      failed = H5Sselect_none(mem_space) < 0 || H5Sselect_none(file_space) < 0;
    if (!failed && len > 0)
      failed = H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) < 0;
    char *ptr = (char *)buf + (len ? done_rows * row_bytes : 0);
    static char dummy[64];
    int piece_rc = H5G_OK; /* the caller's own status for this piece, its error already recorded */
    if (!failed && each && len) failed = (piece_rc = each(ctx, done_rows, len, 0)) != H5G_OK;
    /* every rank, or none, makes the collective call */
    CHECK(h5g_agree(comm, piece_status(failed, piece_rc, writing, d->where)));
    herr_t st = writing ? H5Dwrite(d->id, d->mem_type, mem_space, file_space, d->dxpl, len ? ptr : dummy)
                        : H5Dread(d->id, d->mem_type, mem_space, file_space, d->dxpl, len ? ptr : dummy);
    failed = st < 0;
    if (!failed && each && len) failed = (piece_rc = each(ctx, done_rows, len, 1)) != H5G_OK;
    H5Sclose(mem_space);
    mem_space = H5I_INVALID_HID;
    CHECK(h5g_agree(comm, piece_status(failed, piece_rc, writing, d->where)));
  }
done:
  h5g_chunked_index_free(index);
  CLOSE_ID(H5Sclose, mem_space);
  CLOSE_ID(H5Sclose, file_space);
  return rc;
}

int h5g_io_read(h5g_dset *d, uint64_t row, uint64_t rows, void *buf) {
  return transfer(d, row, rows, buf, 0, NULL, NULL);
}

int h5g_io_write(h5g_dset *d, uint64_t row, uint64_t rows, const void *buf) {
  return transfer(d, row, rows, (void *)buf, 1, NULL, NULL);
}

int h5g_io_read_each(h5g_dset *d, uint64_t row, uint64_t rows, void *buf, h5g_io_piece_fn each,
                     void *ctx) {
  return transfer(d, row, rows, buf, 0, each, ctx);
}

int h5g_io_write_each(h5g_dset *d, uint64_t row, uint64_t rows, const void *buf,
                      h5g_io_piece_fn each, void *ctx) {
  return transfer(d, row, rows, (void *)buf, 1, each, ctx);
}
