/* h5gsort-gen: writes a numeric test/benchmark dataset in parallel.
 *
 *   mpiexec -n P h5gsort-gen OUT.h5 -d /path/to/ds --count N --type T --dist D --seed S
 *
 * Element i's value depends only on (seed, i): a counter-based generator (splitmix64's mixer
 * over seed and index), so the file is the same whatever the rank count. Rank r writes the rows
 * [r*N/P, (r+1)*N/P) through io/ (collective writes), in blocks so memory stays bounded. Ranks
 * agree on every error before the next collective call, exit with the same code, and a failed
 * run leaves no OUT behind (unless --append).
 *
 * Besides 1-D arrays it writes the inputs of record sorts:
 * - `--row-shape K[,L...]`: an N x K (x L ...) array; element i is the i-th in C (row-major)
 *   order, so row r holds elements r*K*L... onwards.
 * - `--table`: a 1-D compound table, packed (no padding, fields at odd offsets), one record per
 *   row r:  row u64 = r | det u16 = detector number 0..96 (many repeats) | name 5-byte string
 *   "r" + 4 hex digits of r | KEY = element r of --type/--dist | x f64 uniform in (-1, 1].
 *   KEY's field name is "key" unless --key-field names it. Byte order follows --order. */
#include <hdf5.h>
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "mpi/topology.h"
#include "io/h5io.h"
#include "mpi/launch.h"
#include "mpi/agree.h"
#include "gen.h"

#define BLOCK_BYTES ((uint64_t)1 << 25) /* bytes generated and written per collective call */

/* Generates and writes this rank's rows [r*N/P, (r+1)*N/P) in blocks of BLOCK_BYTES; every rank
 * makes the same number of collective writes (empty ones once its rows are done). */
static int write_slice(const gen_options *o, h5g_dset *dset, int rank, int nranks) {
  int rc = H5G_OK;
  const size_t bytes_per_row = gen_row_bytes(o);
  const uint64_t block_rows = BLOCK_BYTES / bytes_per_row ? BLOCK_BYTES / bytes_per_row : 1;
  const uint64_t lo = h5g_share_begin((uint64_t)rank, o->count, (uint64_t)nranks);
  const uint64_t hi = h5g_share_begin((uint64_t)rank + 1, o->count, (uint64_t)nranks);
  const uint64_t largest_slice = (o->count + (uint64_t)nranks - 1) / (uint64_t)nranks;
  const uint64_t nblocks = (largest_slice + block_rows - 1) / block_rows;
  const size_t buf_rows = (size_t)(hi - lo < block_rows ? hi - lo : block_rows);
  unsigned char *buf = malloc(buf_rows * bytes_per_row);

  CHECK(h5g_agree_alloc(MPI_COMM_WORLD, buf != NULL, buf_rows * bytes_per_row));
  for (uint64_t b = 0; b < nblocks; b++) {
    uint64_t start = lo + b * block_rows;
    uint64_t n = start < hi ? (hi - start < block_rows ? hi - start : block_rows) : 0;
    for (uint64_t i = 0; i < n; i++) gen_fill_row(o, start + i, buf + i * bytes_per_row);
    CHECK(h5g_io_write(dset, start, n, buf));
  }
done:
  free(buf);
  return rc;
}

/* Creates (or, with --append, opens) OUT and writes the dataset. Every step agrees before the
 * collective call that follows, so all ranks leave together; a file this run created is removed
 * when it fails. */
static int generate(const gen_options *o, int rank, int nranks) {
  int rc = H5G_OK, created = 0;
  h5g_file *file = NULL;
  h5g_dset *dset = NULL;
  hid_t ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
  hsize_t dims[H5S_MAX_RANK];
  static const h5g_compress_choice compress[] = {
      [LAYOUT_CONTIGUOUS] = H5G_COMPRESS_NONE, [LAYOUT_CHUNKED] = H5G_COMPRESS_NONE,
      [LAYOUT_GZIP] = H5G_COMPRESS_GZIP, [LAYOUT_SCALEOFFSET] = H5G_COMPRESS_SCALEOFFSET,
      [LAYOUT_NBIT] = H5G_COMPRESS_NBIT};
  const h5g_io_storage_choice storage = {
      o->layout == LAYOUT_CONTIGUOUS ? H5G_LAYOUT_CONTIGUOUS : H5G_LAYOUT_CHUNKED, o->chunk,
      compress[o->layout], o->gzip_level};
  /* Rank 0 decides "exists?" before any rank may create the file. */
  int exists = rank == 0 && access(o->out, F_OK) == 0;
  CHECK_MPI(MPI_Bcast(&exists, 1, MPI_INT, 0, MPI_COMM_WORLD));

  if (exists && !o->force && !o->append)
    H5G_FAIL(H5G_ERR_USAGE, "%s exists (use --force to replace it or --append to add to it)",
             o->out);
  if (exists && o->append) {
    CHECK(h5g_io_open_file(MPI_COMM_WORLD, o->out, 1, &file));
  } else {
    CHECK(h5g_io_create_file(MPI_COMM_WORLD, o->out, &file));
    created = 1;
  }
  dims[0] = o->count;
  for (int k = 0; k < o->row_rank; k++) dims[k + 1] = o->row_dims[k];
  CHECK(h5g_agree(MPI_COMM_WORLD, gen_dataset_types(o, &ftype, &mtype)));
  CHECK(h5g_io_create(file, o->path, ftype, mtype, 1 + o->row_rank, dims, &storage, &dset));
  CHECK(write_slice(o, dset, rank, nranks));
  if (o->attrs) CHECK(gen_write_attributes(o, dset));
done:
  if (ftype >= 0) H5Tclose(ftype);
  if (mtype >= 0) H5Tclose(mtype);
  /* Every rank is here with the same status (each step agreed): the closes are collective. */
  if (h5g_io_close(dset) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  if (h5g_io_close_file(file) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  if (rc != H5G_OK && created && rank == 0) unlink(o->out);
  return rc;
}

int main(int argc, char **argv) {
  gen_options o;
  int rank = 0, nranks = 1, help = 0;
  h5g_mpi_before_init(); /* as h5gsort does (a setting it could not make changes no result) */
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  h5g_io_quiet();

  int rc = gen_parse_options(argc, argv, &o, &help);
  if (rc == H5G_OK && help) {
    if (rank == 0) gen_usage(stdout);
  } else if (rc == H5G_OK) {
    rc = generate(&o, rank, nranks);
  } else if (rank == 0) {
    gen_usage(stderr);
  }

  /* Every rank exits with the same code; rank 0 prints the lowest failing rank's message. */
  rc = h5g_agree(MPI_COMM_WORLD, rc);
  if (rc != H5G_OK && rank == 0) fprintf(stderr, "h5gsort-gen: error: %s\n", h5g_error_message());
  MPI_Finalize();
  return rc;
}
