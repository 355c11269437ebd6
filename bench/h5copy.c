/* The copy bound of bench/e2e.sh: h5gsort's own I/O with every sort phase skipped. Each rank
 * reads its slice of a dataset with the same collective reads h5gsort uses and writes it to a
 * new file at the same path with the same collective writes.
 *   mpiexec -n P bench_h5copy IN.h5 OUT.h5 /path */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/topology.h"
#include "base/error.h"
#include "base/host_memory.h"

static int copy(const char *in_path, const char *out_path, const char *dataset, double t[2]) {
  int rc = H5G_OK, rank, size;
  h5g_file *in = NULL, *out = NULL;
  h5g_dset *src = NULL, *dst = NULL;
  void *rows = NULL;
  size_t bytes = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double start = MPI_Wtime();
  CHECK(h5g_io_open_file(MPI_COMM_WORLD, in_path, 0, &in));
  CHECK(h5g_io_open_rows(in, dataset, &src));
  uint64_t n_total = 0;
  h5g_dataset_info info;
  if (rank == 0) CHECK(h5g_io_inspect(in_path, dataset, NULL, -1, &info));
  n_total = rank == 0 ? info.n : 0;
  CHECK_MPI(MPI_Bcast(&n_total, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD));
  uint64_t first = h5g_share_begin(rank, n_total, size);
  uint64_t n = h5g_share_begin(rank + 1, n_total, size) - first;
  bytes = n * h5g_io_row_bytes(src);
  /* The same host buffers as h5gsort's slices (resident before the read), so the bound is fair. */
  int local_rank = 0, ranks_on_node = 1;
  CHECK(h5g_local_rank(MPI_COMM_WORLD, &local_rank, &ranks_on_node));
  CHECK(h5g_agree(MPI_COMM_WORLD, h5g_resident_alloc(bytes, ranks_on_node, &rows)));
  CHECK(h5g_io_read(src, first, n, rows));
  MPI_Barrier(MPI_COMM_WORLD);
  t[0] = MPI_Wtime() - start;
  start = MPI_Wtime();
  CHECK(h5g_io_create_file(MPI_COMM_WORLD, out_path, &out));
  CHECK(h5g_io_create_like(out, dataset, src, n_total, NULL, &dst)); /* storage as h5gsort keeps it */
  CHECK(h5g_io_write(dst, first, n, rows));
  CHECK(h5g_io_close(dst));
  dst = NULL;
  CHECK(h5g_io_close_file(out));
  out = NULL;
  MPI_Barrier(MPI_COMM_WORLD);
  t[1] = MPI_Wtime() - start;
done:
  h5g_resident_free(rows, bytes);
  h5g_io_close(dst);
  h5g_io_close_file(out);
  h5g_io_close(src);
  h5g_io_close_file(in);
  return rc;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  h5g_io_quiet();
  int rank, rc = H5G_ERR_USAGE;
  double t[2] = {0, 0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc == 4) rc = copy(argv[1], argv[2], argv[3], t);
  else if (rank == 0) fprintf(stderr, "usage: mpiexec -n P bench_h5copy IN.h5 OUT.h5 /path\n");
  if (rc == H5G_OK && rank == 0) printf("read %.3f s write %.3f s total %.3f s\n", t[0], t[1], t[0] + t[1]);
  if (rc != H5G_OK && rank == 0 && argc == 4) fprintf(stderr, "bench_h5copy: error: %s\n", h5g_error_message());
  MPI_Finalize();
  return rc;
}
