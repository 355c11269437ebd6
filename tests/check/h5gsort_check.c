/* h5gsort_check: an independent checker of h5gsort's output.
 *
 *   h5gsort_check IN.h5 -d INPATH OUT.h5 -o OUTPATH [--descending]
 *   h5gsort_check --identical A.h5 -d PATH B.h5 -o PATH
 *
 * Reads both datasets whole (serial HDF5, raw file bytes with no type conversion) and checks:
 * same file datatype and shape; the same multiset of raw bit patterns (both arrays sorted as
 * integers with qsort); the output in numpy.sort order by a comparator on the C values (NaN last,
 * -0.0 == +0.0; descending is the exact reverse, NaN first); every attribute of the input
 * dataset present on the output with the same type, shape and value. --identical instead
 * requires bit-identical data in the same order (e.g. a dataset that must be left untouched).
 * It shares no code with h5gsort's key transforms or sorts. Exit 0 all good, 1 a check failed
 * (the first failure is printed), 2 usage. */
#include <hdf5.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { KIND_UNSIGNED, KIND_SIGNED, KIND_FLOAT } value_kind;

typedef struct {
  value_kind kind;
  size_t width;    /* bytes */
  int big_endian;
} value_type;

typedef struct {
  hid_t file, dset, type;
  int ndims;
  hsize_t dims[H5S_MAX_RANK];
  uint64_t n;
  uint64_t *bits; /* raw bit patterns in host order, widened to 64 bits */
} dataset_data;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("h5gsort_check: FAILED: ", stdout);
  vprintf(fmt, ap);
  fputc('\n', stdout);
  va_end(ap);
  return 1;
}

static int describe_type(hid_t type, value_type *vt) {
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
static uint64_t raw_element(const unsigned char *raw, uint64_t i, const value_type *vt) {
  uint64_t v = 0;
  const unsigned char *p = raw + i * vt->width;
  for (size_t b = 0; b < vt->width; b++) {
    size_t byte = vt->big_endian ? vt->width - 1 - b : b;
    v |= (uint64_t)p[byte] << (8 * b);
  }
  return v;
}

static void init_dataset(dataset_data *d) {
  memset(d, 0, sizeof *d);
  d->file = d->dset = d->type = H5I_INVALID_HID;
}

static int open_dataset(const char *file, const char *path, dataset_data *d) {
  d->file = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (d->file < 0) return fail("cannot open %s", file);
  d->dset = H5Dopen2(d->file, path, H5P_DEFAULT);
  if (d->dset < 0) return fail("no dataset %s in %s", path, file);
  d->type = H5Dget_type(d->dset);
  hid_t space = H5Dget_space(d->dset);
  d->ndims = H5Sget_simple_extent_dims(space, d->dims, NULL);
  H5Sclose(space);
  if (d->type < 0 || d->ndims < 0) return fail("cannot read the type or shape of %s:%s", file, path);
  d->n = 1;
  for (int k = 0; k < d->ndims; k++) d->n *= d->dims[k];
  return 0;
}

static int read_dataset(dataset_data *d, const value_type *vt, const char *what) {
  unsigned char *raw = malloc(d->n * vt->width + 1);
  d->bits = malloc(d->n * sizeof *d->bits + 1);
  if (raw == NULL || d->bits == NULL) {
    free(raw);
    return fail("out of memory reading %s", what);
  }
  /* The file type as memory type: no conversion, the raw bytes as stored. */
  if (d->n > 0 && H5Dread(d->dset, d->type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0) {
    free(raw);
    return fail("cannot read %s", what);
  }
  for (uint64_t i = 0; i < d->n; i++) d->bits[i] = raw_element(raw, i, vt);
  free(raw);
  return 0;
}

static void close_dataset(dataset_data *d) {
  if (d->type >= 0) H5Tclose(d->type);
  if (d->dset >= 0) H5Dclose(d->dset);
  if (d->file >= 0) H5Fclose(d->file);
  free(d->bits);
}

/* ---- numpy order on the C values ----------------------------------------------------------- */

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
static int compare_values(uint64_t a, uint64_t b, const value_type *vt) {
  if (vt->kind == KIND_UNSIGNED) return (a > b) - (a < b);
  if (vt->kind == KIND_SIGNED) {
    int64_t x = as_signed(a, vt->width), y = as_signed(b, vt->width);
    return (x > y) - (x < y);
  }
  double x = as_double(a, vt->width), y = as_double(b, vt->width);
  if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
  return (x > y) - (x < y);
}

static void format_value(char *buf, size_t size, uint64_t bits, const value_type *vt) {
  if (vt->kind == KIND_UNSIGNED)
    snprintf(buf, size, "%" PRIu64 " (0x%" PRIx64 ")", bits, bits);
  else if (vt->kind == KIND_SIGNED)
    snprintf(buf, size, "%" PRId64 " (0x%" PRIx64 ")", as_signed(bits, vt->width), bits);
  else
    snprintf(buf, size, "%.17g (0x%" PRIx64 ")", as_double(bits, vt->width), bits);
}

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int check_order(const dataset_data *out, const value_type *vt, int descending) {
  for (uint64_t i = 1; i < out->n; i++) {
    int c = compare_values(out->bits[i - 1], out->bits[i], vt);
    if (descending ? c < 0 : c > 0) {
      char a[80], b[80];
      format_value(a, sizeof a, out->bits[i - 1], vt);
      format_value(b, sizeof b, out->bits[i], vt);
      return fail("output not in %s order at index %" PRIu64 ": [%" PRIu64 "] = %s, [%" PRIu64
                  "] = %s", descending ? "descending" : "ascending", i, i - 1, a, i, b);
    }
  }
  return 0;
}

static int check_same_multiset(dataset_data *in, dataset_data *out, const value_type *vt) {
  qsort(in->bits, in->n, sizeof *in->bits, compare_u64);
  qsort(out->bits, out->n, sizeof *out->bits, compare_u64);
  for (uint64_t i = 0; i < in->n; i++) {
    if (in->bits[i] != out->bits[i]) {
      char a[80], b[80];
      format_value(a, sizeof a, in->bits[i], vt);
      format_value(b, sizeof b, out->bits[i], vt);
      return fail("the output's bit patterns are not a permutation of the input's: the %" PRIu64
                  "-th smallest pattern is %s in the input, %s in the output", i, a, b);
    }
  }
  return 0;
}

static int check_identical(const dataset_data *a, const dataset_data *b, const value_type *vt) {
  for (uint64_t i = 0; i < a->n; i++) {
    if (a->bits[i] != b->bits[i]) {
      char x[80], y[80];
      format_value(x, sizeof x, a->bits[i], vt);
      format_value(y, sizeof y, b->bits[i], vt);
      return fail("data differ at index %" PRIu64 ": %s vs %s", i, x, y);
    }
  }
  return 0;
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

static int check_attributes(hid_t in_dset, hid_t out_dset) {
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

/* ---- main ---------------------------------------------------------------------------------- */

static int usage(void) {
  fputs("usage: h5gsort_check IN.h5 -d INPATH OUT.h5 -o OUTPATH [--descending]\n"
        "       h5gsort_check --identical A.h5 -d PATH B.h5 -o PATH\n",
        stderr);
  return 2;
}

int main(int argc, char **argv) {
  const char *files[2] = {NULL, NULL}, *in_path = NULL, *out_path = NULL;
  int descending = 0, identical = 0, nfiles = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
      in_path = argv[++i];
    else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      out_path = argv[++i];
    else if (strcmp(argv[i], "--descending") == 0)
      descending = 1;
    else if (strcmp(argv[i], "--identical") == 0)
      identical = 1;
    else if (argv[i][0] != '-' && nfiles < 2)
      files[nfiles++] = argv[i];
    else
      return usage();
  }
  if (nfiles != 2 || in_path == NULL || out_path == NULL) return usage();
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

  dataset_data in, out;
  value_type vt;
  init_dataset(&in);
  init_dataset(&out);
  int bad = open_dataset(files[0], in_path, &in);
  if (!bad) bad = open_dataset(files[1], out_path, &out);
  if (!bad) bad = describe_type(in.type, &vt);
  if (!bad && H5Tequal(in.type, out.type) <= 0)
    bad = fail("output datatype differs from the input's (class, size, sign or byte order)");
  if (!bad && (in.ndims != out.ndims || memcmp(in.dims, out.dims, sizeof in.dims) != 0))
    bad = fail("output shape differs: rank %d, %" PRIu64 " elements vs rank %d, %" PRIu64
               " elements", in.ndims, in.n, out.ndims, out.n);
  if (!bad) bad = read_dataset(&in, &vt, "the input");
  if (!bad) bad = read_dataset(&out, &vt, "the output");
  if (!bad && identical) bad = check_identical(&in, &out, &vt);
  if (!bad && !identical) bad = check_order(&out, &vt, descending);
  if (!bad && !identical) bad = check_same_multiset(&in, &out, &vt);
  if (!bad) bad = check_attributes(in.dset, out.dset);
  if (!bad)
    printf("h5gsort_check: ok: %" PRIu64 " elements (%s:%s -> %s:%s)\n", out.n, files[0], in_path,
           files[1], out_path);
  close_dataset(&out);
  close_dataset(&in);
  return bad ? 1 : 0;
}
