/* Datasets (io/h5io.h): opened for reading as keys or raw rows, created like another with its
 * storage resolved (io/storage.c) or written in place (io/replace.c), closed collectively. */
#include "io/h5io_pkg.h"

#include "io/convert.h"

#include <hdf5.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"
#include "mpi/agree.h"

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
    int bits = H5Tget_class(file_type) == H5T_BITFIELD;
    int is_signed = !bits && H5Tget_sign(file_type) == H5T_SGN_2;
    int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3; /* by width: 1, 2, 4, 8 bytes */
    const hid_t bitfield[] = {H5T_NATIVE_B8, H5T_NATIVE_B16, H5T_NATIVE_B32, H5T_NATIVE_B64};
    const hid_t sint[] = {H5T_NATIVE_INT8, H5T_NATIVE_INT16, H5T_NATIVE_INT32, H5T_NATIVE_INT64};
    const hid_t uint[] = {H5T_NATIVE_UINT8, H5T_NATIVE_UINT16, H5T_NATIVE_UINT32,
                          H5T_NATIVE_UINT64};
    return H5Tcopy(bits ? bitfield[k] : is_signed ? sint[k] : uint[k]);
  }
  hid_t mem = H5Tcopy(file_type);
  if (mem >= 0 && H5Tset_order(mem, H5Tget_order(H5T_NATIVE_INT)) < 0) {
    H5Tclose(mem);
    return H5I_INVALID_HID;
  }
  return mem;
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
  CHECK_H5(d->dxpl = h5g_io_collective_dxpl_internal(), "cannot set up collective I/O (%s)", d->where);
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
                   h5g_io_inside_file_end_internal(d, H5Dget_offset(d->id), H5Dget_storage_size(d->id));
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

/* Collective: every rank found `what` (an object of `where`), or none did. The ranks see the
 * same metadata, but a look-up that failed otherwise (out of memory) on one rank must not let the
 * others go on alone to the collective call that follows. */
int h5g_io_agree_found_internal(MPI_Comm comm, int found, const char *what, const char *where) {
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
  /* an external link is followed read-only: validation refuses one on a written path, and no
   * file but the output's may be opened for writing (HDF5 would mark it open for write) */
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS); /* a link access list too */
  hid_t existing = dapl >= 0 && H5Pset_elink_acc_flags(dapl, H5F_ACC_RDONLY) >= 0
                       ? H5Dopen2(out->id, dataset, dapl)
                       : H5I_INVALID_HID;
  int mine = existing >= 0 && h5g_io_takes_in_place_internal(out->id, existing, file_type, rank,
                                                             dims, 0, dcpl);
  CLOSE_ID(H5Pclose, dapl);
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
  if (replace) CHECK(h5g_io_agree_found_internal(out->comm, exists, dataset, out->path));
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
  /* a dataset written in place has its attributes */
  if (!d->in_place) CHECK(h5g_io_copy_attributes_internal(out->comm, like->id, d->id, d->where));
  /* an output whose file type is not its memory type takes its rows in the file's form
   * (h5g_io_file_form) */
  H5T_class_t cls = H5Tget_class(like->mem_type);
  int raw = (cls == H5T_INTEGER || cls == H5T_FLOAT || cls == H5T_BITFIELD) &&
            H5Tequal(like->mem_type, like->file_type) <= 0;
  CHECK(finish_created(d, raw ? like->file_type : like->mem_type));
  *result = d;
  d = NULL;
done:
  CLOSE_ID(H5Pclose, dcpl);
  h5g_io_close(d);
  return rc;
}

/* The end of a create whose creation properties are made: the dataset, its memory type. */
static int create_made(h5g_file *out, const char *dataset, hid_t file_type, hid_t mem_type,
                       int rank, const hsize_t *dims, hid_t dcpl, const hsize_t *maxdims,
                       int replace, h5g_dset *d, h5g_dset **result) {
  int rc = H5G_OK;
  CHECK(create_dataset(out, dataset, file_type, rank, dims, dcpl, maxdims, replace, d));
  CHECK(finish_created(d, mem_type));
  *result = d;
done:
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
  CHECK(create_made(out, dataset, H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &dims, dcpl, maxdims, 1,
                    d, result));
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
  h5g_convert plan;
  CHECK_H5(native = native_order_copy(d->file_type), "cannot build the memory type (%s)", d->where);
  /* a byte swap (either way) or a widening (to the host) by the rank's threads; else HDF5 */
  if (h5g_convert_plan(d->file_type, native, &plan) && plan.active &&
      (!to_file || plan.precision == 8 * plan.size)) {
    h5g_convert_apply_threads(&plan, buf, count * plan.size, h5g_io_config_internal.threads);
    goto done;
  }
  CHECK_H5(H5Tconvert(to_file ? native : d->file_type, to_file ? d->file_type : native, count, buf,
                      NULL, H5P_DEFAULT),
           "cannot convert the rows to the %s's form (%s)", to_file ? "file" : "host", d->where);
done:
  CLOSE_ID(H5Tclose, native);
  return rc;
}

int h5g_io_create(h5g_file *f, const char *dataset, hid_t file_type, hid_t mem_type, int rank,
                  const hsize_t *dims, const h5g_io_storage_choice *storage, h5g_dset **result) {
  int rc = H5G_OK;
  h5g_dset *d = NULL;
  hid_t dcpl = H5I_INVALID_HID;
  hsize_t maxdims[H5S_MAX_RANK];
  CHECK(new_dset(f, dataset, &d));
  static const h5g_io_storage_choice contiguous = {H5G_LAYOUT_CONTIGUOUS, 0, H5G_COMPRESS_NONE, 0};
  CHECK(h5g_agree(f->comm, h5g_io_storage_plist_internal(storage ? storage : &contiguous,
                                                         H5I_INVALID_HID, H5I_INVALID_HID,
                                                         H5Tget_size(mem_type), 1, rank, dims,
                                                         d->where, &dcpl, maxdims)));
  CHECK(create_made(f, dataset, file_type, mem_type, rank, dims, dcpl, maxdims, 0, d, result));
  d = NULL;
done:
  CLOSE_ID(H5Pclose, dcpl);
  h5g_io_close(d);
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
