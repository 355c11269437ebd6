/* h5gsort-manpage: prints the man page h5gsort(1) in roff, made from the option table that
 * --help prints (src/option_table.c), so the two never drift. The build runs it; cmake --install
 * puts its output in share/man/man1. */
#include <stdio.h>
#include <string.h>

#include "src/option_table.h"

/* roff text: a leading '.' or '\'' would be a request, a backslash an escape, '-' a hyphen. */
static void roff(const char *text) {
  for (const char *p = text; *p; p++) {
    if (p == text && (*p == '.' || *p == '\'')) fputs("\\&", stdout);
    if (*p == '\\') fputs("\\e", stdout);
    else if (*p == '-') fputs("\\-", stdout);
    else putchar(*p);
  }
}

int main(void) {
  printf(".TH H5GSORT 1 \"\" \"h5gsort %s\" \"User Commands\"\n", H5G_VERSION);
  printf(".SH NAME\nh5gsort \\- sort an HDF5 dataset larger than one GPU across MPI ranks\n");
  printf(".SH SYNOPSIS\n");
  for (int i = 0; h5g_option_synopsis[i]; i++) {
    printf(".B ");
    roff(h5g_option_synopsis[i]);
    printf("\n.br\n");
  }
  printf(".SH DESCRIPTION\n");
  roff(h5g_option_summary);
  printf(" Each rank reads one slice of INPUT, sorts it on its GPU (or CPU), the ranks agree on "
         "exact splitters, exchange data and write one globally sorted dataset to a temporary "
         "file beside OUTPUT, renamed into place once every rank succeeded.\n");
  printf(".SH OPTIONS\n");
  for (int i = 0; i < h5g_option_count; i++) {
    const h5g_option_spec *o = &h5g_option_table[i];
    printf(".TP\n");
    if (o->short_name) printf("\\fB\\-%c\\fR, ", o->short_name);
    printf("\\fB\\-\\-");
    roff(o->name);
    printf("\\fR");
    if (o->value) {
      printf(" \\fI");
      roff(o->value);
      printf("\\fR");
    }
    printf("\n");
    roff(o->help);
    printf("\n");
  }
  printf(".SH EXIT STATUS\n");
  roff(h5g_option_exit_codes);
  printf(" Every rank exits with the same code; rank 0 prints one line "
         "\\fBh5gsort: error:\\fR \\fIwhat\\fR (\\fIfile\\fR:\\fIdataset\\fR).\n");
  printf(".SH ENVIRONMENT\n.TP\n\\fBH5GSORT_IO\\fR\n\\fBmpio\\fR: HDF5 and collective MPI\\-IO "
         "throughout; \\fBpwrite\\fR: direct writes with pwrite instead of a mapping (one node).\n"
         ".TP\n\\fBH5GSORT_IO_POLICY\\fR\n\\fBauto\\fR (default): by where the ranks run. On "
         "one node, direct reads and writes into a mapping; on several (a file system they all "
         "see: Lustre, GPFS, NFS), direct threaded reads, and each rank's range written with "
         "pwrite in pieces aligned to the file system's block, then fdatasync. "
         "\\fBmultinode\\fR: the policy of several nodes on one node too (to measure or "
         "test it).\n"
         ".TP\n\\fBH5GSORT_HDF5_ERRORS\\fR\n1: print HDF5's own error stack.\n"
         ".TP\n\\fBH5GSORT_IO_TRACE\\fR\n1: one line on stderr per dataset transfer: how its "
         "rows moved.\n"
         ".TP\n\\fBH5GSORT_TIMELINE\\fR=\\fIFILE\\fR\nrank 0 appends one line per mark of the "
         "whole process, \\fIname epoch_seconds\\fR (wall clock), once MPI is finalized: main, "
         "mpi_init, mpi_init_done, phase:\\fINAME\\fR as each phase begins, gpu_context_ready, "
         "carry_buffers, carry_route, carry_read, carry_moved, carry_written (the carry), "
         "report_written, commit_done, pipeline_done, mpi_finalize, mpi_finalize_done, exit. A "
         "file that cannot be written, or that names INPUT or OUTPUT, is a warning, not a "
         "failure.\n");
  printf(".SH EXAMPLES\n.nf\nmpiexec \\-n 4 \\-\\-bind\\-to none h5gsort in.h5 out.h5 \\-d "
         "/particles/id \\-\\-verify\nsrun h5gsort \\-\\-plan in.h5 out.h5 \\-d /keys\n.fi\n");
  printf(".SH SEE ALSO\n.BR h5dump (1),\n.BR h5diff (1),\n.BR mpiexec (1),\n.BR srun (1);\n"
         "the README in share/h5gsort.\n");
  return 0;
}
