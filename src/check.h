/* h5gsort --check: verify-only mode for a sorted dataset (and, with --against, its input). */
#ifndef H5G_CHECK_H
#define H5G_CHECK_H

#include <mpi.h>

#include "src/options.h"

/* Collective. H5G_OK when opt->input's dataset is sorted (per --descending) and, with
 * opt->against, holds the same number of keys with the same checksum as that dataset. Rank 0
 * prints the finding unless quiet; a failed check returns H5G_ERR_RUNTIME (exit 1). */
int h5g_check_run(MPI_Comm comm, const h5g_options *opt);

#endif
