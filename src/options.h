/* Command line of h5gsort (DESIGN.md section 1). */
#ifndef H5G_OPTIONS_H
#define H5G_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

typedef enum { H5G_BACKEND_AUTO, H5G_BACKEND_CUDA, H5G_BACKEND_CPU } h5g_backend_choice;

typedef struct {
  const char *input, *output;
  const char *dataset, *output_dataset; /* output_dataset defaults to dataset */
  const char *report;                   /* --report FILE.json, or NULL */
  int check;                            /* --check FILE: verify-only mode (input = FILE) */
  const char *against, *against_dataset; /* --check: compare the checksum with this input */
  h5g_backend_choice backend;
  uint64_t device_memory; /* bytes; 0 = backend default */
  int descending, force, verify, quiet, verbose, progress;
  int help, version;
} h5g_options;

/* Parses argv (the same on every rank). Returns H5G_ERR_USAGE with a message on bad input. */
int h5g_options_parse(int argc, char **argv, h5g_options *opt);
void h5g_options_usage(FILE *out);

#endif
