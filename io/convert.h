/* Type conversions the I/O threads make on the rows they read (internal to io/): where HDF5's
 * conversion of the file type to the memory type is proven, from the two types, to be a byte
 * swap (integers and floats of the other byte order) or the widening of an integer with padding
 * bits (n-bit's reduced precision) to the native integer of its size, as H5T__conv_i_i makes it:
 * the value's bits taken from their offset and sign- or zero-extended. HDF5 is not thread-safe:
 * the plan is made on the calling thread, and applying it touches no HDF5 state. */
#ifndef H5G_IO_CONVERT_H
#define H5G_IO_CONVERT_H

#include <hdf5.h>
#include <stddef.h>

typedef struct {
  int active;          /* 0: memory holds the file's bytes unchanged */
  unsigned size;       /* bytes of an element, in the file and in memory alike */
  int file_big_endian; /* the file's byte order (memory: little-endian, this host's) */
  unsigned precision, offset; /* the value's bits in the file: fewer than 8 * size widen */
  int is_signed;
} h5g_convert;

/* 1 and *c set when the threads make HDF5's conversion of file_type to mem_type (none
 * included); 0 when it is left to HDF5. Calls HDF5 (calling thread only); fails nothing. */
int h5g_convert_plan(hid_t file_type, hid_t mem_type, h5g_convert *c);

/* 1 when `t` with the byte order of `like` equals `like` (they differ by a swap at most). */
int h5g_type_equal_but_order(hid_t t, hid_t like);

/* Converts `bytes` (whole elements) of buf in place, from the file's form to memory's. */
void h5g_convert_apply(const h5g_convert *c, void *buf, size_t bytes);

/* The same with `threads` threads, each taking whole elements: a dataset's slice converted at
 * memory speed rather than one core's. */
void h5g_convert_apply_threads(const h5g_convert *c, void *buf, size_t bytes, int threads);

/* "none", "byte swap" or "integer widening", for traces. */
const char *h5g_convert_name(const h5g_convert *c);

#endif
