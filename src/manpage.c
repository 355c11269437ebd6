/* h5gsort-manpage: prints the man page h5gsort(1) in roff, made from the option table that
 * --help prints (src/option_table.c) and the tables of src/about.c, so the two never drift. The
 * build runs it; cmake --install puts its output in share/man/man1. */
#include <stdio.h>

#include "base/manual.h"
#include "src/about.h"
#include "src/option_table.h"

int main(void) {
  h5g_man_begin(stdout, "h5gsort", H5G_VERSION,
                "sort an HDF5 dataset larger than one GPU across MPI ranks", h5g_option_synopsis);
  h5g_man_section(stdout, "DESCRIPTION", h5g_option_summary);
  h5g_man_text(stdout, h5g_about_description);
  putchar('\n');
  h5g_man_section(stdout, "OPTIONS", NULL);
  for (int i = 0; i < h5g_option_count; i++) {
    const h5g_option_spec *o = &h5g_option_table[i];
    h5g_man_option(stdout, o->short_name, o->name, o->value, o->help);
  }
  h5g_man_section(stdout, "EXIT STATUS",
                  "Every rank exits with the same code; rank 0 prints one line, "
                  "h5gsort: error: what (file:dataset).");
  h5g_man_items(stdout, h5g_about_exit_statuses);
  h5g_man_section(stdout, "FILES", NULL);
  h5g_man_items(stdout, h5g_about_files);
  h5g_man_section(stdout, "ENVIRONMENT", NULL);
  h5g_man_items(stdout, h5g_about_environment);
  h5g_man_section(stdout, "EXAMPLES", NULL);
  h5g_man_examples(stdout, h5g_about_examples);
  h5g_man_section(stdout, "BUGS", h5g_about_bugs);
  h5g_man_section(stdout, "SEE ALSO",
                  "h5gsort-gen(1), h5dump(1), h5diff(1), mpiexec(1), srun(1); the README in "
                  "share/h5gsort.");
  return 0;
}
