#include "src/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/topology.h"
#include "base/error.h"
#include "src/keyset.h"
#include "src/verify.h"

typedef struct {
  h5g_dataset_info checked, against;
  h5g_key_layout layout; /* several keys (or a column): checked as their composed key */
} check_verdict;

/* Serial: the keys of file:dataset, one or composed. */
static int inspect_keys(const h5g_options *opt, const char *file, const char *dataset,
                        h5g_key_layout *layout, h5g_dataset_info *info) {
  if (h5g_options_composed(opt)) return h5g_keyset_inspect(opt, file, layout, info);
  return h5g_io_inspect(file, dataset, opt->key_field, -1, info);
}

static int inspect_both(const h5g_options *opt, int rank, check_verdict *v) {
  int rc = H5G_OK;
  h5g_key_layout against_layout;
  if (rank != 0) goto done;
  if (h5g_options_composed(opt) && strcmp(opt->against_dataset, opt->dataset) != 0)
    H5G_FAIL(H5G_ERR_USAGE, "--against-dataset goes with one key: with several, the keys are at "
             "the same paths in both files");
  CHECK(inspect_keys(opt, opt->input, opt->dataset, &v->layout, &v->checked));
  if (opt->against) {
    CHECK(inspect_keys(opt, opt->against, opt->against_dataset, &against_layout, &v->against));
    for (int i = 0; h5g_options_composed(opt) && i < v->layout.count; i++)
      if (against_layout.key[i].cls != v->layout.key[i].cls ||
          against_layout.key[i].width != v->layout.key[i].width)
        H5G_FAIL(H5G_ERR_USAGE, "types of key %d differ: %s in %s, %s in %s", i + 1,
                 v->layout.key[i].type_name, opt->input, against_layout.key[i].type_name,
                 opt->against);
    if (v->against.cls != v->checked.cls || v->against.width != v->checked.width)
      H5G_FAIL(H5G_ERR_USAGE, "types differ: %s in %s:%s, %s in %s:%s", v->checked.type_name,
               opt->input, opt->dataset, v->against.type_name, opt->against, opt->against_dataset);
  }
done:
  return rc;
}

/* Reads this rank's share of file:dataset into keys[0] (n elements from offset), composed when
 * there are several keys: each composed word into keys[word]. */
static int read_share(MPI_Comm comm, const h5g_options *opt, const check_verdict *v,
                      const char *file, const char *dataset, uint64_t offset, uint64_t n,
                      void *const *keys) {
  int rc = H5G_OK;
  h5g_file *f = NULL;
  h5g_dset *d[H5G_MAX_KEYS] = {0};
  CHECK(h5g_io_open_file(comm, file, 0, &f));
  if (h5g_options_composed(opt)) {
    CHECK(h5g_keyset_open(comm, opt, f, 0, d));
    for (int word = 0; word < v->layout.words; word++)
      CHECK(h5g_keyset_read(comm, opt, &v->layout, d, word, offset, n, v->checked.width,
                            keys[word], opt->io_threads ? opt->io_threads : 1, NULL, 0));
  } else {
    CHECK(h5g_io_open_keys(f, dataset, opt->key_field, &d[0]));
    CHECK(h5g_io_read(d[0], offset, n, keys[0]));
  }
done:
  h5g_keyset_close(d);
  h5g_io_close_file(f);
  return rc;
}

static int allocate(void **keys, int words, size_t bytes) {
  int rc = H5G_OK;
  for (int k = 0; k < words; k++) {
    keys[k] = bytes ? malloc(bytes) : NULL;
    CHECK_ALLOC(keys[k], bytes);
  }
done:
  return rc;
}

int h5g_check_run(MPI_Comm comm, const h5g_options *opt) {
  int rc = H5G_OK, rank, size;
  check_verdict v;
  h5g_verify_result res;
  uint64_t against_sum = 0;
  void *keys[H5G_MAX_KEYS] = {0};
  memset(&v, 0, sizeof v);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  CHECK(h5g_agree(comm, inspect_both(opt, rank, &v)));
  CHECK_MPI(MPI_Bcast(&v, (int)sizeof v, MPI_BYTE, 0, comm));
  int composed = h5g_options_composed(opt); /* directions are in the composed key */
  h5g_keyspec ks = {v.checked.cls, v.checked.width, composed ? 0 : opt->descending,
                    composed ? H5G_NA_DEFAULT : opt->na_position};
  uint64_t offset = h5g_share_begin((uint64_t)rank, v.checked.n, (uint64_t)size);
  uint64_t n = h5g_share_begin((uint64_t)rank + 1, v.checked.n, (uint64_t)size) - offset;
  int words = composed ? v.layout.words : 1;
  CHECK(h5g_agree(comm, allocate(keys, words, n * ks.width)));
  CHECK(h5g_agree(comm, read_share(comm, opt, &v, opt->input, opt->dataset, offset, n, keys)));
  CHECK(h5g_agree(comm, h5g_verify_share(comm, keys, words, n, offset, &ks, 0, &res)));
  if (opt->against && v.against.n == v.checked.n) {
    CHECK(h5g_agree(comm, read_share(comm, opt, &v, opt->against, opt->against_dataset, offset, n,
                                     keys)));
    for (int k = 0; k < words; k++) {
      uint64_t sum = 0;
      CHECK(h5g_agree(comm, h5g_checksum_share(comm, keys[k], n, ks.width, &sum)));
      against_sum += sum;
    }
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
           composed ? "the keys'" : opt->descending ? "descending" : "ascending",
           opt->against ? ", same count and checksum as the input" : "");
done:
  for (int k = 0; k < H5G_MAX_KEYS; k++) free(keys[k]);
  return rc;
}
