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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"

const char *const check_program = "h5gsort_check";

typedef struct {
  hid_t file, dset, type;
  int ndims;
  hsize_t dims[H5S_MAX_RANK];
  uint64_t n;
  uint64_t *bits; /* raw bit patterns in host order, widened to 64 bits */
} dataset_data;

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

/* ---- checks -------------------------------------------------------------------------------- */

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
