/* h5gsort-gen-manpage: prints the man page h5gsort-gen(1) in roff, made from the option table
 * that --help prints (tools/gen_options.c). The build runs it; cmake --install puts its output
 * in share/man/man1. */
#include <stdio.h>

#include "base/manual.h"
#include "gen.h"

int main(void) {
  h5g_man_begin(stdout, "h5gsort-gen", H5G_VERSION,
                "write a numeric HDF5 test dataset in parallel", gen_synopsis);
  h5g_man_section(stdout, "DESCRIPTION", gen_summary);
  h5g_man_section(stdout, "OPTIONS", NULL);
  for (int i = 0; i < gen_option_count; i++) {
    const gen_option_spec *o = &gen_option_table[i];
    h5g_man_option(stdout, o->short_name, o->name, o->value, o->help);
  }
  h5g_man_section(stdout, "EXIT STATUS",
                  "Every rank exits with the same code; rank 0 prints one line, "
                  "h5gsort-gen: error: what.");
  h5g_man_items(stdout, gen_exit_statuses);
  h5g_man_section(stdout, "EXAMPLES", NULL);
  h5g_man_examples(stdout, gen_examples);
  h5g_man_section(stdout, "SEE ALSO", "h5gsort(1), h5dump(1), mpiexec(1).");
  return 0;
}
