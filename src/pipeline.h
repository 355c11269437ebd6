/* The h5gsort pipeline (docs/design-notes.md, "Architecture"): validate, read, transform, sort
 * runs, exact splitters, exchange, merge, inverse transform, write to a temporary file, verify,
 * rename. */
#ifndef H5G_PIPELINE_H
#define H5G_PIPELINE_H

#include <mpi.h>

#include "src/options.h"
#include "src/report.h"

/* Collective. Returns the status every rank agreed on; on failure the agreed message is in
 * h5g_error_message() on every rank, OUTPUT is absent (or unchanged) and no temp file is left. */
int h5g_pipeline_run(MPI_Comm comm, const h5g_options *opt, h5g_report *rep);

#endif
