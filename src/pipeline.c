#include "src/pipeline.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/files.h"
#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/exchange.h"
#include "mpi/splitters.h"
#include "mpi/topology.h"
#include "src/backend.h"
#include "src/error.h"
#include "src/keys.h"
#include "src/merge.h"
#include "src/verify.h"

/* What rank 0 finds out before any work and every rank needs. */
typedef struct {
  h5g_dataset_info info;
  int in_place;
  char tmp_path[PATH_MAX];
} verdict;

typedef struct {
  MPI_Comm comm;
  int rank, size;
  const h5g_options *opt;
  verdict v;
  h5g_keyspec ks;
  h5g_backend *be;
  h5g_input *in;
  h5g_output *out;
  int tmp_created;
  uint64_t offset, n; /* this rank's share [offset, offset + n) of the N elements */
  size_t nruns;       /* sorted runs per rank (same on every rank) */
  uint64_t *run_offsets, *cuts, *recv_offsets;
  void *a, *b;        /* host buffers of n keys each; b only when needed */
  void *sorted;       /* a or b: where the rank's sorted share ends up */
  uint64_t checksum_in, exchanged_bytes;
  double seconds[H5G_PHASE_COUNT];
} run_state;

/* Test hook for tests/faults: H5GSORT_TEST_KILL=<point>[:<rank>] sends SIGKILL to this rank
 * (every rank when none is named) on reaching <point>: a phase name, or "write-data" (output
 * created, data not yet written). It lets tests prove that a killed run never costs data. */
static void fault_point(const run_state *st, const char *point) {
  const char *spec = getenv("H5GSORT_TEST_KILL");
  size_t len = strlen(point);
  if (!spec || strncmp(spec, point, len) != 0 || (spec[len] != '\0' && spec[len] != ':')) return;
  if (spec[len] == ':' && atoi(spec + len + 1) != st->rank) return;
  raise(SIGKILL);
}

static void announce(const run_state *st, h5g_phase phase) {
  fault_point(st, h5g_phase_name(phase));
  if (st->opt->progress && st->rank == 0) {
    fprintf(stderr, "h5gsort: %s\n", h5g_phase_name(phase));
    fflush(stderr);
  }
}

/* Runs one step, agrees on its status across ranks and charges its time to `phase`. */
#define STEP(st, phase, call)                                                                     \
  do {                                                                                            \
    announce((st), (phase));                                                                      \
    double step_start_ = MPI_Wtime();                                                             \
    CHECK(h5g_agree((st)->comm, (call)));                                                         \
    (st)->seconds[phase] += MPI_Wtime() - step_start_;                                            \
  } while (0)

static int validate(run_state *st) {
  int rc = H5G_OK;
  const h5g_options *opt = st->opt;
  if (st->rank == 0) {
    CHECK(h5g_io_inspect(opt->input, opt->dataset, &st->v.info));
    CHECK(h5g_files_check_output(opt->input, opt->output, opt->force, &st->v.in_place));
    CHECK(h5g_files_temp_name(opt->output, st->v.tmp_path, sizeof st->v.tmp_path));
    int stale = h5g_files_remove_stale(opt->output);
    if (stale && opt->verbose)
      fprintf(stderr, "h5gsort: removed %d temporary file%s left by killed runs beside %s\n", stale,
              stale == 1 ? "" : "s", opt->output);
  }
done:
  return rc;
}

static int share_verdict(run_state *st) {
  int rc = H5G_OK;
  CHECK_MPI(MPI_Bcast(&st->v, (int)sizeof st->v, MPI_BYTE, 0, st->comm));
  st->ks.cls = st->v.info.cls;
  st->ks.width = st->v.info.width;
  st->ks.descending = st->opt->descending;
  st->offset = h5g_share_begin((uint64_t)st->rank, st->v.info.n, (uint64_t)st->size);
  st->n = h5g_share_begin((uint64_t)st->rank + 1, st->v.info.n, (uint64_t)st->size) - st->offset;
done:
  return rc;
}

static int create_backend(run_state *st) {
  int rc = H5G_OK, local_rank = 0;
  h5g_backend_choice choice = st->opt->backend;
  if (choice == H5G_BACKEND_AUTO)
    choice = h5g_cuda_device_count() > 0 ? H5G_BACKEND_CUDA : H5G_BACKEND_CPU;
  if (choice == H5G_BACKEND_CPU) {
    CHECK(h5g_backend_cpu_create(&st->be, st->opt->device_memory));
  } else {
    CHECK(h5g_local_rank(st->comm, &local_rank));
    CHECK(h5g_backend_cuda_create(&st->be, local_rank, st->opt->device_memory));
  }
done:
  return rc;
}

/* Cuts the share into the same number of runs on every rank, each within the backend's
 * capacity, and allocates the host buffers. */
static int plan_runs(run_state *st) {
  int rc = H5G_OK;
  unsigned w = st->ks.width;
  uint64_t cap = st->be->capacity(st->be, w);
  uint64_t mine = st->n ? (st->n + cap - 1) / cap : 1, runs = 0;
  CHECK_MPI(MPI_Allreduce(&mine, &runs, 1, MPI_UINT64_T, MPI_MAX, st->comm));
  st->nruns = (size_t)runs;
  size_t table = (st->nruns * ((size_t)st->size + 1) + 1) * sizeof(uint64_t);
  st->run_offsets = malloc((st->nruns + 1) * sizeof(uint64_t));
  st->cuts = malloc(table);
  st->recv_offsets = malloc(table);
  CHECK_ALLOC(st->run_offsets, (st->nruns + 1) * sizeof(uint64_t));
  CHECK_ALLOC(st->cuts, table);
  CHECK_ALLOC(st->recv_offsets, table);
  for (size_t j = 0; j <= st->nruns; j++) st->run_offsets[j] = h5g_share_begin(j, st->n, st->nruns);
  CHECK(st->be->host_alloc(st->be, st->n * w, &st->a));
  if (st->size > 1 || st->nruns > 1) CHECK(st->be->host_alloc(st->be, st->n * w, &st->b));
done:
  return rc;
}

static int read_slice(run_state *st) {
  int rc = H5G_OK;
  CHECK(h5g_io_open_input(st->comm, st->opt->input, st->opt->dataset, &st->in));
  CHECK(h5g_io_read(st->in, st->offset, st->n, st->a));
done:
  return rc;
}

static int sort_runs(run_state *st) {
  int rc = H5G_OK;
  unsigned w = st->ks.width;
  for (size_t j = 0; j < st->nruns; j++) {
    uint64_t begin = st->run_offsets[j], len = st->run_offsets[j + 1] - begin;
    CHECK(st->be->sort(st->be, (char *)st->a + begin * w, len, w));
  }
done:
  return rc;
}

/* Merges runs of `keys` (offsets has nruns + 1 entries) on the backend when they fit its
 * budget, else on the host with `scratch`. */
static int merge_runs(run_state *st, void *keys, void *scratch, const uint64_t *offsets,
                      size_t nruns) {
  int rc = H5G_OK;
  unsigned w = st->ks.width;
  if (nruns < 2) goto done;
  if (st->n <= st->be->capacity(st->be, w)) CHECK(st->be->merge(st->be, keys, st->n, w, offsets, nruns));
  else h5g_merge_runs(keys, scratch, st->n, w, offsets, nruns);
done:
  return rc;
}

/* Sends every run's piece for rank d to rank d; received pieces are P * nruns sorted runs. */
static int exchange(run_state *st) {
  int rc = H5G_OK;
  size_t P = (size_t)st->size, R = st->nruns;
  unsigned w = st->ks.width;
  uint64_t *counts = calloc(2 * P * R + 2 * P, sizeof(uint64_t));
  CHECK_ALLOC(counts, (2 * P * R + 2 * P) * sizeof(uint64_t));
  uint64_t *send_runs = counts, *recv_runs = counts + P * R;
  uint64_t *send_total = counts + 2 * P * R, *recv_total = send_total + P;
  for (size_t d = 0; d < P; d++)
    for (size_t j = 0; j < R; j++) {
      send_runs[d * R + j] = st->cuts[(d + 1) * R + j] - st->cuts[d * R + j];
      send_total[d] += send_runs[d * R + j];
    }
  CHECK(h5g_exchange_counts(st->comm, send_runs, recv_runs, (int)R));
  uint64_t received = 0;
  st->recv_offsets[0] = 0;
  for (size_t i = 0; i < P * R; i++) {
    recv_total[i / R] += recv_runs[i];
    received += recv_runs[i];
    st->recv_offsets[i + 1] = st->recv_offsets[i] + recv_runs[i];
  }
  void *sendbuf = st->a, *recvbuf = st->b;
  if (R > 1) { /* pieces of one destination must be contiguous: pack them run by run */
    char *packed = st->b;
    for (size_t d = 0; d < P; d++)
      for (size_t j = 0; j < R; j++) {
        size_t bytes = send_runs[d * R + j] * w;
        memcpy(packed, (char *)st->a + st->cuts[d * R + j] * w, bytes);
        packed += bytes;
      }
    sendbuf = st->b;
    recvbuf = st->a;
  }
  /* Exact splitters promise every rank exactly its share; check before moving any data. */
  uint64_t before = 0;
  CHECK_MPI(MPI_Exscan(&received, &before, 1, MPI_UINT64_T, MPI_SUM, st->comm));
  if (st->rank == 0) before = 0;
  if (received != st->n || before != st->offset)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: rank %d would receive %llu keys at %llu, not %llu at %llu",
             st->rank, (unsigned long long)received, (unsigned long long)before,
             (unsigned long long)st->n, (unsigned long long)st->offset);
  CHECK(h5g_exchange(st->comm, sendbuf, send_total, recvbuf, recv_total, w));
  st->exchanged_bytes = (st->n - send_total[st->rank]) * w;
  st->sorted = recvbuf;
done:
  free(counts);
  return rc;
}

static int merge_received(run_state *st) {
  void *scratch = st->sorted == st->a ? st->b : st->a;
  return merge_runs(st, st->sorted, scratch, st->recv_offsets, (size_t)st->size * st->nruns);
}

/* Rank 0 checks that the output fits, then (in place) copies the input beside OUTPUT. */
static int prepare_output(run_state *st) {
  int rc = H5G_OK;
  struct stat input;
  if (st->rank != 0) goto done;
  /* the dataset, the in-place copy, and headroom for HDF5's metadata and attributes */
  unsigned long long need = st->v.info.n * st->ks.width + (1ull << 20);
  if (st->v.in_place && stat(st->opt->input, &input) == 0) need += (unsigned long long)input.st_size;
  CHECK(h5g_files_check_space(st->opt->output, need));
  if (st->v.in_place) CHECK(h5g_files_copy(st->opt->input, st->v.tmp_path));
done:
  return rc;
}

static int write_output(run_state *st) {
  int rc = H5G_OK;
  CHECK(h5g_io_create_output(st->comm, st->v.tmp_path, st->opt->output_dataset, st->in,
                             st->v.in_place, &st->out));
  fault_point(st, "write-data");
  CHECK(h5g_io_write(st->out, st->offset, st->n, st->sorted));
done:
  return rc;
}

/* Reads the written share back and checks order (within and across ranks), count and the
 * order-independent checksum against the input's. */
static int verify_output(run_state *st) {
  int rc = H5G_OK;
  h5g_verify_result res;
  void *check = st->sorted == st->a ? st->b : st->a;
  if (!check && st->n) { /* P == 1 with a single run: no second buffer yet */
    CHECK(st->be->host_alloc(st->be, st->n * st->ks.width, &st->b));
    check = st->b;
  }
  CHECK(h5g_io_read_output(st->out, st->offset, st->n, check));
  CHECK(h5g_verify_share(st->comm, check, st->n, st->offset, &st->ks, &res));
  if (res.n != st->v.info.n)
    H5G_FAIL(H5G_ERR_RUNTIME, "verify failed: %llu keys written, %llu expected (%s:%s)",
             (unsigned long long)res.n, (unsigned long long)st->v.info.n, st->opt->output,
             st->opt->output_dataset);
  if (res.out_of_order)
    H5G_FAIL(H5G_ERR_RUNTIME, "verify failed: %llu keys out of order, the first at index %llu (%s:%s)",
             (unsigned long long)res.out_of_order, (unsigned long long)res.first_bad,
             st->opt->output, st->opt->output_dataset);
  if (res.checksum != st->checksum_in)
    H5G_FAIL(H5G_ERR_RUNTIME, "verify failed: checksum of the output differs from the input (%s:%s)",
             st->opt->output, st->opt->output_dataset);
done:
  return rc;
}

static int close_output(run_state *st) {
  int rc = h5g_io_close_output(st->out);
  st->out = NULL;
  return rc;
}

static int commit_output(run_state *st) {
  int rc = H5G_OK;
  if (st->rank == 0) CHECK(h5g_files_commit(st->v.tmp_path, st->opt->output));
  st->tmp_created = 0;
done:
  return rc;
}

static int checksum_input(run_state *st) {
  return h5g_checksum_share(st->comm, st->a, st->n, st->ks.width, &st->checksum_in);
}

static int fill_report(run_state *st, h5g_report *rep, double total) {
  int rc = H5G_OK;
  char *names = NULL;
  memset(rep, 0, sizeof *rep);
  CHECK_MPI(MPI_Reduce(st->seconds, rep->seconds, H5G_PHASE_COUNT, MPI_DOUBLE, MPI_MAX, 0, st->comm));
  CHECK_MPI(MPI_Reduce(&total, &rep->total_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, st->comm));
  CHECK_MPI(MPI_Reduce(&st->exchanged_bytes, &rep->exchanged_bytes, 1, MPI_UINT64_T, MPI_SUM, 0,
                       st->comm));
  enum { NAME = sizeof st->be->device_name };
  names = malloc((size_t)st->size * NAME);
  CHECK_ALLOC(names, (size_t)st->size * NAME);
  CHECK_MPI(MPI_Gather(st->be->device_name, NAME, MPI_CHAR, names, NAME, MPI_CHAR, 0, st->comm));
  if (st->rank == 0)
    for (int r = 0; r < st->size; r++) {
      const char *name = names + (size_t)r * NAME;
      if (strstr(rep->devices, name)) continue;
      size_t used = strlen(rep->devices);
      snprintf(rep->devices + used, sizeof rep->devices - used, "%s%s", used ? ", " : "", name);
    }
  rep->n = st->v.info.n;
  rep->width = st->ks.width;
  rep->bytes = rep->n * rep->width;
  rep->runs_per_rank = st->nruns;
  rep->ranks = st->size;
  rep->verified = st->opt->verify;
  snprintf(rep->type_name, sizeof rep->type_name, "%s", st->v.info.type_name);
  snprintf(rep->backend, sizeof rep->backend, "%s", st->be->name);
done:
  free(names);
  return rc;
}

static int write_report(run_state *st, const h5g_report *rep) {
  if (st->rank != 0 || !st->opt->report) return H5G_OK;
  return h5g_report_write_json(rep, st->opt->report);
}

int h5g_pipeline_run(MPI_Comm comm, const h5g_options *opt, h5g_report *rep) {
  int rc = H5G_OK;
  run_state state, *st = &state;
  memset(st, 0, sizeof *st);
  st->comm = comm;
  st->opt = opt;
  MPI_Comm_rank(comm, &st->rank);
  MPI_Comm_size(comm, &st->size);
  double start = MPI_Wtime();

  STEP(st, H5G_PHASE_VALIDATE, validate(st));
  STEP(st, H5G_PHASE_VALIDATE, share_verdict(st));
  STEP(st, H5G_PHASE_VALIDATE, create_backend(st));
  STEP(st, H5G_PHASE_VALIDATE, plan_runs(st));
  STEP(st, H5G_PHASE_READ, read_slice(st));
  if (opt->verify) STEP(st, H5G_PHASE_VERIFY, checksum_input(st));
  STEP(st, H5G_PHASE_TRANSFORM, st->be->transform(st->be, st->a, st->n, &st->ks, 0));
  STEP(st, H5G_PHASE_SORT, sort_runs(st));
  st->sorted = st->a;
  if (st->size > 1) {
    STEP(st, H5G_PHASE_SPLITTERS, h5g_exact_cuts(comm, st->a, st->ks.width, st->run_offsets,
                                                 st->nruns, st->v.info.n, st->cuts));
    STEP(st, H5G_PHASE_EXCHANGE, exchange(st));
    STEP(st, H5G_PHASE_MERGE, merge_received(st));
  } else {
    STEP(st, H5G_PHASE_MERGE, merge_runs(st, st->a, st->b, st->run_offsets, st->nruns));
  }
  STEP(st, H5G_PHASE_TRANSFORM, st->be->transform(st->be, st->sorted, st->n, &st->ks, 1));
  st->tmp_created = 1;
  STEP(st, H5G_PHASE_WRITE, prepare_output(st));
  STEP(st, H5G_PHASE_WRITE, write_output(st));
  if (opt->verify) STEP(st, H5G_PHASE_VERIFY, verify_output(st));
  STEP(st, H5G_PHASE_WRITE, close_output(st));
  STEP(st, H5G_PHASE_WRITE, commit_output(st));
  CHECK(h5g_agree(comm, fill_report(st, rep, MPI_Wtime() - start)));
  CHECK(h5g_agree(comm, write_report(st, rep)));
done:
  if (st->out) h5g_io_close_output(st->out); /* every rank is here together: rc was agreed */
  if (st->tmp_created && st->rank == 0) unlink(st->v.tmp_path);
  h5g_io_close_input(st->in);
  if (st->be) {
    st->be->host_free(st->be, st->a);
    st->be->host_free(st->be, st->b);
    st->be->destroy(st->be);
  }
  free(st->run_offsets);
  free(st->cuts);
  free(st->recv_offsets);
  return rc;
}
