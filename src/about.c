/* The tables of src/about.h: the man page's and --help's text beyond the options. Each example
 * is a command that runs as written on files that hold those datasets. */
#include "src/about.h"

#include "io/h5io.h"
#include "kernels/cuda_backend.h"
#include "mpi/launch.h"

const h5g_manual_item h5g_about_examples[] = {
    {"mpiexec -n 4 --bind-to none h5gsort in.h5 out.h5 -d /keys",
     "Sort the dataset /keys of in.h5 on 4 ranks (a GPU each where there are GPUs) into out.h5; "
     "--bind-to none leaves each rank its share of the cores for file I/O."},
    {"srun --cpus-per-task=8 --gpus-per-task=1 h5gsort in.h5 sorted.h5 -d /keys",
     "The same in a Slurm job (sbatch -n 8, say): each rank with a GPU and 8 cores of its own."},
    {"mpiexec -n 4 h5gsort particles.h5 by_id.h5 -d /id --carry /x,/y,/z",
     "Sort particles by id, their positions (one row per id) permuted with them."},
    {"mpiexec -n 4 h5gsort events.h5 by_time.h5 -d /events --key-field run,time",
     "Sort the compound table /events by its field run, then time, moving whole records."},
    {"mpiexec -n 4 h5gsort in.h5 top.h5 -d /energy --descending --top 1000",
     "The 1000 largest values of /energy, largest first; only those are exchanged and written."},
    {"mpiexec -n 4 h5gsort in.h5 halos.h5 -d /halo --unique --counts /halo_size",
     "Each distinct value of /halo once, ascending, and in /halo_size how often it occurs."},
    {"mpiexec -n 4 h5gsort data.h5 data.h5 -d /keys --force",
     "Sort /keys of data.h5 in place: the sorted copy replaces data.h5 only once every rank "
     "succeeded."},
    {"mpiexec -n 4 h5gsort --check out.h5 -d /keys --against in.h5",
     "Check that out.h5's /keys is in order and holds the keys of in.h5's /keys (count and "
     "checksum): exit 0 if so, 1 if not."},
    {NULL, NULL}};

const h5g_manual_item h5g_about_exit_statuses[] = {
    {"0", "success: OUTPUT written and renamed into place (also a signal that comes once it is); "
          "--check found the file right; --plan found that the run fits; --help, --version."},
    {"1", "runtime failure: I/O (a write failure, the file-size limit, a full disk), out of host "
          "or device memory, MPI, CUDA, --verify or --check finding the data wrong, --plan "
          "finding that the run does not fit, a signal (SIGINT, SIGTERM, SIGHUP, SIGUSR1, "
          "SIGUSR2, SIGXCPU) before the commit. OUTPUT is left as it was."},
    {"2", "usage or input error: a bad option, a missing file or dataset, not HDF5, an "
          "unsupported type or shape, OUTPUT exists without --force (also one made during the "
          "run), OUTPUT's directory missing or not writable, a --report that names INPUT or "
          "OUTPUT. OUTPUT is left as it was, and no report is written."},
    {NULL, NULL}};

const h5g_manual_item h5g_about_files[] = {
    {"DIR/.NAME.h5gsort-HOST-PID.tmp",
     "OUTPUT while it is written: a hidden file beside OUTPUT (DIR and NAME are OUTPUT's "
     "directory and name, HOST and PID those of rank 0; a NAME too long for the directory "
     "is cut and a hash of it added), renamed to OUTPUT once every rank succeeded, never over "
     "an existing file without --force. A failed or interrupted run removes it; one a killed "
     "run left is removed by the next run writing the same OUTPUT. Files MPI-IO makes beside "
     "it (.tmp.data.RANK, .tmp.metadata.RANK) go with it."},
    {"DIR/.NAME.h5gsort-HOST-PID.tmp.lock",
     "held by rank 0 with flock(2) while the temporary file lives: a later run removes a "
     "temporary file only when nobody holds its lock (where the file system has no flock, "
     "when no process of that PID runs)."},
    {"--report FILE.json",
     "written by rank 0 once the output is written, before the commit (a run that then fails "
     "rewrites it with its exit status), by a run that fails at run time (exit 1), and by "
     "--plan; not for a usage or input error (exit 2) or --check."},
    {NULL, NULL}};

const h5g_manual_item h5g_about_environment[] = {
    {"H5GSORT_IO=mpio|pwrite",
     "mpio: HDF5 and collective MPI-IO throughout; pwrite: direct writes with pwrite instead of "
     "a mapping (one node)."},
    {"H5GSORT_IO_POLICY=auto|multinode",
     "auto (default): by where the ranks run. On one node, direct reads and writes into a "
     "mapping; on several (a file system they all see: Lustre, GPFS, NFS), direct threaded "
     "reads, and each rank's range written with pwrite in pieces aligned to the file system's "
     "block, then fdatasync. multinode: the policy of several nodes on one node too (to "
     "measure or test it). Any other value is a usage error."},
    {"H5GSORT_HDF5_ERRORS=1", "print HDF5's own error stack."},
    {"H5GSORT_IO_TRACE=1", "one line on stderr per dataset transfer: how its rows moved."},
    {"H5GSORT_TIMELINE=FILE",
     "rank 0 appends one line per mark of the whole process, name epoch_seconds (wall clock), "
     "once MPI is finalized: main, mpi_init, mpi_init_done, phase:NAME as each phase begins, "
     "gpu_context_ready, carry_buffers, carry_route, carry_read, carry_moved, carry_written "
     "(the carry), report_written, commit_done, pipeline_done, mpi_finalize, "
     "mpi_finalize_done, exit. A file that cannot be written, or that names INPUT or OUTPUT, "
     "is a warning, not a failure."},
    {"H5GSORT_IO_PIECE_BYTES=N",
     "bytes per MPI-IO read or write call (default 1 GiB), for tests."},
    {"H5GSORT_PIN_PIECE_BYTES=N",
     "bytes of host memory pinned for the GPU at a time, a power of two from 4096 (default 128 "
     "MiB), for tests."},
    {"H5GSORT_MAX_MESSAGE_ELEMS=N",
     "most elements per MPI message of the exchange (default 2^30), for tests."},
    {"H5GSORT_TEST_KILL, H5GSORT_TEST_SLEEP, H5GSORT_TEST_LEAKS",
     "hooks of the test suite: they kill or stop ranks at a point, or fail a run that leaves "
     "an HDF5 object open; never set them otherwise."},
    {"HWLOC_COMPONENTS, OMPI_MCA_sharedfp, CUDA_DEVICE_MAX_CONNECTIONS",
     "set by h5gsort where unset, before MPI and CUDA start: hwloc without its GPU components "
     "(h5gsort asks CUDA itself), Open MPI without the shared-file-pointer components "
     "lockedfile and sm (unused; they overflow a buffer on long paths), 2 CUDA connections."},
    {"OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID",
     "the rank before MPI_Init, as the launcher tells it: rank 0 prints a failure that comes "
     "before MPI starts."},
    {"HDF5_PLUGIN_PATH",
     "where HDF5, and h5gsort's threaded reads, find filter plugins."},
    {NULL, NULL}};

const char *const h5g_about_description =
    "Each rank reads one slice of INPUT, sorts it on its GPU (or CPU), the ranks agree on exact "
    "splitters, exchange data and write one globally sorted dataset to a temporary file beside "
    "OUTPUT, renamed into place once every rank succeeded.";

const char *const h5g_about_bugs =
    "Known limits: a key is a 1-D integer or float dataset, a numeric field of a compound table "
    "or a column of a 2-D dataset (strings, enums, variable-length and opaque types are "
    "refused); --output-dataset goes with one -d (several keys are each written at their own "
    "path); every rank must open the same file by the same path (disks local to each node are "
    "not supported); --compress offers gzip only (an output that would keep szip is refused); "
    "--top with --unique, or keys over 16 bytes, sorts everything first. To report a problem, "
    "give the output of h5gsort --version, the command as run (launcher and its options "
    "included), the error line (with -v, where it came from) and the run's --report FILE.json.";

void h5g_about_version(FILE *out) {
  char cuda[128], mpi[256], hdf5[128];
  int have_cuda = h5g_cuda_build(cuda, sizeof cuda);
  h5g_mpi_version(mpi, sizeof mpi);
  h5g_io_library(hdf5, sizeof hdf5);
  fprintf(out, "h5gsort %s\n", H5G_VERSION);
  if (have_cuda)
    fprintf(out, "backends: cpu, cuda (%s)\n", cuda);
  else
    fprintf(out, "backends: cpu (built without CUDA)\n");
#ifdef H5G_HAVE_NCCL
  fprintf(out, "exchange: mpi, nccl\n");
#else
  fprintf(out, "exchange: mpi\n");
#endif
  fprintf(out, "MPI: %s\nHDF5: %s\n", mpi, hdf5);
}
