/* HDF5 access for h5gsort: validate the input, read slices collectively, create the output
 * (a temporary file that the caller renames), write slices collectively, copy attributes.
 * Knows nothing of CUDA. Every function returns an h5g status (src/error.h); HDF5's own error
 * stack is silenced and turned into one message. */
#ifndef H5G_IO_H5IO_H
#define H5G_IO_H5IO_H

#include <mpi.h>
#include <stdint.h>

#include "src/keys.h"

typedef struct {
  uint64_t n;            /* number of elements */
  h5g_key_class cls;     /* integer signed/unsigned or IEEE float */
  unsigned width;        /* bytes per element */
  int big_endian;        /* byte order in the file */
  char type_name[48];    /* e.g. "uint32 (big-endian)" */
} h5g_dataset_info;

typedef struct h5g_input h5g_input;
typedef struct h5g_output h5g_output;

/* Silences HDF5's automatic error stack printing (call once, every rank). */
void h5g_io_quiet(void);

/* Serial inspection (one rank): file exists and is HDF5, path names a 1-D dataset of a supported
 * type. Returns H5G_ERR_USAGE with a message that names the problem otherwise. */
int h5g_io_inspect(const char *file, const char *dataset, h5g_dataset_info *info);

/* Collective open of the input dataset on every rank of comm. */
int h5g_io_open_input(MPI_Comm comm, const char *file, const char *dataset, h5g_input **in);
/* Collective read of elements [offset, offset + count) in host byte order. Every rank calls it
 * the same number of times (count may be 0). */
int h5g_io_read(h5g_input *in, uint64_t offset, uint64_t count, void *buf);
void h5g_io_close_input(h5g_input *in);

/* Collective: creates `tmp_file` holding dataset `dataset` (intermediate groups created) with
 * the input's datatype, n elements and attributes. With `copy_of_input`, tmp_file is expected
 * to be a byte copy of the input file (in-place sort): the object at `dataset` is replaced
 * and everything else in the file stays. */
int h5g_io_create_output(MPI_Comm comm, const char *tmp_file, const char *dataset,
                         const h5g_input *in, int copy_of_input, h5g_output **out);
/* Collective write of elements [offset, offset + count) from host byte order. */
int h5g_io_write(h5g_output *out, uint64_t offset, uint64_t count, const void *buf);
/* Collective read back of the output (for --verify). */
int h5g_io_read_output(h5g_output *out, uint64_t offset, uint64_t count, void *buf);
/* Collective close; returns an error if flushing failed. Safe with NULL. */
int h5g_io_close_output(h5g_output *out);

/* HDF5 objects (files, datasets, types, ...) still open in this process: 0 after a clean run. */
long h5g_io_open_objects(void);

/* Bytes per collective read/write call; larger transfers are split (MPI-IO counts are int). */
uint64_t h5g_io_piece_bytes(void);

#endif
