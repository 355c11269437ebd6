#include "io/h5io.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "src/error.h"

/* HDF5 calls return negative on failure; turn that into one user-facing message. */
#define CHECK_H5(call, ...)                                                                       \
  do {                                                                                            \
    if ((call) < 0) H5G_FAIL(H5G_ERR_RUNTIME, __VA_ARGS__);                                       \
  } while (0)

#define CLOSE_ID(closer, id)                                                                      \
  do {                                                                                            \
    if ((id) >= 0) closer(id);                                                                    \
  } while (0)

#define WHERE_MAX 1024

struct h5g_input {
  MPI_Comm comm;
  hid_t file, dset, file_type, mem_type, dxpl;
  unsigned width;
  char where[WHERE_MAX];
};

struct h5g_output {
  MPI_Comm comm;
  hid_t file, dset, mem_type, dxpl;
  unsigned width;
  char where[WHERE_MAX];
};

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

static const char *class_name(H5T_class_t c) {
  switch (c) {
  case H5T_STRING: return "string";
  case H5T_COMPOUND: return "compound";
  case H5T_ENUM: return "enum";
  case H5T_OPAQUE: return "opaque";
  case H5T_VLEN: return "variable-length";
  case H5T_ARRAY: return "array";
  case H5T_REFERENCE: return "reference";
  case H5T_BITFIELD: return "bitfield";
  case H5T_TIME: return "time";
  default: return "unknown";
  }
}

/* True when every prefix of `path` exists as a link (H5Lexists fails on missing parents). */
static int path_exists(hid_t loc, const char *path) {
  char prefix[WHERE_MAX];
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof prefix) return 0;
  for (size_t i = 1; i <= len; i++) {
    if (i < len && path[i] != '/') continue;
    memcpy(prefix, path, i);
    prefix[i] = '\0';
    if (strcmp(prefix, "/") == 0) continue;
    if (H5Lexists(loc, prefix, H5P_DEFAULT) <= 0) return 0;
  }
  return 1;
}

/* Fills cls/width/type_name from an HDF5 file datatype, or fails with a usage error naming it. */
static int classify_type(hid_t type, h5g_dataset_info *info, const char *where) {
  int rc = H5G_OK;
  H5T_class_t cls = H5Tget_class(type);
  size_t size = H5Tget_size(type);
  size_t precision = H5Tget_precision(type);
  int big = H5Tget_order(type) == H5T_ORDER_BE;
  const char *order = big ? " (big-endian)" : "";
  if (cls == H5T_INTEGER) {
    int is_signed = H5Tget_sign(type) == H5T_SGN_2;
    if ((size != 1 && size != 2 && size != 4 && size != 8) || precision != 8 * size ||
        H5Tget_offset(type) != 0)
      H5G_FAIL(H5G_ERR_USAGE, "unsupported integer type of %zu bytes and %zu bits (%s)", size,
               precision, where);
    info->cls = is_signed ? H5G_KEY_SIGNED : H5G_KEY_UNSIGNED;
    snprintf(info->type_name, sizeof info->type_name, "%sint%zu%s", is_signed ? "" : "u",
             8 * size, order);
  } else if (cls == H5T_FLOAT) {
    size_t spos, epos, esize, mpos, msize;
    CHECK_H5(H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize),
             "cannot read the float format (%s)", where);
    int ieee32 = size == 4 && spos == 31 && epos == 23 && esize == 8 && mpos == 0 && msize == 23;
    int ieee64 = size == 8 && spos == 63 && epos == 52 && esize == 11 && mpos == 0 && msize == 52;
    if (!ieee32 && !ieee64)
      H5G_FAIL(H5G_ERR_USAGE, "unsupported float type of %zu bytes (only IEEE float32/float64) (%s)",
               size, where);
    info->cls = H5G_KEY_FLOAT;
    snprintf(info->type_name, sizeof info->type_name, "float%zu%s", 8 * size, order);
  } else {
    H5G_FAIL(H5G_ERR_USAGE, "unsupported datatype: %s (h5gsort sorts integer and float datasets) (%s)",
             class_name(cls), where);
  }
  info->width = (unsigned)size;
  info->big_endian = big;
done:
  return rc;
}

int h5g_io_inspect(const char *file, const char *dataset, h5g_dataset_info *info) {
  int rc = H5G_OK;
  hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID, type = H5I_INVALID_HID,
        space = H5I_INVALID_HID;
  char where[WHERE_MAX];
  snprintf(where, sizeof where, "%s:%s", file, dataset);
  memset(info, 0, sizeof *info);

  FILE *probe = fopen(file, "rb");
  if (!probe) H5G_FAIL(H5G_ERR_USAGE, "cannot open input file (%s)", where);
  fclose(probe);
  if (H5Fis_hdf5(file) <= 0) H5G_FAIL(H5G_ERR_USAGE, "not an HDF5 file (%s)", where);
  fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (fid < 0) H5G_FAIL(H5G_ERR_USAGE, "cannot open the HDF5 file: truncated or corrupt (%s)", where);
  if (dataset[0] != '/' || !path_exists(fid, dataset))
    H5G_FAIL(H5G_ERR_USAGE, "no such dataset (%s)", where);
  H5O_info_t oinfo;
  if (H5Oget_info_by_name(fid, dataset, &oinfo, H5P_DEFAULT) < 0)
    H5G_FAIL(H5G_ERR_USAGE, "cannot open the object: file corrupt? (%s)", where);
  if (oinfo.type != H5O_TYPE_DATASET)
    H5G_FAIL(H5G_ERR_USAGE, "not a dataset: it is a %s (%s)",
             oinfo.type == H5O_TYPE_GROUP ? "group" : "named datatype", where);
  did = H5Dopen2(fid, dataset, H5P_DEFAULT);
  if (did < 0) H5G_FAIL(H5G_ERR_USAGE, "cannot open the dataset: file corrupt? (%s)", where);
  type = H5Dget_type(did);
  space = H5Dget_space(did);
  if (type < 0 || space < 0)
    H5G_FAIL(H5G_ERR_USAGE, "cannot read the dataset's type or shape (%s)", where);
  CHECK(classify_type(type, info, where));
  int ndims = H5Sget_simple_extent_ndims(space);
  if (ndims != 1) {
    hsize_t dims[H5S_MAX_RANK];
    char shape[256] = "scalar";
    if (ndims > 0) {
      H5Sget_simple_extent_dims(space, dims, NULL);
      size_t used = 0;
      for (int i = 0; i < ndims && used < sizeof shape; i++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%llu", i ? " x " : "",
                                 (unsigned long long)dims[i]);
    }
    H5G_FAIL(H5G_ERR_USAGE,
             "unsupported shape: %d-D dataset (%s); h5gsort sorts 1-D datasets (%s)", ndims, shape,
             where);
  }
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, NULL);
  info->n = n;
done:
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Tclose, type);
  CLOSE_ID(H5Dclose, did);
  CLOSE_ID(H5Fclose, fid);
  return rc;
}

static hid_t native_order_copy(hid_t file_type) {
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

int h5g_io_open_input(MPI_Comm comm, const char *file, const char *dataset, h5g_input **out) {
  int rc = H5G_OK;
  hid_t fapl = H5I_INVALID_HID;
  h5g_input *in = calloc(1, sizeof *in);
  CHECK_ALLOC(in, sizeof *in);
  in->file = in->dset = in->file_type = in->mem_type = in->dxpl = H5I_INVALID_HID;
  in->comm = comm;
  snprintf(in->where, sizeof in->where, "%s:%s", file, dataset);
  CHECK_H5(fapl = mpio_fapl(comm), "cannot set up MPI-IO (%s)", in->where);
  CHECK_H5(in->file = H5Fopen(file, H5F_ACC_RDONLY, fapl), "cannot open input file (%s)",
           in->where);
  CHECK_H5(in->dset = H5Dopen2(in->file, dataset, H5P_DEFAULT), "cannot open dataset (%s)",
           in->where);
  CHECK_H5(in->file_type = H5Dget_type(in->dset), "cannot read the datatype (%s)", in->where);
  CHECK_H5(in->mem_type = native_order_copy(in->file_type), "cannot build the memory type (%s)",
           in->where);
  CHECK_H5(in->dxpl = collective_dxpl(), "cannot set up collective I/O (%s)", in->where);
  in->width = (unsigned)H5Tget_size(in->file_type);
  *out = in;
  in = NULL;
done:
  CLOSE_ID(H5Pclose, fapl);
  h5g_io_close_input(in);
  return rc;
}

void h5g_io_close_input(h5g_input *in) {
  if (!in) return;
  CLOSE_ID(H5Pclose, in->dxpl);
  CLOSE_ID(H5Tclose, in->mem_type);
  CLOSE_ID(H5Tclose, in->file_type);
  CLOSE_ID(H5Dclose, in->dset);
  CLOSE_ID(H5Fclose, in->file);
  free(in);
}

/* Collective transfer of [offset, offset + count) in pieces of at most h5g_io_piece_bytes().
 * Every rank makes the same number of H5Dread/H5Dwrite calls (empty selections where it has
 * nothing left) and the ranks agree after each piece, so a failure on one rank never leaves the
 * others waiting inside the next collective call. */
static int transfer(MPI_Comm comm, hid_t dset, hid_t mem_type, hid_t dxpl, unsigned width,
                    uint64_t offset, uint64_t count, void *buf, int writing, const char *where) {
  int rc = H5G_OK;
  hid_t file_space = H5I_INVALID_HID, mem_space = H5I_INVALID_HID;
  uint64_t piece = h5g_io_piece_bytes() / width;
  if (piece == 0) piece = 1;
  uint64_t my_pieces = (count + piece - 1) / piece, pieces = 0;
  if (MPI_Allreduce(&my_pieces, &pieces, 1, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
    H5G_FAIL(H5G_ERR_RUNTIME, "MPI_Allreduce failed during I/O (%s)", where);
  CHECK_H5(file_space = H5Dget_space(dset), "cannot get the dataspace (%s)", where);
  for (uint64_t i = 0; i < pieces; i++) {
    uint64_t done_elems = i * piece;
    hsize_t start = offset + done_elems;
    hsize_t len = done_elems < count ? (count - done_elems < piece ? count - done_elems : piece) : 0;
    hsize_t mem_len = len ? len : 1;
    int failed = 0;
    mem_space = H5Screate_simple(1, &mem_len, NULL);
    if (mem_space < 0) failed = 1;
    if (!failed && len == 0)
      failed = H5Sselect_none(mem_space) < 0 || H5Sselect_none(file_space) < 0;
    if (!failed && len > 0)
      failed = H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, NULL, &len, NULL) < 0;
    char *ptr = (char *)buf + (len ? done_elems * width : 0);
    static char dummy[8];
    if (!failed) {
      herr_t st = writing ? H5Dwrite(dset, mem_type, mem_space, file_space, dxpl, len ? ptr : dummy)
                          : H5Dread(dset, mem_type, mem_space, file_space, dxpl, len ? ptr : dummy);
      failed = st < 0;
    }
    H5Sclose(mem_space);
    mem_space = H5I_INVALID_HID;
    int any_failed = 0;
    if (MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
      H5G_FAIL(H5G_ERR_RUNTIME, "MPI_Allreduce failed during I/O (%s)", where);
    if (failed)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot %s the dataset (%s)", writing ? "write" : "read", where);
    if (any_failed)
      H5G_FAIL(H5G_ERR_RUNTIME, "%s failed on another rank (%s)", writing ? "write" : "read",
               where);
  }
done:
  CLOSE_ID(H5Sclose, mem_space);
  CLOSE_ID(H5Sclose, file_space);
  return rc;
}

int h5g_io_read(h5g_input *in, uint64_t offset, uint64_t count, void *buf) {
  return transfer(in->comm, in->dset, in->mem_type, in->dxpl, in->width, offset, count, buf, 0,
                  in->where);
}

typedef struct {
  hid_t target;
  int status;
} attr_copy;

/* Copies one attribute with its own datatype (variable-length data included). */
static herr_t copy_attribute(hid_t src, const char *name, const H5A_info_t *ainfo, void *data) {
  (void)ainfo;
  attr_copy *copy = data;
  hid_t attr = H5I_INVALID_HID, type = H5I_INVALID_HID, space = H5I_INVALID_HID,
        dst = H5I_INVALID_HID;
  void *buf = NULL;
  int ok = 0, has_vlen = 0;
  if ((attr = H5Aopen(src, name, H5P_DEFAULT)) < 0) goto done;
  hid_t stored = H5Aget_type(attr);
  if (stored < 0) goto done;
  type = H5Tcopy(stored); /* a transient copy: committed types do not cross files */
  H5Tclose(stored);
  if (type < 0 || (space = H5Aget_space(attr)) < 0) goto done;
  hssize_t points = H5Sget_simple_extent_npoints(space);
  size_t bytes = (size_t)(points > 0 ? points : 1) * H5Tget_size(type);
  if (!(buf = calloc(1, bytes))) goto done;
  if (H5Aread(attr, type, buf) < 0) goto done;
  has_vlen = H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0;
  if ((dst = H5Acreate2(copy->target, name, type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0)
    goto done;
  ok = H5Awrite(dst, type, buf) >= 0;
done:
  if (buf && has_vlen) H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
  free(buf);
  CLOSE_ID(H5Aclose, dst);
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Tclose, type);
  CLOSE_ID(H5Aclose, attr);
  if (!ok) {
    h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "cannot copy attribute '%s'", name);
    copy->status = H5G_ERR_RUNTIME;
    return -1;
  }
  return 0;
}

int h5g_io_create_output(MPI_Comm comm, const char *tmp_file, const char *dataset,
                         const h5g_input *in, int copy_of_input, h5g_output **result) {
  int rc = H5G_OK;
  hid_t fapl = H5I_INVALID_HID, lcpl = H5I_INVALID_HID, dcpl = H5I_INVALID_HID,
        space = H5I_INVALID_HID, file_type = H5I_INVALID_HID;
  h5g_output *out = calloc(1, sizeof *out);
  CHECK_ALLOC(out, sizeof *out);
  out->file = out->dset = out->mem_type = out->dxpl = H5I_INVALID_HID;
  out->comm = comm;
  out->width = in->width;
  snprintf(out->where, sizeof out->where, "%s:%s", tmp_file, dataset);
  CHECK_H5(fapl = mpio_fapl(comm), "cannot set up MPI-IO (%s)", out->where);
  if (copy_of_input) {
    CHECK_H5(out->file = H5Fopen(tmp_file, H5F_ACC_RDWR, fapl), "cannot open output file (%s)",
             out->where);
    if (path_exists(out->file, dataset))
      CHECK_H5(H5Ldelete(out->file, dataset, H5P_DEFAULT), "cannot replace the dataset (%s)",
               out->where);
  } else {
    CHECK_H5(out->file = H5Fcreate(tmp_file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
             "cannot create output file (%s)", out->where);
  }
  hsize_t n = 0;
  hid_t in_space = H5Dget_space(in->dset);
  CHECK_H5(in_space, "cannot read the input's shape (%s)", in->where);
  H5Sget_simple_extent_dims(in_space, &n, NULL);
  H5Sclose(in_space);
  CHECK_H5(space = H5Screate_simple(1, &n, NULL), "cannot create dataspace (%s)", out->where);
  CHECK_H5(lcpl = H5Pcreate(H5P_LINK_CREATE), "cannot create property list (%s)", out->where);
  CHECK_H5(H5Pset_create_intermediate_group(lcpl, 1), "cannot set up groups (%s)", out->where);
  CHECK_H5(dcpl = H5Pcreate(H5P_DATASET_CREATE), "cannot create property list (%s)", out->where);
  CHECK_H5(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "cannot set fill time (%s)", out->where);
  CHECK_H5(file_type = H5Tcopy(in->file_type), "cannot copy the datatype (%s)", out->where);
  CHECK_H5(out->dset = H5Dcreate2(out->file, dataset, file_type, space, lcpl, dcpl, H5P_DEFAULT),
           "cannot create the output dataset (%s)", out->where);
  attr_copy copy = {out->dset, H5G_OK};
  hsize_t idx = 0;
  if (H5Aiterate2(in->dset, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, copy_attribute, &copy) < 0) {
    if (copy.status == H5G_OK)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot copy attributes (%s)", out->where);
    H5G_FAIL(copy.status, "cannot copy attributes (%s)", out->where);
  }
  CHECK_H5(out->mem_type = native_order_copy(file_type), "cannot build the memory type (%s)",
           out->where);
  CHECK_H5(out->dxpl = collective_dxpl(), "cannot set up collective I/O (%s)", out->where);
  *result = out;
  out = NULL;
done:
  CLOSE_ID(H5Tclose, file_type);
  CLOSE_ID(H5Pclose, dcpl);
  CLOSE_ID(H5Pclose, lcpl);
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Pclose, fapl);
  h5g_io_close_output(out);
  return rc;
}

int h5g_io_write(h5g_output *out, uint64_t offset, uint64_t count, const void *buf) {
  return transfer(out->comm, out->dset, out->mem_type, out->dxpl, out->width, offset, count,
                  (void *)buf, 1, out->where);
}

int h5g_io_read_output(h5g_output *out, uint64_t offset, uint64_t count, void *buf) {
  return transfer(out->comm, out->dset, out->mem_type, out->dxpl, out->width, offset, count, buf,
                  0, out->where);
}

int h5g_io_close_output(h5g_output *out) {
  int rc = H5G_OK;
  if (!out) return rc;
  CLOSE_ID(H5Pclose, out->dxpl);
  CLOSE_ID(H5Tclose, out->mem_type);
  if (out->dset >= 0 && H5Dclose(out->dset) < 0)
    rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "cannot close the dataset (%s)",
                       out->where);
  if (out->file >= 0 && H5Fclose(out->file) < 0 && rc == H5G_OK)
    rc = h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__, "cannot flush the output file (%s)",
                       out->where);
  free(out);
  return rc;
}
