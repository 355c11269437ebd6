#include "src/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/topology.h"
#include "base/error.h"
#include "src/verify.h"

typedef struct {
  h5g_dataset_info checked, against;
} check_verdict;

static int inspect_both(const h5g_options *opt, int rank, check_verdict *v) {
  int rc = H5G_OK;
  if (rank != 0) goto done;
  CHECK(h5g_io_inspect(opt->input, opt->dataset, opt->key_field, &v->checked));
  if (opt->against) {
    CHECK(h5g_io_inspect(opt->against, opt->against_dataset, opt->key_field, &v->against));
    if (v->against.cls != v->checked.cls || v->against.width != v->checked.width)
      H5G_FAIL(H5G_ERR_USAGE, "types differ: %s in %s:%s, %s in %s:%s", v->checked.type_name,
               opt->input, opt->dataset, v->against.type_name, opt->against, opt->against_dataset);
  }
done:
  return rc;
}

/* Reads this rank's share of file:dataset into keys (n elements from offset). */
static int read_share(MPI_Comm comm, const char *file, const char *dataset, const char *key_field,
                      uint64_t offset, uint64_t n, void *keys) {
  int rc = H5G_OK;
  h5g_file *f = NULL;
  h5g_dset *d = NULL;
  CHECK(h5g_io_open_file(comm, file, 0, &f));
  CHECK(h5g_io_open_keys(f, dataset, key_field, &d));
  CHECK(h5g_io_read(d, offset, n, keys));
done:
  h5g_io_close(d);
  h5g_io_close_file(f);
  return rc;
}

static int allocate(void **keys, size_t bytes) {
  int rc = H5G_OK;
  *keys = bytes ? malloc(bytes) : NULL;
  CHECK_ALLOC(*keys, bytes);
done:
  return rc;
}

int h5g_check_run(MPI_Comm comm, const h5g_options *opt) {
  int rc = H5G_OK, rank, size;
  check_verdict v;
  h5g_verify_result res;
  uint64_t against_sum = 0;
  void *keys = NULL;
  memset(&v, 0, sizeof v);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  CHECK(h5g_agree(comm, inspect_both(opt, rank, &v)));
  CHECK_MPI(MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, 0, comm));
  h5g_keyspec ks = {v.checked.cls, v.checked.width, opt->descending};
  uint64_t offset = h5g_share_begin((uint64_t)rank, v.checked.n, (uint64_t)size);
  uint64_t n = h5g_share_begin((uint64_t)rank + 1, v.checked.n, (uint64_t)size) - offset;
  CHECK(h5g_agree(comm, allocate(&keys, n * ks.width)));
  CHECK(h5g_agree(comm, read_share(comm, opt->input, opt->dataset, opt->key_field, offset, n, keys)));
  CHECK(h5g_agree(comm, h5g_verify_share(comm, keys, n, offset, &ks, &res)));
  if (opt->against && v.against.n == v.checked.n) {
    CHECK(h5g_agree(comm, read_share(comm, opt->against, opt->against_dataset, opt->key_field,
                                         offset, n, keys)));
    CHECK(h5g_agree(comm, h5g_checksum_share(comm, keys, n, ks.width, &against_sum)));
  }
  if (res.out_of_order)
    H5G_FAIL(H5G_ERR_RUNTIME, "check failed: %llu keys out of order, the first at index %llu (%s:%s)",
             (unsigned long long)res.out_of_order, (unsigned long long)res.first_bad, opt->input,
             opt->dataset);
  if (opt->against && v.against.n != v.checked.n)
    H5G_FAIL(H5G_ERR_RUNTIME, "check failed: %llu keys, but %llu in %s:%s (%s:%s)",
             (unsigned long long)v.checked.n, (unsigned long long)v.against.n, opt->against,
             opt->against_dataset, opt->input, opt->dataset);
  if (opt->against && against_sum != res.checksum)
    H5G_FAIL(H5G_ERR_RUNTIME, "check failed: checksum differs from %s:%s: keys changed (%s:%s)",
             opt->against, opt->against_dataset, opt->input, opt->dataset);
  if (rank == 0 && !opt->quiet)
    printf("h5gsort: %s:%s: %llu %s keys in %s order%s\n", opt->input, opt->dataset,
           (unsigned long long)res.n, v.checked.type_name,
           opt->descending ? "descending" : "ascending",
           opt->against ? ", same count and checksum as the input" : "");
done:
  free(keys);
  return rc;
}
