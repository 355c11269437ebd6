/* Pieces shared by the independent output checkers (h5gsort_check, h5gsort_check_records,
 * h5gsort_check_keys): numpy's sort order on raw element bits, value formatting, raw dataset
 * reads, attribute comparison. They share no code with h5gsort's own key transforms or sorts. */
#ifndef H5G_TESTS_CHECK_COMMON_H
#define H5G_TESTS_CHECK_COMMON_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { KIND_UNSIGNED, KIND_SIGNED, KIND_FLOAT } value_kind;

typedef struct {
  value_kind kind;
  size_t width; /* bytes */
  int big_endian;
} value_type;

/* The checker's name, defined by each tool, e.g. "h5gsort_check". */
extern const char *const check_program;

/* Prints "<program>: FAILED: <message>" on stdout and returns 1. */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Integer or IEEE float of 1, 2, 4 or 8 bytes (floats 4 or 8); otherwise fail()s. */
int describe_type(hid_t type, value_type *vt);

/* Element i of a raw file buffer as host-order bits. */
uint64_t raw_element(const unsigned char *raw, uint64_t i, const value_type *vt);

/* <0, 0, >0 as a sorts before, with, after b in numpy.sort's ascending order (NaN last,
 * -0.0 == +0.0). */
int compare_values(uint64_t a, uint64_t b, const value_type *vt);

/* "value (0xbits)" */
void format_value(char *buf, size_t size, uint64_t bits, const value_type *vt);

/* A dataset read whole as raw file bytes (the file type as memory type). */
typedef struct {
  hid_t dset, type;
  int ndims;
  hsize_t dims[H5S_MAX_RANK];
  uint64_t rows;    /* first dimension (1 for a scalar) */
  size_t row_bytes; /* type size x elements per row */
  unsigned char *raw;
} raw_dataset;

void init_raw(raw_dataset *d);
void close_raw(raw_dataset *d); /* and init_raw again */
/* Opens file:path and reads all of it; fail()s if it cannot. */
int read_raw(hid_t file, const char *file_name, const char *path, raw_dataset *d);
/* out has in's file datatype and shape, but `rows` rows; fail()s if not. */
int check_same_layout(const raw_dataset *in, const raw_dataset *out, uint64_t rows,
                      const char *what);

/* Every attribute of in_obj is on out_obj with the same type, shape and value; fail()s if not. */
int check_attributes(hid_t in_obj, hid_t out_obj);

#endif
