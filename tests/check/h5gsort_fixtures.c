/* h5gsort_fixtures OUT.h5: writes hand-made datasets for the bad-input tests and the checkers'
 * self-tests.
 * Datasets h5gsort must refuse (exit 2): /string (fixed strings), /vlstring (variable-length
 * strings), /compound, /enum, /opaque, /vlen (variable-length int sequences), /twod (10 x 3
 * int32), /scalar (0-D int32), and /group (a group, not a dataset).
 * Valid ones: /keys (1-D int32, 1000 elements), /keys4 (1-D int32, 4 elements: rows for the
 * 4-element datasets above) and float64 arrays for the checker:
 * /float/ascending in numpy order (signed zeros mixed, NaNs of both signs last), /float/descending
 * its reverse, /float/nan_not_last (a NaN before +inf), /float/payload (one NaN payload changed).
 * For h5gsort_check_records: an input /records/in/{keys int32, id uint8 row ids, pay 6x2 float32,
 * attribute "units" on keys} and outputs /records/VARIANT/{keys, id, pay, index}: "good" (a
 * correct stable sort) and one defect each: "unstable" (equal keys swapped everywhere),
 * "payload" (two pay rows swapped), "index_dup" (a repeated index), "disagree" (index and ids
 * differ), "unsorted", "wrong_key" (a key that is not its source's), "noattr". Signed zeros:
 * /records/zeros/in/{keys f64 +0 -0 +0 -0, id} with outputs "good" and "unstable" (the -0.0 rows
 * reversed, not adjacent). */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CHECK_H5(call)                                                                            \
  do {                                                                                            \
    if ((call) < 0) {                                                                             \
      fprintf(stderr, "h5gsort_fixtures: %s failed (line %d)\n", #call, __LINE__);                 \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

static int write_dataset(hid_t file, const char *name, hid_t type, hid_t space, const void *data) {
  hid_t dset;
  CHECK_H5(dset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  CHECK_H5(H5Dclose(dset));
  return 0;
}

static int write_floats(hid_t file, const char *name, const uint64_t *bits, hsize_t n) {
  hid_t space;
  double values[16];
  memcpy(values, bits, n * sizeof *values); /* bit patterns, never float arithmetic */
  CHECK_H5(space = H5Screate_simple(1, &n, NULL));
  if (write_dataset(file, name, H5T_NATIVE_DOUBLE, space, values)) return 1;
  CHECK_H5(H5Sclose(space));
  return 0;
}

static int write_float_fixtures(hid_t file) {
  enum { N = 12 };
  const uint64_t ascending[N] = {
      0xfff0000000000000u, /* -inf */ 0xc000000000000000u, /* -2 */
      0x8000000000000001u, /* -denormal */ 0x0000000000000000u, /* +0 */
      0x8000000000000000u, /* -0 */ 0x0000000000000000u, /* +0 */
      0x0000000000000001u, /* +denormal */ 0x3ff0000000000000u, /* 1 */
      0x7ff0000000000000u, /* +inf */ 0xfff8000000000000u, /* -NaN */
      0x7ff8000000000001u, /* NaN, payload 1 */ 0x7ff0000000000002u /* signalling NaN */};
  uint64_t descending[N], nan_not_last[N], payload[N];
  for (int i = 0; i < N; i++) descending[i] = ascending[N - 1 - i];
  memcpy(nan_not_last, ascending, sizeof ascending);
  nan_not_last[8] = ascending[9];
  nan_not_last[9] = ascending[8];
  memcpy(payload, ascending, sizeof ascending);
  payload[10] = 0x7ff8000000000003u;
  hid_t group;
  CHECK_H5(group = H5Gcreate2(file, "float", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (write_floats(group, "ascending", ascending, N) ||
      write_floats(group, "descending", descending, N) ||
      write_floats(group, "nan_not_last", nan_not_last, N) ||
      write_floats(group, "payload", payload, N))
    return 1;
  CHECK_H5(H5Gclose(group));
  return 0;
}

/* ---- record-checker fixtures ---------------------------------------------------------------- */

enum { RECORDS = 6, ZEROS = 4 };

static int write_1d(hid_t group, const char *name, hid_t type, hsize_t n, const void *data) {
  hid_t space;
  CHECK_H5(space = H5Screate_simple(1, &n, NULL));
  if (write_dataset(group, name, type, space, data)) return 1;
  CHECK_H5(H5Sclose(space));
  return 0;
}

static int write_units(hid_t group, const char *dataset) {
  hid_t dset, type, space, attr;
  CHECK_H5(dset = H5Dopen2(group, dataset, H5P_DEFAULT));
  CHECK_H5(type = H5Tcopy(H5T_C_S1));
  CHECK_H5(H5Tset_size(type, 4));
  CHECK_H5(space = H5Screate(H5S_SCALAR));
  CHECK_H5(attr = H5Acreate2(dset, "units", type, space, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Awrite(attr, type, "keV"));
  CHECK_H5(H5Aclose(attr));
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Tclose(type));
  CHECK_H5(H5Dclose(dset));
  return 0;
}

/* /records/NAME: keys, id and pay gathered from the input by key_src, id_src, pay_src; index as
 * given; the "units" attribute unless noattr. */
static int write_variant(hid_t file, const char *name, const int *key_src, const int *id_src,
                         const int *pay_src, const uint64_t *index, int attr) {
  static const int32_t keys[RECORDS] = {3, 1, 2, 1, 3, 1};
  int32_t out_keys[RECORDS];
  uint8_t out_ids[RECORDS];
  float out_pay[RECORDS][2];
  for (int i = 0; i < RECORDS; i++) {
    out_keys[i] = keys[key_src[i]];
    out_ids[i] = (uint8_t)id_src[i];
    out_pay[i][0] = (float)pay_src[i] + 0.5f; /* input row r holds {r + 0.5, -r} */
    out_pay[i][1] = -(float)pay_src[i];
  }
  char path[64];
  hid_t group, space;
  const hsize_t dims[2] = {RECORDS, 2};
  snprintf(path, sizeof path, "/records/%s", name);
  CHECK_H5(group = H5Gcreate2(file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(space = H5Screate_simple(2, dims, NULL));
  if (write_1d(group, "keys", H5T_NATIVE_INT32, RECORDS, out_keys) ||
      write_1d(group, "id", H5T_NATIVE_UINT8, RECORDS, out_ids) ||
      write_dataset(group, "pay", H5T_NATIVE_FLOAT, space, out_pay) ||
      (index && write_1d(group, "index", H5T_NATIVE_UINT64, RECORDS, index)) ||
      (attr && write_units(group, "keys")))
    return 1;
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Gclose(group));
  return 0;
}

static int write_record_fixtures(hid_t file) {
  static const int identity[RECORDS] = {0, 1, 2, 3, 4, 5};
  static const int good[RECORDS] = {1, 3, 5, 2, 0, 4}, unstable[RECORDS] = {3, 1, 5, 2, 0, 4},
                   pay_swapped[RECORDS] = {1, 3, 5, 2, 4, 0}, unsorted[RECORDS] = {2, 1, 3, 5, 0, 4},
                   wrong_source[RECORDS] = {1, 3, 5, 0, 2, 4};
  uint64_t good_index[RECORDS], unstable_index[RECORDS], wrong_index[RECORDS],
      unsorted_index[RECORDS], dup_index[RECORDS];
  for (int i = 0; i < RECORDS; i++) {
    good_index[i] = dup_index[i] = (uint64_t)good[i];
    unstable_index[i] = (uint64_t)unstable[i];
    wrong_index[i] = (uint64_t)wrong_source[i];
    unsorted_index[i] = (uint64_t)unsorted[i];
  }
  dup_index[RECORDS - 1] = dup_index[0];
  hid_t group;
  CHECK_H5(group = H5Gcreate2(file, "records", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Gclose(group));
  if (write_variant(file, "in", identity, identity, identity, NULL, 1) ||
      write_variant(file, "good", good, good, good, good_index, 1) ||
      write_variant(file, "unstable", unstable, unstable, unstable, unstable_index, 1) ||
      write_variant(file, "payload", good, good, pay_swapped, good_index, 1) ||
      write_variant(file, "index_dup", good, good, good, dup_index, 1) ||
      write_variant(file, "disagree", good, good, good, unstable_index, 1) ||
      write_variant(file, "unsorted", unsorted, unsorted, unsorted, unsorted_index, 1) ||
      write_variant(file, "wrong_key", good, wrong_source, wrong_source, wrong_index, 1) ||
      write_variant(file, "noattr", good, good, good, good_index, 0))
    return 1;

  /* +0 -0 +0 -0: numpy ties them all; stability is about bit-identical keys. */
  static const uint64_t zeros[ZEROS] = {0, 0x8000000000000000u, 0, 0x8000000000000000u};
  static const int zeros_good[ZEROS] = {1, 0, 3, 2}, zeros_unstable[ZEROS] = {3, 0, 1, 2};
  const int *sources[3] = {identity, zeros_good, zeros_unstable};
  const char *names[3] = {"/records/zeros/in", "/records/zeros/good", "/records/zeros/unstable"};
  for (int v = 0; v < 3; v++) {
    double keys[ZEROS];
    uint8_t ids[ZEROS];
    for (int i = 0; i < ZEROS; i++) {
      memcpy(&keys[i], &zeros[sources[v][i]], sizeof keys[i]);
      ids[i] = (uint8_t)sources[v][i];
    }
    hid_t lcpl;
    CHECK_H5(lcpl = H5Pcreate(H5P_LINK_CREATE));
    CHECK_H5(H5Pset_create_intermediate_group(lcpl, 1));
    CHECK_H5(group = H5Gcreate2(file, names[v], lcpl, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_H5(H5Pclose(lcpl));
    if (write_1d(group, "keys", H5T_NATIVE_DOUBLE, ZEROS, keys) ||
        write_1d(group, "id", H5T_NATIVE_UINT8, ZEROS, ids))
      return 1;
    CHECK_H5(H5Gclose(group));
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fputs("usage: h5gsort_fixtures OUT.h5\n", stderr);
    return 2;
  }
  hid_t file, space4, space2d, scalar, type;
  const hsize_t four = 4, twod[2] = {10, 3}, thousand = 1000;
  int32_t ints[1000];
  for (int i = 0; i < 1000; i++) ints[i] = (int32_t)((i * 7919) % 1000) - 500;

  CHECK_H5(file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(space4 = H5Screate_simple(1, &four, NULL));
  CHECK_H5(space2d = H5Screate_simple(2, twod, NULL));
  CHECK_H5(scalar = H5Screate(H5S_SCALAR));

  const char fixed[4][6] = {"delta", "alpha", "gamma", "beta"};
  CHECK_H5(type = H5Tcopy(H5T_C_S1));
  CHECK_H5(H5Tset_size(type, 6));
  if (write_dataset(file, "string", type, space4, fixed)) return 1;
  CHECK_H5(H5Tset_size(type, H5T_VARIABLE));
  const char *variable[4] = {"d", "a", "c", "b"};
  if (write_dataset(file, "vlstring", type, space4, variable)) return 1;
  CHECK_H5(H5Tclose(type));

  struct pair { int32_t key; double value; } pairs[4] = {{3, 0.5}, {1, 1.5}, {2, 2.5}, {0, 3.5}};
  CHECK_H5(type = H5Tcreate(H5T_COMPOUND, sizeof(struct pair)));
  CHECK_H5(H5Tinsert(type, "key", HOFFSET(struct pair, key), H5T_NATIVE_INT32));
  CHECK_H5(H5Tinsert(type, "value", HOFFSET(struct pair, value), H5T_NATIVE_DOUBLE));
  if (write_dataset(file, "compound", type, space4, pairs)) return 1;
  CHECK_H5(H5Tclose(type));

  int32_t colors[4] = {2, 0, 1, 0}, value;
  CHECK_H5(type = H5Tenum_create(H5T_NATIVE_INT32));
  CHECK_H5(H5Tenum_insert(type, "RED", (value = 0, &value)));
  CHECK_H5(H5Tenum_insert(type, "GREEN", (value = 1, &value)));
  CHECK_H5(H5Tenum_insert(type, "BLUE", (value = 2, &value)));
  if (write_dataset(file, "enum", type, space4, colors)) return 1;
  CHECK_H5(H5Tclose(type));

  const char blobs[4][3] = {"ab", "cd", "ef", "gh"};
  CHECK_H5(type = H5Tcreate(H5T_OPAQUE, 3));
  CHECK_H5(H5Tset_tag(type, "blob"));
  if (write_dataset(file, "opaque", type, space4, blobs)) return 1;
  CHECK_H5(H5Tclose(type));

  hvl_t sequences[4];
  for (int i = 0; i < 4; i++) {
    sequences[i].len = (size_t)i + 1;
    sequences[i].p = ints;
  }
  CHECK_H5(type = H5Tvlen_create(H5T_NATIVE_INT32));
  if (write_dataset(file, "vlen", type, space4, sequences)) return 1;
  CHECK_H5(H5Tclose(type));

  if (write_dataset(file, "twod", H5T_NATIVE_INT32, space2d, ints)) return 1;
  if (write_dataset(file, "scalar", H5T_NATIVE_INT32, scalar, ints)) return 1;
  hid_t group;
  CHECK_H5(group = H5Gcreate2(file, "group", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Gclose(group));
  hid_t keys_space;
  CHECK_H5(keys_space = H5Screate_simple(1, &thousand, NULL));
  if (write_dataset(file, "keys", H5T_NATIVE_INT32, keys_space, ints)) return 1;
  if (write_1d(file, "keys4", H5T_NATIVE_INT32, 4, ints)) return 1;
  if (write_record_fixtures(file)) return 1;

  CHECK_H5(H5Sclose(keys_space));
  if (write_float_fixtures(file)) return 1;
  CHECK_H5(H5Sclose(scalar));
  CHECK_H5(H5Sclose(space2d));
  CHECK_H5(H5Sclose(space4));
  CHECK_H5(H5Fclose(file));
  return 0;
}
