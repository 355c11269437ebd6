/* Serial inspection of the input before any collective work (io/h5io.h: h5g_io_inspect,
 * h5g_io_inspect_rows): the file, the path to the dataset, its type, shape and storage, each
 * problem a usage error (exit 2) with a message that names it. */
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "io/h5io_pkg.h"
#include "io/h5check.h"

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
  case H5T_INTEGER: return "integer";
  case H5T_FLOAT: return "float";
  default: return "unknown";
  }
}

int h5g_io_path_exists_internal(hid_t loc, const char *path) {
  size_t len = strlen(path);
  char *prefix = malloc(len + 1);
  int exists = len > 0 && prefix != NULL;
  for (size_t i = 1; exists && i <= len; i++) {
    if (i < len && path[i] != '/') continue;
    memcpy(prefix, path, i);
    prefix[i] = '\0';
    if (strcmp(prefix, "/") != 0 && H5Lexists(loc, prefix, H5P_DEFAULT) <= 0) exists = 0;
  }
  free(prefix);
  return exists;
}

/* Fills cls/width/type_name from an HDF5 file datatype, or fails with a usage error naming it. */
static int classify_type(hid_t type, h5g_dataset_info *info, const char *where) {
  int rc = H5G_OK;
  H5T_class_t cls = H5Tget_class(type);
  size_t size = H5Tget_size(type);
  size_t precision = H5Tget_precision(type);
  int big = H5Tget_order(type) == H5T_ORDER_BE;
  const char *order = big ? " (big-endian)" : "";
  if (cls == H5T_INTEGER || cls == H5T_BITFIELD) { /* bitfields sort as unsigned, like h5py's */
    int is_signed = cls == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_2;
    const char *kind = cls == H5T_BITFIELD ? "bitfield" : is_signed ? "int" : "uint";
    if (size != 1 && size != 2 && size != 4 && size != 8)
      H5G_FAIL(H5G_ERR_USAGE, "unsupported %s type of %zu bytes and %zu bits (%s)",
               cls == H5T_BITFIELD ? "bitfield" : "integer", size, precision, where);
    info->cls = is_signed ? H5G_KEY_SIGNED : H5G_KEY_UNSIGNED;
    if (precision != 8 * size) /* padded: read as h5py reads it, converted to the full width */
      snprintf(info->type_name, sizeof info->type_name, "%s%zu%s, %hhu bits at %hhu", kind, 8 * size,
               order, (unsigned char)precision, (unsigned char)H5Tget_offset(type));
    else
      snprintf(info->type_name, sizeof info->type_name, "%s%zu%s", kind, 8 * size, order);
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

/* Why H5Fopen failed, from HDF5's error stack (kept while its printing is off). */
typedef struct {
  int locked, marked;
} open_failure;

static herr_t note_open_failure(unsigned n, const H5E_error2_t *e, void *data) {
  open_failure *why = data;
  (void)n;
  if (e->min_num == H5E_CANTLOCKFILE) why->locked = 1;
  if (e->desc && strstr(e->desc, "already open for write")) why->marked = 1;
  return 0;
}

static int open_failed(const char *where) {
  int rc = H5G_OK;
  open_failure why = {0, 0};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, note_open_failure, &why);
  if (why.locked)
    H5G_FAIL(H5G_ERR_USAGE, "the file is locked: another process has it open for writing (HDF5 "
             "file locking); sort it once that writer has closed it (%s)", where);
  if (why.marked)
    H5G_FAIL(H5G_ERR_USAGE, "the file is marked as open for writing by another process (its "
             "superblock says so); sort it once that writer has closed it, or, if the writer "
             "crashed, clear the mark with 'h5clear -s' (%s)", where);
  H5G_FAIL(H5G_ERR_USAGE, "cannot open the HDF5 file: truncated or corrupt (%s)", where);
done:
  return rc;
}

/* Opens `name`, a file that an external link or a virtual dataset of `file` names, where HDF5
 * looks for it: as given when absolute, else beside `file`, else from the working directory.
 * *exists says whether such a file is there at all. */
static hid_t open_named_file(const char *file, const char *name, int *exists) {
  hid_t fid = H5I_INVALID_HID;
  const char *slash = strrchr(file, '/');
  size_t len = strlen(file) + strlen(name) + 2;
  char *beside = name[0] != '/' && slash ? malloc(len) : NULL;
  if (beside) snprintf(beside, len, "%.*s/%s", (int)(slash - file), file, name);
  const char *tries[2] = {beside, name};
  *exists = 0;
  for (int i = 0; i < 2 && fid < 0; i++) {
    if (!tries[i] || access(tries[i], F_OK) != 0) continue;
    *exists = 1;
    fid = H5Fopen(tries[i], H5F_ACC_RDONLY, H5P_DEFAULT);
  }
  free(beside);
  return fid;
}

/* The object at `dataset` did not open: names a dangling soft link, or an external link whose
 * file or object is missing, on the way to it; else the file is corrupt. Always an error. */
static int unreachable(hid_t fid, const char *file, const char *dataset, const char *where) {
  int rc = H5G_OK, exists = 0;
  size_t len = strlen(dataset);
  char *prefix = malloc(len + 1), *value = NULL;
  const char *ext_file = NULL, *ext_path = NULL;
  unsigned flags = 0;
  hid_t ext = H5I_INVALID_HID;
  H5L_info_t link;
  CHECK_ALLOC(prefix, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (i < len && dataset[i] != '/') continue;
    memcpy(prefix, dataset, i);
    prefix[i] = '\0';
    if (H5Lget_info(fid, prefix, &link, H5P_DEFAULT) < 0 || link.type == H5L_TYPE_HARD ||
        H5Oexists_by_name(fid, prefix, H5P_DEFAULT) > 0)
      continue;
    value = calloc(1, link.u.val_size + 1);
    CHECK_ALLOC(value, link.u.val_size + 1);
    if (H5Lget_val(fid, prefix, value, link.u.val_size, H5P_DEFAULT) < 0) break;
    if (link.type == H5L_TYPE_SOFT)
      H5G_FAIL(H5G_ERR_USAGE, "dangling soft link: %s points to %s, which does not exist (%s)",
               prefix, value, where);
    if (link.type != H5L_TYPE_EXTERNAL ||
        H5Lunpack_elink_val(value, link.u.val_size, &flags, &ext_file, &ext_path) < 0)
      break;
    ext = open_named_file(file, ext_file, &exists);
    if (!exists)
      H5G_FAIL(H5G_ERR_USAGE, "external link %s points into %s, a file that does not exist "
               "(looked for beside the input and in the working directory) (%s)", prefix,
               ext_file, where);
    if (ext < 0)
      H5G_FAIL(H5G_ERR_USAGE, "external link %s points into %s, which is not a readable HDF5 "
               "file (%s)", prefix, ext_file, where);
    H5G_FAIL(H5G_ERR_USAGE, "external link %s points to %s:%s, which does not exist (%s)", prefix,
             ext_file, ext_path, where);
  }
  H5G_FAIL(H5G_ERR_USAGE, "cannot open the object: file corrupt? (%s)", where);
done:
  CLOSE_ID(H5Fclose, ext);
  free(value);
  free(prefix);
  return rc;
}

/* A virtual dataset's data is its sources' (h5py reads a missing source as fill values, which
 * are not the data): every source file and dataset must be there. */
static int check_virtual_sources(hid_t fid, hid_t dcpl, const char *file, const char *where) {
  int rc = H5G_OK;
  size_t count = 0;
  char *src_file = NULL, *src_dset = NULL;
  hid_t src = H5I_INVALID_HID;
  CHECK_H5(H5Pget_virtual_count(dcpl, &count), "cannot read the virtual dataset's sources (%s)",
           where);
  for (size_t i = 0; i < count; i++) {
    ssize_t flen = H5Pget_virtual_filename(dcpl, i, NULL, 0);
    ssize_t dlen = H5Pget_virtual_dsetname(dcpl, i, NULL, 0);
    if (flen < 0 || dlen < 0)
      H5G_FAIL(H5G_ERR_USAGE, "cannot read the virtual dataset's sources (%s)", where);
    src_file = malloc((size_t)flen + 1);
    src_dset = malloc((size_t)dlen + 1);
    CHECK_ALLOC(src_file, (size_t)flen + 1);
    CHECK_ALLOC(src_dset, (size_t)dlen + 1);
    H5Pget_virtual_filename(dcpl, i, src_file, (size_t)flen + 1);
    H5Pget_virtual_dsetname(dcpl, i, src_dset, (size_t)dlen + 1);
    int exists = 1, same = strcmp(src_file, ".") == 0;
    if (!same) src = open_named_file(file, src_file, &exists);
    if (!exists)
      H5G_FAIL(H5G_ERR_USAGE, "virtual dataset source file %s does not exist (looked for beside "
               "the input and in the working directory) (%s)", src_file, where);
    if ((same ? fid : src) < 0 || !h5g_io_path_exists_internal(same ? fid : src, src_dset))
      H5G_FAIL(H5G_ERR_USAGE, "virtual dataset source %s:%s does not exist (%s)", src_file,
               src_dset, where);
    CLOSE_ID(H5Fclose, src);
    src = H5I_INVALID_HID;
    free(src_file);
    free(src_dset);
    src_file = src_dset = NULL;
  }
done:
  CLOSE_ID(H5Fclose, src);
  free(src_dset);
  free(src_file);
  return rc;
}

/* Names of common plugin filters whose files may not record a name. */
static const char *known_filter(H5Z_filter_t id) {
  switch (id) {
  case 307: return "bzip2";
  case 32000: return "lzf";
  case 32001: return "blosc";
  case 32004: return "lz4";
  case 32008: return "bitshuffle";
  case 32015: return "zstd";
  default: return "";
  }
}

/* Every filter of the dataset's pipeline must be there to decode it (plugins are looked for
 * on HDF5_PLUGIN_PATH by H5Zfilter_avail itself). */
static int check_filters(hid_t dcpl, const char *where) {
  int rc = H5G_OK;
  int n = H5Pget_nfilters(dcpl);
  if (n < 0) H5G_FAIL(H5G_ERR_USAGE, "cannot read the dataset's filters (%s)", where);
  for (int i = 0; i < n; i++) {
    char name[128] = "";
    unsigned flags = 0, config = 0, info = 0;
    size_t nvalues = 0;
    H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &nvalues, NULL, sizeof name, name,
                                     &config);
    if (id < 0) H5G_FAIL(H5G_ERR_USAGE, "cannot read the dataset's filters (%s)", where);
    if (!name[0]) snprintf(name, sizeof name, "%s", known_filter(id));
    if (H5Zfilter_avail(id) <= 0)
      H5G_FAIL(H5G_ERR_USAGE, "filter %d%s%s%s is not available: install its HDF5 plugin and set "
               "HDF5_PLUGIN_PATH to the plugin's directory (%s)", (int)id, name[0] ? " (" : "",
               name, name[0] ? ")" : "", where);
    if (H5Zget_filter_info(id, &info) < 0 || !(info & H5Z_FILTER_CONFIG_DECODE_ENABLED))
      H5G_FAIL(H5G_ERR_USAGE, "filter %d (%s) cannot decode in this HDF5 library (%s)", (int)id,
               name, where);
  }
done:
  return rc;
}

/* What every dataset h5gsort reads must have besides its type and shape: storage it can reach. */
static int check_storage(hid_t fid, hid_t did, const char *file, const char *where) {
  int rc = H5G_OK;
  hid_t dcpl = H5I_INVALID_HID;
  CHECK_H5(dcpl = H5Dget_create_plist(did), "cannot read the dataset's storage (%s)", where);
  if (H5Pget_layout(dcpl) == H5D_VIRTUAL) CHECK(check_virtual_sources(fid, dcpl, file, where));
  CHECK(check_filters(dcpl, where));
done:
  CLOSE_ID(H5Pclose, dcpl);
  return rc;
}

/* The path to `dataset` is not there: a link that is not (no such dataset), or groups that
 * cannot be read (their metadata lies past the file's end: truncated, or corrupt). */
static int missing(hid_t fid, const char *dataset, const char *where) {
  int rc = H5G_OK, unreadable = 0;
  char *prefix = strdup(dataset);
  CHECK_ALLOC(prefix, strlen(dataset) + 1);
  for (char *slash = prefix; dataset[0] == '/' && slash && !unreadable;) {
    slash = strchr(slash + 1, '/');
    if (slash) *slash = '\0';
    htri_t exists = H5Lexists(fid, prefix, H5P_DEFAULT);
    unreadable = exists < 0;
    if (exists <= 0) break;
    if (slash) *slash = '/';
  }
  if (unreadable)
    H5G_FAIL(H5G_ERR_USAGE, "cannot read the groups on the way to the dataset: the file is "
             "truncated or corrupt (%s)", where);
  H5G_FAIL(H5G_ERR_USAGE, "no such dataset (%s)", where);
done:
  free(prefix);
  return rc;
}

/* Opens file and dataset for inspection; checks what every dataset h5gsort reads must be. */
static int inspect_open(const char *file, const char *dataset, const char *where, hid_t *fid,
                        hid_t *did) {
  int rc = H5G_OK;
  /* before anything opens it: a FIFO would block the open (and the run) for ever */
  const char *kind = h5g_files_kind(file);
  if (kind) H5G_FAIL(H5G_ERR_USAGE, "input is a %s, not a regular file (%s)", kind, where);
  FILE *probe = fopen(file, "rb");
  if (!probe) H5G_FAIL(H5G_ERR_USAGE, "cannot open input file: %s (%s)", strerror(errno), where);
  fclose(probe);
  if (H5Fis_hdf5(file) <= 0) H5G_FAIL(H5G_ERR_USAGE, "not an HDF5 file (%s)", where);
  *fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (*fid < 0) CHECK(open_failed(where));
  if (dataset[0] != '/' || !h5g_io_path_exists_internal(*fid, dataset))
    CHECK(missing(*fid, dataset, where));
  H5O_info_t oinfo;
  if (H5Oget_info_by_name(*fid, dataset, &oinfo, H5P_DEFAULT) < 0)
    CHECK(unreachable(*fid, file, dataset, where));
  if (oinfo.type != H5O_TYPE_DATASET)
    H5G_FAIL(H5G_ERR_USAGE, "not a dataset: it is a %s (%s)",
             oinfo.type == H5O_TYPE_GROUP ? "group" : "named datatype", where);
  *did = H5Dopen2(*fid, dataset, H5P_DEFAULT);
  if (*did < 0) H5G_FAIL(H5G_ERR_USAGE, "cannot open the dataset: file corrupt? (%s)", where);
  CHECK(check_storage(*fid, *did, file, where));
done:
  return rc;
}

/* "3 x 4" or "scalar" */
static void describe_shape(hid_t space, char *text, size_t len) {
  hsize_t dims[H5S_MAX_RANK];
  int ndims = H5Sget_simple_extent_ndims(space);
  snprintf(text, len, "scalar");
  if (ndims <= 0) return;
  H5Sget_simple_extent_dims(space, dims, NULL);
  size_t used = 0;
  for (int i = 0; i < ndims && used < len; i++)
    used += (size_t)snprintf(text + used, len - used, "%s%llu", i ? " x " : "",
                             (unsigned long long)dims[i]);
}

/* The shape of a key dataset: 1-D, or 2-D when a column is named (its range checked). */
static int check_key_shape(hid_t space, int column, const char *where, uint64_t *n) {
  int rc = H5G_OK;
  char shape[256];
  hsize_t dims[H5S_MAX_RANK] = {0};
  int ndims = H5Sget_simple_extent_ndims(space);
  if (ndims > 0) H5Sget_simple_extent_dims(space, dims, NULL);
  describe_shape(space, shape, sizeof shape);
  if (column >= 0 && ndims != 2)
    H5G_FAIL(H5G_ERR_USAGE, "--key-column needs a 2-D dataset (N x M), not a %d-D one (%s) (%s)",
             ndims, shape, where);
  if (column >= 0 && (hsize_t)column >= dims[1])
    H5G_FAIL(H5G_ERR_USAGE, "--key-column %d is out of range: the dataset has %llu column%s (%s)",
             column, (unsigned long long)dims[1], dims[1] == 1 ? "" : "s", where);
  if (column < 0 && ndims == 2)
    H5G_FAIL(H5G_ERR_USAGE, "unsupported shape: 2-D dataset (%s); give --key-column J to sort its "
             "rows by column J (%s)", shape, where);
  if (column < 0 && ndims != 1)
    H5G_FAIL(H5G_ERR_USAGE,
             "unsupported shape: %d-D dataset (%s); h5gsort sorts 1-D datasets, and the rows of "
             "2-D ones with --key-column (%s)", ndims, shape, where);
  *n = dims[0];
done:
  return rc;
}

/* Bytes of one row (the first dimension's element: all the others) of `type` elements. */
static uint64_t row_bytes(hid_t type, hid_t space) {
  hsize_t dims[H5S_MAX_RANK];
  int ndims = H5Sget_simple_extent_dims(space, dims, NULL);
  uint64_t bytes = H5Tget_size(type);
  for (int k = 1; k < ndims; k++) bytes *= dims[k];
  return bytes;
}

int h5g_io_inspect(const char *file, const char *dataset, const char *key_field, int column,
                   h5g_dataset_info *info) {
  int rc = H5G_OK;
  hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID, type = H5I_INVALID_HID,
        field = H5I_INVALID_HID, space = H5I_INVALID_HID;
  char where[WHERE_MAX];
  snprintf(where, sizeof where, "%s:%s", file, dataset);
  memset(info, 0, sizeof *info);
  CHECK(inspect_open(file, dataset, where, &fid, &did));
  type = H5Dget_type(did);
  space = H5Dget_space(did);
  if (type < 0 || space < 0)
    H5G_FAIL(H5G_ERR_USAGE, "cannot read the dataset's type or shape (%s)", where);
  if (key_field) {
    if (H5Tget_class(type) != H5T_COMPOUND)
      H5G_FAIL(H5G_ERR_USAGE, "--key-field needs a compound dataset, not one of %s type (%s)",
               class_name(H5Tget_class(type)), where);
    int index = H5Tget_member_index(type, key_field);
    if (index < 0) H5G_FAIL(H5G_ERR_USAGE, "no field '%s' in the compound type (%s)", key_field, where);
    field = H5Tget_member_type(type, (unsigned)index);
    CHECK(classify_type(field, info, where));
  } else {
    CHECK(classify_type(type, info, where));
  }
  CHECK(check_key_shape(space, column, where, &info->n));
  info->row_bytes = row_bytes(type, space);
done:
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Tclose, field);
  CLOSE_ID(H5Tclose, type);
  CLOSE_ID(H5Dclose, did);
  CLOSE_ID(H5Fclose, fid);
  return rc;
}

int h5g_io_inspect_rows(const char *file, const char *dataset, uint64_t rows,
                        uint64_t *bytes_per_row) {
  int rc = H5G_OK;
  hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID, type = H5I_INVALID_HID,
        space = H5I_INVALID_HID;
  char where[WHERE_MAX], shape[256];
  h5g_dataset_info elem;
  snprintf(where, sizeof where, "%s:%s", file, dataset);
  CHECK(inspect_open(file, dataset, where, &fid, &did));
  type = H5Dget_type(did);
  space = H5Dget_space(did);
  if (type < 0 || space < 0)
    H5G_FAIL(H5G_ERR_USAGE, "cannot read the dataset's type or shape (%s)", where);
  CHECK(classify_type(type, &elem, where));
  hsize_t dims[H5S_MAX_RANK];
  int ndims = H5Sget_simple_extent_ndims(space);
  if (ndims >= 1) H5Sget_simple_extent_dims(space, dims, NULL);
  if (ndims < 1 || dims[0] != rows) {
    describe_shape(space, shape, sizeof shape);
    H5G_FAIL(H5G_ERR_USAGE, "carried dataset has shape %s, but the keys have %llu rows (%s)",
             shape, (unsigned long long)rows, where);
  }
  *bytes_per_row = row_bytes(type, space);
done:
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Tclose, type);
  CLOSE_ID(H5Dclose, did);
  CLOSE_ID(H5Fclose, fid);
  return rc;
}

/* Usage error when `source` (a file `where`'s data lie in) is one of written[0..count). */
static int not_written(const char *source, const char *kind, const char *const *written, int count,
                       const char *where) {
  int rc = H5G_OK;
  for (int i = 0; i < count; i++)
    if (written[i] && h5g_files_same(source, written[i]))
      H5G_FAIL(H5G_ERR_USAGE, "%s holds the input's data (%s), which the run would "
               "overwrite: write to another file (%s)", written[i], kind, where);
done:
  return rc;
}

int h5g_io_inspect_sources(const char *file, const char *dataset, const char *const *written,
                           int count) {
  int rc = H5G_OK;
  hid_t fid = H5I_INVALID_HID, did = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
  char where[WHERE_MAX], dir[PATH_MAX], source[PATH_MAX];
  size_t virtuals = 0;
  snprintf(where, sizeof where, "%s:%s", file, dataset);
  CHECK(inspect_open(file, dataset, where, &fid, &did));
  /* through an external link the dataset lies in another file, named as HDF5 opened it */
  ssize_t len = H5Fget_name(did, source, sizeof source);
  if (len > 0 && (size_t)len < sizeof source && !h5g_files_same(source, file))
    CHECK(not_written(source, "the target of an external link", written, count,
                      where));
  CHECK_H5(dcpl = H5Dget_create_plist(did), "cannot read the storage (%s)", where);
  if (H5Pget_layout(dcpl) == H5D_VIRTUAL) CHECK_H5(H5Pget_virtual_count(dcpl, &virtuals),
                                                   "cannot read the virtual mappings (%s)", where);
  snprintf(dir, sizeof dir, "%s", file);
  char *slash = strrchr(dir, '/');
  if (slash) slash[1] = '\0';
  else snprintf(dir, sizeof dir, "./");
  for (size_t i = 0; i < virtuals; i++) {
    char name[PATH_MAX];
    ssize_t n = H5Pget_virtual_filename(dcpl, i, name, sizeof name);
    if (n <= 0 || (size_t)n >= sizeof name || strcmp(name, ".") == 0) continue; /* this file */
    /* HDF5 looks for a relative source beside the virtual dataset's file */
    int used = snprintf(source, sizeof source, "%s%s", name[0] == '/' ? "" : dir, name);
    if (used < 0 || (size_t)used >= sizeof source) continue; /* no such file can exist */
    CHECK(not_written(source, "a source of a virtual dataset", written, count, where));
  }
done:
  CLOSE_ID(H5Pclose, dcpl);
  CLOSE_ID(H5Dclose, did);
  CLOSE_ID(H5Fclose, fid);
  return rc;
}
