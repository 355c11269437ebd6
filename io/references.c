/* References in a file (io/references.h): every object and region reference that an attribute
 * or a dataset holds, found by its datatype wherever it nests (compound members, arrays,
 * variable-length sequences: a dimension scale's REFERENCE_LIST is a compound of references, a
 * dataset's DIMENSION_LIST a sequence of them). Serial, on one rank. */
#include "io/references.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"

/* Calls fn for each reference among `count` elements of `type` at buf (read in `type` itself). */
static int each_reference(hid_t type, const unsigned char *buf, size_t count,
                          h5g_io_reference_fn fn, void *ctx) {
  int rc = 0;
  size_t size = H5Tget_size(type);
  H5T_class_t cls = H5Tget_class(type);
  for (size_t i = 0; rc == 0 && i < count; i++) {
    const unsigned char *elem = buf + i * size;
    if (cls == H5T_REFERENCE) {
      rc = fn(ctx, H5Tequal(type, H5T_STD_REF_OBJ) > 0 ? H5R_OBJECT : H5R_DATASET_REGION, elem);
    } else if (cls == H5T_COMPOUND) {
      int members = H5Tget_nmembers(type);
      for (int m = 0; rc == 0 && m < members; m++) {
        hid_t member = H5Tget_member_type(type, (unsigned)m);
        if (member < 0) return -1;
        if (H5Tdetect_class(member, H5T_REFERENCE) > 0)
          rc = each_reference(member, elem + H5Tget_member_offset(type, (unsigned)m), 1, fn, ctx);
        H5Tclose(member);
      }
    } else if (cls == H5T_ARRAY || cls == H5T_VLEN) {
      hid_t base = H5Tget_super(type);
      if (base < 0) return -1;
      if (cls == H5T_VLEN) {
        const hvl_t *seq = (const hvl_t *)elem;
        rc = each_reference(base, seq->p, seq->len, fn, ctx);
      } else {
        hsize_t dims[H5S_MAX_RANK];
        int ndims = H5Tget_array_dims2(type, dims);
        size_t n = 1;
        for (int k = 0; k < ndims; k++) n *= (size_t)dims[k];
        rc = each_reference(base, elem, ndims < 0 ? 0 : n, fn, ctx);
      }
      H5Tclose(base);
    }
  }
  return rc;
}

int h5g_io_attribute_references(hid_t obj, const char *name, h5g_io_reference_fn fn, void *ctx) {
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t type = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
  hid_t space = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
  hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  size_t bytes = type >= 0 && points > 0 ? (size_t)points * H5Tget_size(type) : 0;
  unsigned char *buf = bytes ? calloc(1, bytes) : NULL;
  int rc = type < 0 || points < 0 || (bytes && !buf) ? -1 : 0;
  if (rc == 0 && buf) {
    rc = H5Aread(attr, type, buf) < 0 ? -1 : each_reference(type, buf, (size_t)points, fn, ctx);
    if (H5Tdetect_class(type, H5T_VLEN) > 0) H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
  }
  free(buf);
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Tclose, type);
  CLOSE_ID(H5Aclose, attr);
  return rc;
}

/* The references of a dataset whose elements hold some (scalar, 1-D or N-D: read whole; such
 * datasets are small, a few references per object). */
static int dataset_references(hid_t dset, h5g_io_reference_fn fn, void *ctx) {
  hid_t type = H5Dget_type(dset), space = H5Dget_space(dset);
  hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  size_t size = type >= 0 ? H5Tget_size(type) : 0;
  unsigned char *buf = points > 0 && size ? malloc((size_t)points * size) : NULL;
  int rc = type < 0 || points < 0 || (points > 0 && !buf) ? -1 : 0;
  if (rc == 0 && buf) {
    int read = H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
    rc = read ? each_reference(type, buf, (size_t)points, fn, ctx) : -1;
    if (read && H5Tdetect_class(type, H5T_VLEN) > 0) H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
  }
  free(buf);
  CLOSE_ID(H5Sclose, space);
  CLOSE_ID(H5Tclose, type);
  return rc;
}

int h5g_io_reference_target(hid_t loc, H5R_type_t kind, const void *ref, haddr_t *addr) {
  H5O_info_t info;
  hid_t obj = H5Rdereference2(loc, H5P_DEFAULT, kind, ref);
  int found = obj >= 0 && H5Oget_info2(obj, &info, H5O_INFO_BASIC) >= 0;
  CLOSE_ID(H5Oclose, obj);
  if (found) *addr = info.addr;
  return found; /* a null or dangling reference refers to nothing */
}

typedef struct {
  hid_t file;
  haddr_t target;
  int found;
} referrer_search;

static int refers_to_target(void *ctx, H5R_type_t kind, const void *ref) {
  referrer_search *s = ctx;
  haddr_t addr;
  if (h5g_io_reference_target(s->file, kind, ref, &addr) && addr == s->target) s->found = 1;
  return s->found; /* stops the walk at the first one */
}

typedef struct {
  referrer_search search;
  const char *object; /* the path of the object being visited */
  char *where;
  size_t len;
  int failed;
} referrer_visit;

static herr_t attribute_referrer(hid_t obj, const char *name, const H5A_info_t *ainfo, void *data) {
  (void)ainfo;
  referrer_visit *v = data;
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT), type = attr >= 0 ? H5Aget_type(attr) : -1;
  int refs = type >= 0 ? H5Tdetect_class(type, H5T_REFERENCE) : -1;
  CLOSE_ID(H5Tclose, type);
  CLOSE_ID(H5Aclose, attr);
  if (refs < 0 || (refs > 0 && h5g_io_attribute_references(obj, name, refers_to_target,
                                                            &v->search) < 0)) {
    v->failed = 1;
    return -1;
  }
  if (v->search.found)
    snprintf(v->where, v->len, "attribute '%s' of %s%s", name, v->object[0] == '/' ? "" : "/",
             v->object);
  return v->search.found;
}

static herr_t object_referrer(hid_t root, const char *name, const H5O_info_t *info, void *data) {
  referrer_visit *v = data;
  v->object = strcmp(name, ".") == 0 ? "/" : name; /* relative to the root */
  hid_t obj = H5Oopen(root, name, H5P_DEFAULT);
  if (obj < 0) return v->failed = 1, -1;
  hsize_t idx = 0;
  herr_t stop = H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, attribute_referrer, v);
  if (stop == 0 && info->type == H5O_TYPE_DATASET) {
    hid_t type = H5Dget_type(obj);
    int refs = type >= 0 ? H5Tdetect_class(type, H5T_REFERENCE) : -1;
    CLOSE_ID(H5Tclose, type);
    if (refs < 0 || (refs > 0 && dataset_references(obj, refers_to_target, &v->search) < 0))
      v->failed = 1, stop = -1;
    else if (v->search.found)
      snprintf(v->where, v->len, "dataset /%s", name), stop = 1;
  }
  H5Oclose(obj);
  return stop;
}

int h5g_io_find_referrer(hid_t file, haddr_t target, char *where, size_t len) {
  referrer_visit v = {{file, target, 0}, "/", where, len, 0};
  herr_t status = H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_NATIVE, object_referrer, &v,
                            H5O_INFO_BASIC);
  if (v.failed || (status < 0 && !v.search.found)) return -1;
  return v.search.found;
}

int h5g_io_inspect_no_references(const char *file, const char *dataset) {
  int rc = H5G_OK;
  hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t did = fid >= 0 ? H5Dopen2(fid, dataset, H5P_DEFAULT) : H5I_INVALID_HID;
  hid_t type = did >= 0 ? H5Dget_type(did) : H5I_INVALID_HID;
  if (type < 0) H5G_FAIL(H5G_ERR_USAGE, "cannot read the datatype (%s:%s)", file, dataset);
  if (H5Tdetect_class(type, H5T_REFERENCE) > 0)
    H5G_FAIL(H5G_ERR_USAGE, "the rows hold references, file addresses a new OUTPUT cannot keep: "
             "sort with --whole-file or in place (%s:%s)", file, dataset);
done:
  CLOSE_ID(H5Tclose, type);
  CLOSE_ID(H5Dclose, did);
  CLOSE_ID(H5Fclose, fid);
  return rc;
}
