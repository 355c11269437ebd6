/* h5gsort-gen's HDF5 types and attributes (tools/gen.h). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "io/h5check.h"
#include "mpi/agree.h"
#include "gen.h"

static hid_t memory_type(const h5g_keyspec *t) {
  if (t->cls == H5G_KEY_FLOAT) return t->width == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  static const int log2_width[9] = {0, 0, 1, 0, 2, 0, 0, 0, 3};
  hid_t unsigned_types[4] = {H5T_NATIVE_UINT8, H5T_NATIVE_UINT16, H5T_NATIVE_UINT32,
                             H5T_NATIVE_UINT64};
  hid_t signed_types[4] = {H5T_NATIVE_INT8, H5T_NATIVE_INT16, H5T_NATIVE_INT32,
                           H5T_NATIVE_INT64};
  int w = log2_width[t->width];
  return t->cls == H5G_KEY_SIGNED ? signed_types[w] : unsigned_types[w];
}

static hid_t file_type(const h5g_keyspec *t, int big_endian) {
  if (t->cls == H5G_KEY_FLOAT) {
    if (t->width == 4) return big_endian ? H5T_IEEE_F32BE : H5T_IEEE_F32LE;
    return big_endian ? H5T_IEEE_F64BE : H5T_IEEE_F64LE;
  }
  static const int log2_width[9] = {0, 0, 1, 0, 2, 0, 0, 0, 3};
  hid_t types[2][2][4] = {
      {{H5T_STD_U8LE, H5T_STD_U16LE, H5T_STD_U32LE, H5T_STD_U64LE},
       {H5T_STD_U8BE, H5T_STD_U16BE, H5T_STD_U32BE, H5T_STD_U64BE}},
      {{H5T_STD_I8LE, H5T_STD_I16LE, H5T_STD_I32LE, H5T_STD_I64LE},
       {H5T_STD_I8BE, H5T_STD_I16BE, H5T_STD_I32BE, H5T_STD_I64BE}}};
  return types[t->cls == H5G_KEY_SIGNED][big_endian != 0][log2_width[t->width]];
}

/* A C string type of `size` bytes (H5T_VARIABLE: variable length). */
static int string_type(const gen_options *o, size_t size, hid_t *type) {
  int rc = H5G_OK;
  CHECK_H5(*type = H5Tcopy(H5T_C_S1), "cannot create string type (%s:%s)", o->out, o->path);
  CHECK_H5(H5Tset_size(*type, size), "cannot set string size (%s:%s)", o->out, o->path);
done:
  return rc;
}

/* The string types of the attributes: 8 bytes, variable length. */
static int attribute_types(const gen_options *o, hid_t *fixed, hid_t *vlen) {
  int rc = H5G_OK;
  CHECK(string_type(o, 8, fixed));
  CHECK(string_type(o, H5T_VARIABLE, vlen));
done:
  return rc;
}

/* Attributes for tests of attribute copying: one of each kind h5gsort must carry over. */
int gen_write_attributes(const gen_options *o, h5g_dset *dset) {
  int rc = H5G_OK;
  hid_t fixed = H5I_INVALID_HID, vlen = H5I_INVALID_HID;
  const int32_t scale = -7;
  const double calibration[3] = {1.5, -2.25, 1e-300};
  const char units[8] = "counts";
  const char *note = "written by h5gsort-gen";

  /* local calls, agreed on before the collective attribute writes */
  CHECK(h5g_agree(MPI_COMM_WORLD, attribute_types(o, &fixed, &vlen)));
  CHECK(h5g_io_write_attribute(dset, "scale", H5T_STD_I32LE, H5T_NATIVE_INT32, 0, &scale));
  CHECK(h5g_io_write_attribute(dset, "calibration", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, 3,
                               calibration));
  CHECK(h5g_io_write_attribute(dset, "units", fixed, fixed, 0, units));
  CHECK(h5g_io_write_attribute(dset, "note", vlen, vlen, 0, &note));
done:
  if (vlen >= 0) H5Tclose(vlen);
  if (fixed >= 0) H5Tclose(fixed);
  return rc;
}

/* The --table record type, packed: with the file's member types (in_file) or native ones. */
static int table_type(const gen_options *o, int in_file, hid_t *type) {
  int rc = H5G_OK;
  hid_t name = H5I_INVALID_HID;
  const int be = in_file && o->big_endian;
  const size_t x_offset = FIELD_KEY + o->type.width;
  hid_t u64 = in_file ? (be ? H5T_STD_U64BE : H5T_STD_U64LE) : H5T_NATIVE_UINT64;
  hid_t u16 = in_file ? (be ? H5T_STD_U16BE : H5T_STD_U16LE) : H5T_NATIVE_UINT16;
  hid_t f64 = in_file ? (be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE) : H5T_NATIVE_DOUBLE;
  hid_t key = in_file ? file_type(&o->type, o->big_endian) : memory_type(&o->type);

  *type = H5I_INVALID_HID;
  CHECK(string_type(o, NAME_BYTES, &name));
  CHECK_H5(H5Tset_strpad(name, H5T_STR_NULLPAD), "cannot set string padding (%s:%s)", o->out,
           o->path);
  CHECK_H5(*type = H5Tcreate(H5T_COMPOUND, x_offset + sizeof(double)),
           "cannot create compound (%s:%s)", o->out, o->path);
  CHECK_H5(H5Tinsert(*type, "row", FIELD_ROW, u64), "cannot insert field 'row' (%s:%s)", o->out,
           o->path);
  CHECK_H5(H5Tinsert(*type, "det", FIELD_DET, u16), "cannot insert field 'det' (%s:%s)", o->out,
           o->path);
  CHECK_H5(H5Tinsert(*type, "name", FIELD_NAME, name), "cannot insert field 'name' (%s:%s)",
           o->out, o->path);
  CHECK_H5(H5Tinsert(*type, o->key_field, FIELD_KEY, key), "cannot insert the key field (%s:%s)",
           o->out, o->path);
  CHECK_H5(H5Tinsert(*type, "x", x_offset, f64), "cannot insert field 'x' (%s:%s)", o->out,
           o->path);
done:
  if (name >= 0) H5Tclose(name);
  if (rc != H5G_OK && *type >= 0) H5Tclose(*type);
  return rc;
}

/* A filtered dataset of another byte order or of reduced precision takes its rows in the file's
 * form: parallel HDF5 writes filtered data only collectively, and a type conversion turns a
 * collective write independent. */
int gen_rows_in_file_order(const gen_options *o) {
  int filtered = o->layout != LAYOUT_CONTIGUOUS && o->layout != LAYOUT_CHUNKED;
  return filtered && (o->big_endian || o->layout == LAYOUT_NBIT) && !o->table;
}

unsigned gen_precision(const gen_options *o) {
  return 8 * o->type.width - (o->layout == LAYOUT_NBIT ? NBIT_DROP_BITS : 0);
}

/* The dataset's file and memory types (local calls). */
int gen_dataset_types(const gen_options *o, hid_t *file, hid_t *mem) {
  int rc = H5G_OK;
  if (o->table) {
    CHECK(table_type(o, 1, file));
    CHECK(table_type(o, 0, mem));
  } else {
    CHECK_H5(*file = H5Tcopy(file_type(&o->type, o->big_endian)), "cannot copy type (%s:%s)",
             o->out, o->path);
    if (o->layout == LAYOUT_NBIT)
      CHECK_H5(H5Tset_precision(*file, gen_precision(o)), "cannot set the precision (%s:%s)",
               o->out, o->path);
    CHECK_H5(*mem = H5Tcopy(gen_rows_in_file_order(o) ? *file : memory_type(&o->type)),
             "cannot copy type (%s:%s)", o->out, o->path);
  }
done:
  return rc;
}
