/* h5gsort-gen's parts (tools/gen*.c): the options, the element values and the HDF5 types.
 * Internal to tools/. */
#ifndef H5G_TOOLS_GEN_H
#define H5G_TOOLS_GEN_H

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>

#include "base/keys.h"
#include "base/manual.h"
#include "io/h5io.h"

#define FEW_DISTINCT 7
#define DETECTORS 97
#define NAME_BYTES 5
#define PI 3.14159265358979323846

typedef enum {
  DIST_UNIFORM, DIST_NORMAL, DIST_ZIPF, DIST_SORTED, DIST_REVERSE, DIST_EQUAL, DIST_FEW,
  DIST_SPECIAL, DIST_INDEX
} dist_kind;

typedef enum { LAYOUT_CONTIGUOUS, LAYOUT_CHUNKED, LAYOUT_GZIP, LAYOUT_SCALEOFFSET, LAYOUT_NBIT } layout_kind;

/* --layout nbit: an integer type whose precision is NBIT_DROP_BITS below its size (u4: 24 bits). */
#define NBIT_DROP_BITS 8

typedef struct {
  const char *out;
  const char *path;
  uint64_t count;
  h5g_keyspec type;
  dist_kind dist;
  uint64_t seed;
  int big_endian;
  layout_kind layout;
  uint64_t chunk;
  int gzip_level;                    /* deflate level of --layout gzip */
  int attrs;
  int force;
  int append;
  int row_rank;                      /* dimensions of one row: 0 for a 1-D dataset */
  hsize_t row_dims[H5S_MAX_RANK - 1];
  uint64_t row_elems;                /* elements per row (1 unless --row-shape) */
  int table;
  const char *key_field;
} gen_options;

/* The packed record of --table: offsets of its fields after the key (whose width varies). */
enum { FIELD_ROW = 0, FIELD_DET = 8, FIELD_NAME = 10, FIELD_KEY = FIELD_NAME + NAME_BYTES };

/* tools/gen_options.c: the command line, from one table of options (what getopt_long returns
 * for each: `code`), which --help and the man page h5gsort-gen(1) (tools/gen_manpage.c) are
 * made from too; usage text. */
typedef struct {
  const char *name;  /* the long name, without "--" */
  char short_name;   /* 'd', or 0 */
  const char *value; /* what the value looks like ("PATH"); NULL: a flag */
  int code;
  const char *help;
} gen_option_spec;
extern const gen_option_spec gen_option_table[];
extern const int gen_option_count;
extern const char *const gen_synopsis[]; /* NULL-terminated */
extern const char *const gen_summary;
extern const h5g_manual_item gen_examples[];      /* NULL tag last */
extern const h5g_manual_item gen_exit_statuses[]; /* NULL tag last */
void gen_usage(FILE *to);
/* Parses argv into *o. Returns H5G_ERR_USAGE with a message, or H5G_OK; *help set for -h. */
int gen_parse_options(int argc, char **argv, gen_options *o, int *help);

/* tools/gen_values.c: bytes of one row in memory (and in the file: tables are packed); row `row`
 * of the dataset, in memory layout, into buf. */
size_t gen_row_bytes(const gen_options *o);
void gen_fill_row(const gen_options *o, uint64_t row, unsigned char *buf);

/* tools/gen_types.c: a filtered dataset of another byte order or of reduced precision takes its
 * rows in the file's form (gen_fill_row swaps the bytes of big-endian ones); its precision in
 * bits (8 * width unless --layout nbit); the
 * dataset's file and memory types (local calls); the attributes of --attrs (collective). */
int gen_rows_in_file_order(const gen_options *o);
unsigned gen_precision(const gen_options *o);
int gen_dataset_types(const gen_options *o, hid_t *file, hid_t *mem);
int gen_write_attributes(const gen_options *o, h5g_dset *dset);

#endif
