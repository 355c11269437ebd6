/* What h5gsort says of itself besides its options (src/option_table.c): the man page's sections
 * h5gsort(1) (src/manpage.c), the examples and exit statuses --help ends with, and --version's
 * description of the build. Internal to src/. */
#ifndef H5G_SRC_ABOUT_H
#define H5G_SRC_ABOUT_H

#include <stdio.h>

#include "base/manual.h"

/* Each a list h5g_manual_item ends (NULL tag); --help shows the first H5G_HELP_EXAMPLES
 * examples, the man page all of them. */
extern const h5g_manual_item h5g_about_examples[];
extern const h5g_manual_item h5g_about_exit_statuses[];
extern const h5g_manual_item h5g_about_files[];
extern const h5g_manual_item h5g_about_environment[];
extern const char *const h5g_about_description;
extern const char *const h5g_about_bugs;

/* --version: "h5gsort X.Y.Z" (the first line, for scripts), then the backends built (CUDA's
 * runtime and architectures), the exchanges, the MPI library and HDF5 this process runs. */
void h5g_about_version(FILE *out);

#endif
