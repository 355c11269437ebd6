/* h5gsort_group_attrs FILE GROUP...: adds to each GROUP of FILE (created when missing; "/" is the
 * root) a string attribute "title" naming the group and an int32 array attribute "version", for
 * the storage tests: h5gsort copies the attributes of the root and of the groups on a written
 * dataset's path. h5gsort_group_attrs --large FILE OBJECT...: adds to each existing OBJECT (group
 * or dataset, made in the 1.8 format or later, e.g. by h5repack --low=1) an attribute "large" of
 * 10,000 float64 values i + 0.25 (80 kB: too large for the earliest format). Serial HDF5; exit 1
 * on any failure. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CHECK_H5(call)                                                                            \
  do {                                                                                            \
    if ((call) < 0) {                                                                             \
      fprintf(stderr, "h5gsort_group_attrs: %s failed (line %d)\n", #call, __LINE__);             \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

static int add_attributes(hid_t file, const char *path) {
  hid_t group, type, space, attr;
  hsize_t three = 3;
  int32_t version[3] = {1, 2, (int32_t)strlen(path)};
  char title[256];
  snprintf(title, sizeof title, "group %s", path);
  if (H5Lexists(file, path, H5P_DEFAULT) > 0 || strcmp(path, "/") == 0) {
    CHECK_H5(group = H5Gopen2(file, path, H5P_DEFAULT));
  } else {
    hid_t lcpl;
    CHECK_H5(lcpl = H5Pcreate(H5P_LINK_CREATE));
    CHECK_H5(H5Pset_create_intermediate_group(lcpl, 1));
    CHECK_H5(group = H5Gcreate2(file, path, lcpl, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_H5(H5Pclose(lcpl));
  }
  CHECK_H5(type = H5Tcopy(H5T_C_S1));
  CHECK_H5(H5Tset_size(type, strlen(title) + 1));
  CHECK_H5(space = H5Screate(H5S_SCALAR));
  CHECK_H5(attr = H5Acreate2(group, "title", type, space, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Awrite(attr, type, title));
  CHECK_H5(H5Aclose(attr));
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Tclose(type));
  CHECK_H5(space = H5Screate_simple(1, &three, NULL));
  CHECK_H5(attr = H5Acreate2(group, "version", H5T_STD_I32BE, space, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Awrite(attr, H5T_NATIVE_INT32, version));
  CHECK_H5(H5Aclose(attr));
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Gclose(group));
  return 0;
}

static int add_large_attribute(hid_t file, const char *path) {
  static double values[10000];
  hsize_t n = sizeof values / sizeof values[0];
  hid_t obj, space, attr;
  for (hsize_t i = 0; i < n; i++) values[i] = (double)i + 0.25;
  CHECK_H5(obj = H5Oopen(file, path, H5P_DEFAULT));
  CHECK_H5(space = H5Screate_simple(1, &n, NULL));
  CHECK_H5(attr = H5Acreate2(obj, "large", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT));
  CHECK_H5(H5Awrite(attr, H5T_NATIVE_DOUBLE, values));
  CHECK_H5(H5Aclose(attr));
  CHECK_H5(H5Sclose(space));
  CHECK_H5(H5Oclose(obj));
  return 0;
}

int main(int argc, char **argv) {
  hid_t file, fapl;
  int large = argc > 1 && strcmp(argv[1], "--large") == 0;
  if (argc < 3 + large) {
    fprintf(stderr, "usage: h5gsort_group_attrs [--large] FILE GROUP...\n");
    return 1;
  }
  CHECK_H5(fapl = H5Pcreate(H5P_FILE_ACCESS));
  if (large) CHECK_H5(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18));
  CHECK_H5(file = H5Fopen(argv[1 + large], H5F_ACC_RDWR, fapl));
  for (int i = 2 + large; i < argc; i++)
    if (large ? add_large_attribute(file, argv[i]) : add_attributes(file, argv[i])) return 1;
  CHECK_H5(H5Fclose(file));
  CHECK_H5(H5Pclose(fapl));
  return 0;
}
