/* Command line of h5gsort (README "Options"; docs/semantics.md, "Options in detail"). */
#ifndef H5G_OPTIONS_H
#define H5G_OPTIONS_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#include "io/h5io.h"
#include "src/transport.h"

#define H5G_MAX_CARRY 64
#define H5G_MAX_KEYS 16
#define H5G_MAX_WRITTEN (H5G_MAX_CARRY + H5G_MAX_KEYS + 2)

typedef enum { H5G_BACKEND_AUTO, H5G_BACKEND_CUDA, H5G_BACKEND_CPU } h5g_backend_choice;

typedef struct {
  const char *input, *output;
  const char *dataset, *output_dataset; /* output_dataset defaults to dataset */
  const char *datasets[H5G_MAX_KEYS];   /* every -d, in priority order (dataset is the first) */
  int ndatasets;
  const char *report;                   /* --report FILE.json, or NULL */
  int check;                            /* --check FILE: verify-only mode (input = FILE) */
  const char *index_out;                /* --index-out PATH: source index of every output key */
  const char *key_field;                /* --key-field NAME[,...]: the first field, or NULL */
  const char *key_fields[H5G_MAX_KEYS]; /* every field of --key-field, in priority order */
  int nkey_fields;
  int key_columns[H5G_MAX_KEYS];        /* --key-column J[,...]: columns of a 2-D dataset */
  int nkey_columns;
  int key_descending[H5G_MAX_KEYS];     /* --order, one direction per key */
  int norder;
  h5g_na_position na_position;          /* --na-position, every float key (0: numpy's place) */
  const char *carry[H5G_MAX_CARRY];     /* --carry PATH[,PATH...]: datasets moved with the keys */
  int ncarry;
  int stable;                           /* --stable (records are always sorted stably) */
  int64_t top;                          /* --top K: only the first K of the order; -1: all */
  int unique;                           /* --unique: one element per distinct key (tuple) */
  const char *counts;                   /* --counts PATH: uint64 count of each kept key */
  const char *against, *against_dataset; /* --check: compare the checksum with this input */
  h5g_backend_choice backend;
  h5g_exchange_choice exchange;
  uint64_t device_memory; /* bytes; 0 = backend default */
  uint64_t host_memory;   /* --host-memory: what the job may use on a node; 0 = read the limits */
  const char *scratch;    /* --scratch DIR: where a share that does not fit spills */
  int no_spill;           /* --no-spill: such a share stops the run instead */
  int resume;             /* --resume: go on from the sorted share a killed run kept */
  int plan;               /* --plan: validate, print the sizing and the plan, stop */
  int io_threads;         /* --io-threads; 0 = the CPUs this rank may run on */
  h5g_io_storage_choice storage; /* --layout, --chunk, --compress (all zero: keep the input's) */
  int whole_file;         /* --whole-file: OUTPUT is a copy of INPUT with the outputs replaced */
  int argc;               /* the command line, for the report */
  const char *const *argv;
  int descending, force, verify, quiet, verbose, progress;
  double progress_seconds; /* --progress[=SECONDS]: between heartbeat lines off a terminal */
  int help, version;
} h5g_options;

/* Parses argv (the same on every rank). Returns H5G_ERR_USAGE with a message on bad input.
 * Keeps pointers into argv (and splits --carry lists in place). */
int h5g_options_parse(int argc, char **argv, h5g_options *opt);
/* Where carried dataset `path` goes in OUTPUT: the same path, or, when --output-dataset moves the
 * keys, beside them under the output dataset's group. Allocated (free it); NULL: out of memory. */
char *h5g_options_carry_target(const h5g_options *opt, const char *path);
/* Every dataset path the run writes in OUTPUT, into written[H5G_MAX_WRITTEN] (*count of them):
 * the keys, --index-out, --counts and the carried datasets' targets, which are allocated into
 * targets[H5G_MAX_CARRY] (the rest NULL; free each, also on failure). */
int h5g_options_written(const h5g_options *opt, const char **written, char **targets,
                        int *count);
/* True when records move with the keys (--carry, --index-out, --key-field or --key-column). */
int h5g_options_moves_records(const h5g_options *opt);

/* One sort key: a 1-D dataset, a field of a 1-D compound table, or a column of a 2-D dataset. */
typedef struct {
  const char *dataset;
  const char *field; /* or NULL */
  int column;        /* or -1 */
  int descending;
  h5g_na_position na; /* --na-position */
} h5g_key_source;
/* The keys in priority order: several -d, several --key-field fields or --key-column columns. */
int h5g_options_key_count(const h5g_options *opt);
h5g_key_source h5g_options_key(const h5g_options *opt, int i);
/* Where key i of several -d (or the one -d) is written: its own path (--output-dataset). */
const char *h5g_options_key_output(const h5g_options *opt, int i);
/* True when the keys are composed into one (src/keyset.h), whose equality is numpy's: several
 * keys, fields of a table or columns of a 2-D dataset (whole rows move, by source index), or
 * --unique. One key of a 1-D dataset is otherwise sorted as it is (ties in bit order). */
int h5g_options_composed(const h5g_options *opt);
void h5g_options_usage(FILE *out);

#endif
