/* Attributes (io/h5io.h): copied with their own datatypes, collectively, and written. */
#include "io/h5io_pkg.h"

#include <hdf5.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"
#include "mpi/agree.h"

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

int h5g_io_copy_attributes_internal(MPI_Comm comm, hid_t from, hid_t to, const char *where) {
  int rc = H5G_OK;
  attr_copy copy = {comm, to, H5G_OK};
  hsize_t idx = 0;
  if (H5Aiterate2(from, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, copy_attribute, &copy) < 0)
    H5G_FAIL(copy.status == H5G_OK ? H5G_ERR_RUNTIME : copy.status, "cannot copy attributes (%s)",
             where);
done:
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
  CHECK(h5g_io_agree_found_internal(out->comm, found, group, out->path));
  if (!found) goto done;
  src = H5Gopen2(in->id, group, H5P_DEFAULT);
  dst = H5Gopen2(out->id, group, H5P_DEFAULT);
  int opened = src >= 0 && dst >= 0 ? H5G_OK
                                    : h5g_error_set(H5G_ERR_RUNTIME, __FILE__, __LINE__,
                                                    "cannot open group %s (%s)", group, out->path);
  CHECK(h5g_agree(out->comm, opened));
  CHECK(h5g_io_copy_attributes_internal(out->comm, src, dst, out->path));
done:
  CLOSE_ID(H5Gclose, dst);
  CLOSE_ID(H5Gclose, src);
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
