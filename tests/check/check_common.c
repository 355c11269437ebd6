/* Shared pieces of the independent checkers: see check_common.h. */
#include "check_common.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s: FAILED: ", check_program);
  vprintf(fmt, ap);
  fputc('\n', stdout);
  va_end(ap);
  return 1;
}

int describe_type(hid_t type, value_type *vt) {
  H5T_class_t cls = H5Tget_class(type);
  vt->width = H5Tget_size(type);
  vt->big_endian = H5Tget_order(type) == H5T_ORDER_BE;
  if (cls == H5T_INTEGER)
    vt->kind = H5Tget_sign(type) == H5T_SGN_2 ? KIND_SIGNED : KIND_UNSIGNED;
  else if (cls == H5T_FLOAT)
    vt->kind = KIND_FLOAT;
  else
    return fail("dataset type class %d is neither integer nor float", (int)cls);
  if (vt->width != 1 && vt->width != 2 && vt->width != 4 && vt->width != 8)
    return fail("unsupported element size %zu", vt->width);
  if (vt->kind == KIND_FLOAT && vt->width != 4 && vt->width != 8)
    return fail("unsupported float size %zu", vt->width);
  return 0;
}

/* Element i of a raw file buffer as host-order bits. */
uint64_t raw_element(const unsigned char *raw, uint64_t i, const value_type *vt) {
  uint64_t v = 0;
  const unsigned char *p = raw + i * vt->width;
  for (size_t b = 0; b < vt->width; b++) {
    size_t byte = vt->big_endian ? vt->width - 1 - b : b;
    v |= (uint64_t)p[byte] << (8 * b);
  }
  return v;
}

static int64_t as_signed(uint64_t bits, size_t width) {
  unsigned shift = (unsigned)(64 - 8 * width);
  return (int64_t)(bits << shift) >> shift;
}

static double as_double(uint64_t bits, size_t width) {
  if (width == 4) {
    uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, sizeof f);
    return (double)f;
  }
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

/* <0, 0, >0 as a sorts before, with, after b in numpy.sort's ascending order. */
int compare_values(uint64_t a, uint64_t b, const value_type *vt) {
  if (vt->kind == KIND_UNSIGNED) return (a > b) - (a < b);
  if (vt->kind == KIND_SIGNED) {
    int64_t x = as_signed(a, vt->width), y = as_signed(b, vt->width);
    return (x > y) - (x < y);
  }
  double x = as_double(a, vt->width), y = as_double(b, vt->width);
  if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
  return (x > y) - (x < y);
}

void format_value(char *buf, size_t size, uint64_t bits, const value_type *vt) {
  if (vt->kind == KIND_UNSIGNED)
    snprintf(buf, size, "%" PRIu64 " (0x%" PRIx64 ")", bits, bits);
  else if (vt->kind == KIND_SIGNED)
    snprintf(buf, size, "%" PRId64 " (0x%" PRIx64 ")", as_signed(bits, vt->width), bits);
  else
    snprintf(buf, size, "%.17g (0x%" PRIx64 ")", as_double(bits, vt->width), bits);
}

/* ---- attributes ---------------------------------------------------------------------------- */

static int compare_attribute(hid_t in_dset, hid_t out_dset, const char *name) {
  int bad = 0;
  hid_t ia = H5I_INVALID_HID, oa = H5I_INVALID_HID, it = H5I_INVALID_HID, ot = H5I_INVALID_HID,
        is = H5I_INVALID_HID, os = H5I_INVALID_HID, mem = H5I_INVALID_HID;
  void *ibuf = NULL, *obuf = NULL;
  if (H5Aexists(out_dset, name) <= 0) return fail("attribute '%s' missing on the output", name);
  ia = H5Aopen(in_dset, name, H5P_DEFAULT);
  oa = H5Aopen(out_dset, name, H5P_DEFAULT);
  it = H5Aget_type(ia);
  ot = H5Aget_type(oa);
  is = H5Aget_space(ia);
  os = H5Aget_space(oa);
  if (ia < 0 || oa < 0 || it < 0 || ot < 0 || is < 0 || os < 0) {
    bad = fail("cannot open attribute '%s'", name);
    goto done;
  }
  if (H5Tequal(it, ot) <= 0) {
    bad = fail("attribute '%s' has a different type on the output", name);
    goto done;
  }
  if (H5Sextent_equal(is, os) <= 0) {
    bad = fail("attribute '%s' has a different shape on the output", name);
    goto done;
  }
  size_t count = (size_t)H5Sget_simple_extent_npoints(is);
  if (H5Tis_variable_str(it) > 0) {
    mem = H5Tcopy(H5T_C_S1);
    H5Tset_size(mem, H5T_VARIABLE);
    ibuf = calloc(count + 1, sizeof(char *));
    obuf = calloc(count + 1, sizeof(char *));
    if (H5Aread(ia, mem, ibuf) < 0 || H5Aread(oa, mem, obuf) < 0) {
      bad = fail("cannot read attribute '%s'", name);
      goto done;
    }
    for (size_t i = 0; i < count && !bad; i++) {
      const char *x = ((char **)ibuf)[i], *y = ((char **)obuf)[i];
      if ((x == NULL) != (y == NULL) || (x != NULL && strcmp(x, y) != 0))
        bad = fail("attribute '%s'[%zu] differs: \"%s\" vs \"%s\"", name, i, x ? x : "(null)",
                   y ? y : "(null)");
    }
    H5Dvlen_reclaim(mem, is, H5P_DEFAULT, ibuf);
    H5Dvlen_reclaim(mem, os, H5P_DEFAULT, obuf);
  } else if (H5Tdetect_class(it, H5T_VLEN) > 0 || H5Tdetect_class(it, H5T_REFERENCE) > 0) {
    bad = fail("attribute '%s': variable-length or reference values are not compared", name);
  } else {
    size_t bytes = count * H5Tget_size(it);
    ibuf = calloc(bytes + 1, 1);
    obuf = calloc(bytes + 1, 1);
    if (H5Aread(ia, it, ibuf) < 0 || H5Aread(oa, ot, obuf) < 0) {
      bad = fail("cannot read attribute '%s'", name);
      goto done;
    }
    if (memcmp(ibuf, obuf, bytes) != 0) bad = fail("attribute '%s' has a different value", name);
  }
done:
  free(ibuf);
  free(obuf);
  if (mem >= 0) H5Tclose(mem);
  if (os >= 0) H5Sclose(os);
  if (is >= 0) H5Sclose(is);
  if (ot >= 0) H5Tclose(ot);
  if (it >= 0) H5Tclose(it);
  if (oa >= 0) H5Aclose(oa);
  if (ia >= 0) H5Aclose(ia);
  return bad;
}

int check_attributes(hid_t in_dset, hid_t out_dset) {
  H5O_info_t info;
  if (H5Oget_info2(in_dset, &info, H5O_INFO_NUM_ATTRS) < 0) return fail("cannot list attributes");
  for (hsize_t i = 0; i < info.num_attrs; i++) {
    char name[256];
    if (H5Aget_name_by_idx(in_dset, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                           H5P_DEFAULT) < 0)
      return fail("cannot read the name of attribute %llu", (unsigned long long)i);
    if (compare_attribute(in_dset, out_dset, name) != 0) return 1;
  }
  return 0;
}


void init_raw(raw_dataset *d) {
  memset(d, 0, sizeof *d);
  d->dset = d->type = H5I_INVALID_HID;
}

void close_raw(raw_dataset *d) {
  if (d->type >= 0) H5Tclose(d->type);
  if (d->dset >= 0) H5Dclose(d->dset);
  free(d->raw);
  init_raw(d);
}

/* Opens FILE:path and reads all of it as raw bytes. */
int read_raw(hid_t file, const char *file_name, const char *path, raw_dataset *d) {
  if (H5Lexists(file, path, H5P_DEFAULT) <= 0 || (d->dset = H5Dopen2(file, path, H5P_DEFAULT)) < 0)
    return fail("no dataset %s in %s", path, file_name);
  d->type = H5Dget_type(d->dset);
  hid_t space = H5Dget_space(d->dset);
  d->ndims = space < 0 ? -1 : H5Sget_simple_extent_dims(space, d->dims, NULL);
  if (space >= 0) H5Sclose(space);
  if (d->type < 0 || d->ndims < 0)
    return fail("cannot read the type or shape of %s:%s", file_name, path);
  if (H5Tdetect_class(d->type, H5T_VLEN) > 0 || H5Tis_variable_str(d->type) > 0)
    return fail("%s:%s has variable-length data, which this checker does not compare", file_name,
                path);
  d->rows = d->ndims > 0 ? d->dims[0] : 1;
  d->row_bytes = H5Tget_size(d->type);
  for (int k = 1; k < d->ndims; k++) d->row_bytes *= d->dims[k];
  size_t bytes = (size_t)d->rows * d->row_bytes;
  d->raw = malloc(bytes + 1);
  if (d->raw == NULL) return fail("out of memory reading %s:%s", file_name, path);
  if (bytes > 0 && H5Dread(d->dset, d->type, H5S_ALL, H5S_ALL, H5P_DEFAULT, d->raw) < 0)
    return fail("cannot read %s:%s", file_name, path);
  return 0;
}

/* Same file datatype and shape, but `rows` rows. */
int check_same_layout(const raw_dataset *in, const raw_dataset *out, uint64_t rows,
                             const char *what) {
  hsize_t dims[H5S_MAX_RANK];
  memcpy(dims, in->dims, sizeof dims);
  if (in->ndims > 0) dims[0] = rows;
  if (H5Tequal(in->type, out->type) <= 0)
    return fail("%s: the output's datatype differs from the input's", what);
  if (in->ndims != out->ndims || memcmp(dims, out->dims, sizeof dims) != 0)
    return fail("%s: the output's shape differs from the input's (rank %d vs %d, %" PRIu64
                " vs %" PRIu64 " rows)",
                what, in->ndims, out->ndims, rows, out->rows);
  return 0;
}
