/* Writing a dataset over one that the output already holds (--whole-file and in-place sorts,
 * whose output starts as a byte copy of the input): the rows go into the existing object where
 * its storage can take them, so its address, and with it every reference, hard link, creation
 * order and netCDF variable id, stays as it was. Where a new object cannot be avoided, nothing
 * may refer to the old one. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"
#include "io/h5io_pkg.h"
#include "io/references.h"

/* 1 when both pipelines have the same filters in the same order with the same flags; deflate's
 * level must match too (the other filters' parameters follow from the datatype, which matches). */
static int same_filters(hid_t a, hid_t b) {
  int count = H5Pget_nfilters(a);
  if (count < 0 || count != H5Pget_nfilters(b)) return 0;
  for (unsigned i = 0; i < (unsigned)count; i++) {
    unsigned flags[2], values[2][8];
    size_t nvalues[2] = {8, 8};
    H5Z_filter_t id[2];
    id[0] = H5Pget_filter2(a, i, &flags[0], &nvalues[0], values[0], 0, NULL, NULL);
    id[1] = H5Pget_filter2(b, i, &flags[1], &nvalues[1], values[1], 0, NULL, NULL);
    if (id[0] < 0 || id[0] != id[1] ||
        (flags[0] & H5Z_FLAG_OPTIONAL) != (flags[1] & H5Z_FLAG_OPTIONAL))
      return 0;
    if (id[0] == H5Z_FILTER_DEFLATE &&
        (nvalues[0] < 1 || nvalues[1] < 1 || values[0][0] != values[1][0]))
      return 0;
  }
  return 1;
}

/* The storage checks of h5g_io_takes_in_place_internal: same layout, in this file, not external
 * or virtual, the same chunk and filters, and a first dimension that can become `rows` (any
 * count up to its length with rows_change). */
static int same_storage(hid_t existing, hid_t dcpl, int rank, hsize_t rows, int rows_change,
                        const hsize_t *now, const hsize_t *max) {
  hid_t have = H5Dget_create_plist(existing);
  H5D_layout_t layout = have >= 0 ? H5Pget_layout(have) : H5D_LAYOUT_ERROR;
  int ok = layout == H5Pget_layout(dcpl) && H5Pget_external_count(have) == 0 &&
           (layout == H5D_CONTIGUOUS || layout == H5D_CHUNKED);
  if (ok && layout == H5D_CHUNKED) {
    hsize_t chunk[2][H5S_MAX_RANK];
    ok = H5Pget_chunk(have, rank, chunk[0]) == rank && H5Pget_chunk(dcpl, rank, chunk[1]) == rank &&
         same_filters(have, dcpl);
    /* a chunk cut to a shorter output (--top) is the existing one where that one is longer */
    ok = ok && (chunk[0][0] == chunk[1][0] || (chunk[1][0] == rows && chunk[0][0] > rows));
    for (int k = 1; ok && k < rank; k++) ok = chunk[0][k] == chunk[1][k];
  }
  /* contiguous storage has one length; chunked storage shrinks to any and grows to its maximum */
  /* with rows_change, `rows` is the most the output may have (N, or K): the storage must take
   * that many, or validation and the create (which knows the count) would decide apart */
  if (ok && (rows_change || rows != now[0]))
    ok = layout == H5D_CHUNKED && (max[0] == H5S_UNLIMITED || rows <= max[0]);
  CLOSE_ID(H5Pclose, have);
  return ok;
}

int h5g_io_takes_in_place_internal(hid_t file, hid_t existing, hid_t file_type, int rank,
                                   const hsize_t *dims, int rows_change, hid_t dcpl) {
  hid_t type = H5Dget_type(existing), space = H5Dget_space(existing);
  hsize_t now[H5S_MAX_RANK], max[H5S_MAX_RANK];
  H5O_info_t in_file, object;
  int ok = type >= 0 && space >= 0 && H5Tequal(type, file_type) > 0 &&
           H5Sget_simple_extent_ndims(space) == rank &&
           H5Sget_simple_extent_dims(space, now, max) == rank &&
           /* through an external link the object lies in another file */
           H5Oget_info2(file, &in_file, H5O_INFO_BASIC) >= 0 &&
           H5Oget_info2(existing, &object, H5O_INFO_BASIC) >= 0 && in_file.fileno == object.fileno;
  for (int k = 1; ok && k < rank; k++) ok = now[k] == dims[k];
  ok = ok && same_storage(existing, dcpl, rank, dims[0], rows_change, now, max);
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Tclose, type);
  return ok;
}

/* A usage error when replacing the dataset `obj` (at `path` of `where`) would lose a hard link
 * or a reference to it. */
static int keeps_every_link(hid_t file, hid_t obj, const char *path, const char *where) {
  int rc = H5G_OK;
  H5O_info_t info;
  char referrer[1024] = "";
  CHECK_H5(H5Oget_info2(obj, &info, H5O_INFO_BASIC), "cannot read the object (%s:%s)", where, path);
  if (info.rc > 1)
    H5G_FAIL(H5G_ERR_USAGE, "%s has %u hard links and its storage must change, so the other "
             "links would keep the old data; write a new OUTPUT instead (%s)", path, info.rc,
             where);
  int found = h5g_io_find_referrer(file, info.addr, referrer, sizeof referrer);
  if (found < 0) H5G_FAIL(H5G_ERR_RUNTIME, "cannot read the file's references (%s)", where);
  if (found)
    H5G_FAIL(H5G_ERR_USAGE, "cannot keep the reference to %s in %s: the dataset's storage must "
             "change (another layout, filters or a fixed length), which makes it a new object; "
             "write a new OUTPUT instead (%s)", path, referrer, where);
done:
  return rc;
}

/* A usage error when a link on `target`'s path in `file` (or `target` itself) is an external
 * link: the copy of the input keeps the link, and the run would write into the other file. */
static int no_external_link(hid_t file, const char *target, const char *where) {
  int rc = H5G_OK;
  char *prefix = strdup(target);
  CHECK_ALLOC(prefix, strlen(target) + 1);
  for (char *slash = strchr(prefix + 1, '/');; slash = strchr(slash + 1, '/')) {
    if (slash) *slash = '\0';
    H5L_info_t link;
    if (H5Lexists(file, prefix, H5P_DEFAULT) <= 0) break; /* made by the run: no link yet */
    if (H5Lget_info(file, prefix, &link, H5P_DEFAULT) >= 0 && link.type == H5L_TYPE_EXTERNAL)
      H5G_FAIL(H5G_ERR_USAGE, "%s is an external link in the input: the run would write into "
               "the file it leads to; write to a new OUTPUT or another path (%s)", prefix, where);
    if (!slash) break;
    *slash = '/';
  }
done:
  free(prefix);
  return rc;
}

int h5g_io_inspect_target_internal(hid_t file, const char *target, hid_t file_type, int rank,
                                   const hsize_t *dims, int rows_change, hid_t dcpl,
                                   const char *where) {
  int rc = H5G_OK;
  hid_t obj = H5I_INVALID_HID;
  H5O_info_t info;
  CHECK(no_external_link(file, target, where));
  if (!h5g_io_path_exists_internal(file, target)) goto done;
  CHECK_H5(obj = H5Oopen(file, target, H5P_DEFAULT), "cannot open %s (%s)", target, where);
  CHECK_H5(H5Oget_info2(obj, &info, H5O_INFO_BASIC), "cannot read %s (%s)", target, where);
  if (info.type != H5O_TYPE_DATASET)
    H5G_FAIL(H5G_ERR_USAGE, "%s is a %s in the input, and h5gsort writes only datasets over "
             "datasets: give another output path (%s)", target,
             info.type == H5O_TYPE_GROUP ? "group" : "named datatype", where);
  if (!h5g_io_takes_in_place_internal(file, obj, file_type, rank, dims, rows_change, dcpl))
    CHECK(keeps_every_link(file, obj, target, where));
done:
  CLOSE_ID(H5Oclose, obj);
  return rc;
}
