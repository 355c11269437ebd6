/* h5gsort_fixtures OUT.h5: writes hand-made datasets for the bad-input tests and the checker's
 * self-test.
 * Datasets h5gsort must refuse (exit 2): /string (fixed strings), /vlstring (variable-length
 * strings), /compound, /enum, /opaque, /vlen (variable-length int sequences), /twod (10 x 3
 * int32), /scalar (0-D int32), and /group (a group, not a dataset).
 * Valid ones: /keys (1-D int32, 1000 elements) and float64 arrays for the checker:
 * /float/ascending in numpy order (signed zeros mixed, NaNs of both signs last), /float/descending
 * its reverse, /float/nan_not_last (a NaN before +inf), /float/payload (one NaN payload changed). */
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

  CHECK_H5(H5Sclose(keys_space));
  if (write_float_fixtures(file)) return 1;
  CHECK_H5(H5Sclose(scalar));
  CHECK_H5(H5Sclose(space2d));
  CHECK_H5(H5Sclose(space4));
  CHECK_H5(H5Fclose(file));
  return 0;
}
