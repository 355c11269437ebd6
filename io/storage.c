/* Output storage (--layout, --chunk, --compress): the choice resolved, for each dataset written,
 * against the creation properties of the dataset it is made like, as h5repack does. Under "keep"
 * the output has the source's chunk length and filter pipeline (same filters, order, flags and
 * parameters); contiguous, compact and virtual sources give contiguous output. */
#include <hdf5.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"
#include "io/h5io_pkg.h"

/* Chunk length when the source has none to keep: about 1 MiB per chunk (HDF5's default chunk
 * cache size, so a chunk being filtered fits in it). */
#define DEFAULT_CHUNK_BYTES ((uint64_t)1 << 20)
/* HDF5 refuses chunks of 4 GiB and more. */
#define MAX_CHUNK_BYTES (((uint64_t)1 << 32) - 1)

/* Filters whose parameters describe the values of the source's datatype (lossy or not, they
 * make no sense for another type: the index that follows the keys leaves them out). */
static int value_filter(H5Z_filter_t id) {
  return id == H5Z_FILTER_SCALEOFFSET || id == H5Z_FILTER_NBIT;
}

/* The source's filters in its order, with their flags and parameters (HDF5's set_local callbacks
 * recompute the type-dependent ones, e.g. shuffle's element size, when the dataset is made). */
static int copy_filters(hid_t from, hid_t to, int value_filters, const char *where) {
  int rc = H5G_OK;
  int count = H5Pget_nfilters(from);
  CHECK_H5(count, "cannot read the filters (%s)", where);
  for (unsigned i = 0; i < (unsigned)count; i++) {
    unsigned flags = 0, config = 0, values[32];
    size_t nvalues = sizeof values / sizeof *values;
    char name[64];
    H5Z_filter_t id = H5Pget_filter2(from, i, &flags, &nvalues, values, sizeof name, name, &config);
    CHECK_H5(id, "cannot read filter %u (%s)", i, where);
    if (nvalues > sizeof values / sizeof *values)
      H5G_FAIL(H5G_ERR_USAGE, "filter %d has %zu parameters, more than h5gsort copies (%s)",
               (int)id, nvalues, where);
    if (!value_filters && value_filter(id)) continue;
    /* HDF5 1.10.8's MPI build stores a chunk szip cannot shrink unfiltered but with a filter
     * mask of 0: no reader decodes it (the output read back as other numbers) */
    if (id == H5Z_FILTER_SZIP)
      H5G_FAIL(H5G_ERR_USAGE, "the output would keep the input's szip filter, which parallel "
               "HDF5 1.10 writes unreadably where szip cannot shrink a chunk; give --compress "
               "gzip or --compress none (%s)", where);
    CHECK_H5(H5Pset_filter(to, id, flags, nvalues, values), "cannot set filter %d (%s)", (int)id,
             where);
  }
done:
  return rc;
}

/* The source's own fill value, when it has one (same datatype only). */
static int copy_fill_value(hid_t from, hid_t to, hid_t file_type, const char *where) {
  int rc = H5G_OK;
  H5D_fill_value_t defined;
  unsigned char value[256];
  if (file_type < 0 || H5Tget_size(file_type) > sizeof value) goto done;
  CHECK_H5(H5Pfill_value_defined(from, &defined), "cannot read the fill value (%s)", where);
  if (defined != H5D_FILL_VALUE_USER_DEFINED) goto done;
  CHECK_H5(H5Pget_fill_value(from, file_type, value), "cannot read the fill value (%s)", where);
  CHECK_H5(H5Pset_fill_value(to, file_type, value), "cannot set the fill value (%s)", where);
done:
  return rc;
}

/* Chunk dimensions: the source's (same rank), else DEFAULT_CHUNK_BYTES worth of whole rows;
 * --chunk replaces the row count; each dimension at most the dataset's (fixed dimensions need
 * chunks no larger than themselves). Zero-length dimensions are made extendible, since a chunk
 * has at least one element. */
static int chunk_dims(const h5g_io_storage_choice *c, hid_t like_dcpl, int like_chunked,
                      size_t elem_bytes, int rank, const hsize_t *dims, const char *where,
                      hsize_t *chunk, hsize_t *maxdims) {
  int rc = H5G_OK;
  uint64_t row_elems = 1;
  for (int k = 1; k < rank; k++) row_elems *= dims[k] ? dims[k] : 1;
  if (like_chunked && H5Pget_chunk(like_dcpl, rank, chunk) == rank) {
    /* the source's chunk */
  } else {
    uint64_t row_bytes = row_elems * elem_bytes;
    chunk[0] = row_bytes && row_bytes < DEFAULT_CHUNK_BYTES ? DEFAULT_CHUNK_BYTES / row_bytes : 1;
    for (int k = 1; k < rank; k++) chunk[k] = dims[k];
  }
  if (c->chunk_rows) chunk[0] = c->chunk_rows;
  uint64_t bytes = elem_bytes;
  for (int k = 0; k < rank; k++) {
    if (dims[k] == 0) maxdims[k] = H5S_UNLIMITED;
    else if (chunk[k] > dims[k]) chunk[k] = dims[k];
    if (chunk[k] == 0) chunk[k] = 1;
    bytes = bytes > MAX_CHUNK_BYTES ? bytes : bytes * chunk[k];
  }
  if (bytes > MAX_CHUNK_BYTES)
    H5G_FAIL(H5G_ERR_USAGE, "chunks of %llu rows would be 4 GiB or more, over HDF5's limit; give a "
             "smaller --chunk (%s)", (unsigned long long)chunk[0], where);
done:
  return rc;
}

int h5g_io_storage_plist_internal(const h5g_io_storage_choice *choice, hid_t like_dcpl,
                                  hid_t file_type, size_t elem_bytes, int value_filters, int rank,
                                  const hsize_t *dims, const char *where, hid_t *dcpl,
                                  hsize_t *maxdims) {
  int rc = H5G_OK;
  static const h5g_io_storage_choice keep = {H5G_LAYOUT_KEEP, 0, H5G_COMPRESS_KEEP, 0};
  const h5g_io_storage_choice *c = choice ? choice : &keep;
  hsize_t chunk[H5S_MAX_RANK];
  int like_chunked = like_dcpl >= 0 && H5Pget_layout(like_dcpl) == H5D_CHUNKED;
  int chunked = c->layout == H5G_LAYOUT_CHUNKED ||
                (c->layout == H5G_LAYOUT_KEEP &&
                 (like_chunked || c->chunk_rows ||
                  (c->compress != H5G_COMPRESS_KEEP && c->compress != H5G_COMPRESS_NONE)));
  *dcpl = H5I_INVALID_HID;
  for (int k = 0; k < rank; k++) maxdims[k] = dims[k];
  /* a fresh list, not a copy of the source's: no external files, virtual mappings, allocation
   * or fill times of a serial writer, or modification times (the same input gives a
   * byte-identical file). Fill time "never": every element is written; HDF5 1.10.8 accepts it,
   * and its default (incremental) allocation, for collective writes of filtered datasets. */
  CHECK_H5(*dcpl = H5Pcreate(H5P_DATASET_CREATE), "cannot create property list (%s)", where);
  CHECK_H5(H5Pset_fill_time(*dcpl, H5D_FILL_TIME_NEVER), "cannot set fill time (%s)", where);
  CHECK_H5(H5Pset_obj_track_times(*dcpl, 0), "cannot set up the dataset (%s)", where);
  if (like_dcpl >= 0) CHECK(copy_fill_value(like_dcpl, *dcpl, file_type, where));
  if (!chunked) goto done;
  CHECK(chunk_dims(c, like_dcpl, like_chunked, elem_bytes, rank, dims, where, chunk, maxdims));
  CHECK_H5(H5Pset_chunk(*dcpl, rank, chunk), "cannot set chunking (%s)", where);
  if (c->compress == H5G_COMPRESS_GZIP) {
    if (elem_bytes > 1) CHECK_H5(H5Pset_shuffle(*dcpl), "cannot set the shuffle filter (%s)", where);
    CHECK_H5(H5Pset_deflate(*dcpl, (unsigned)c->gzip_level), "cannot set the deflate filter (%s)",
             where);
  } else if (c->compress == H5G_COMPRESS_SCALEOFFSET) {
    CHECK_H5(H5Pset_scaleoffset(*dcpl, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT),
             "cannot set the scale-offset filter (%s)", where);
  } else if (c->compress == H5G_COMPRESS_NBIT) {
    CHECK_H5(H5Pset_nbit(*dcpl), "cannot set the n-bit filter (%s)", where);
  } else if (c->compress == H5G_COMPRESS_KEEP && like_chunked) {
    CHECK(copy_filters(like_dcpl, *dcpl, value_filters, where));
  }
done:
  if (rc != H5G_OK && *dcpl >= 0) {
    H5Pclose(*dcpl);
    *dcpl = H5I_INVALID_HID;
  }
  return rc;
}

int h5g_io_inspect_storage(const char *file, const char *dataset,
                           const h5g_io_storage_choice *choice, int value_filters,
                           const h5g_io_target *target, int *filtered) {
  int rc = H5G_OK;
  hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID, like = H5I_INVALID_HID,
        type = H5I_INVALID_HID, space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
  hsize_t dims[H5S_MAX_RANK], maxdims[H5S_MAX_RANK];
  char where[1024];
  snprintf(where, sizeof where, "%s:%s", file, dataset);
  *filtered = 0;
  CHECK_H5(fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), "cannot open the file (%s)", where);
  CHECK_H5(did = H5Dopen2(fid, dataset, H5P_DEFAULT), "cannot open the dataset (%s)", where);
  CHECK_H5(like = H5Dget_create_plist(did), "cannot read the storage (%s)", where);
  CHECK_H5(type = H5Dget_type(did), "cannot read the datatype (%s)", where);
  CHECK_H5(space = H5Dget_space(did), "cannot read the shape (%s)", where);
  int rank = H5Sget_simple_extent_ndims(space);
  CHECK_H5(rank, "cannot read the shape (%s)", where);
  H5Sget_simple_extent_dims(space, dims, NULL);
  /* the index follows the keys: 8-byte elements, one per key */
  size_t elem = value_filters ? H5Tget_size(type) : sizeof(uint64_t);
  if (!value_filters) rank = 1;
  if (target) dims[0] = target->rows;
  CHECK(h5g_io_storage_plist_internal(choice, like, value_filters ? type : H5I_INVALID_HID, elem,
                                      value_filters, rank, dims, where, &dcpl, maxdims));
  *filtered = H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_nfilters(dcpl) > 0;
  if (target)
    CHECK(h5g_io_inspect_target_internal(fid, target->path,
                                         value_filters ? type : H5T_STD_U64LE, rank, dims,
                                         target->rows_change, dcpl, file));
done:
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  if (like >= 0) H5Pclose(like);
  if (did >= 0) H5Dclose(did);
  if (fid >= 0) H5Fclose(fid);
  return rc;
}
