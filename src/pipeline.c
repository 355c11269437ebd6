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
#include "mpi/gather_rows.h"
#include "mpi/splitters.h"
#include "mpi/topology.h"
#include "base/backend.h"
#include "base/error.h"
#include "base/host_memory.h"
#include "base/keys.h"
#include "src/transport.h"
#include "src/verify.h"

/* What rank 0 finds out before any work and every rank needs. */
typedef struct {
  h5g_dataset_info info;
  int in_place;
  unsigned long long carried_bytes; /* size of the input file when datasets are carried */
  char tmp_path[PATH_MAX];
} verdict;

typedef struct {
  MPI_Comm comm;
  int rank, size;
  const h5g_options *opt;
  verdict v;
  h5g_keyspec ks;
  int records;        /* values (source indices) move with the keys */
  h5g_backend *be;
  h5g_transport *transport;
  int use_cuda, device;   /* this rank's backend and GPU */
  int device_sharers;     /* ranks of this node on the same GPU */
  int ranks_on_node;
  int gpu_per_rank;       /* every rank runs the CUDA backend on a GPU of its own */
  /* The device-resident path (base/backend.h: load ... wait_copied), keys only: pieces of the
   * file go to the GPU as they are read (device_sort); with one run per rank and NCCL the keys
   * stay there through the exchange and merge (resident); the output then comes back while
   * the previous piece is written (copy_back_pending). */
  int device_sort, resident, copy_back_pending;
  h5g_file *in_file, *out_file;
  h5g_dset *keys_in;
  int tmp_created;
  uint64_t offset, n; /* this rank's share [offset, offset + n) of the N elements */
  size_t nruns;       /* sorted runs per rank (same on every rank) */
  uint64_t *run_offsets, *cuts, *recv_offsets;
  void *a, *b;        /* host buffers of n keys each; b only when needed */
  uint64_t *va, *vb;  /* their values, when records move */
  h5g_buffer_spec buffer_specs[4]; /* a, b, va, vb: made ready in the background */
  h5g_buffer_set *buffers;
  void *sorted;       /* a or b: where the rank's sorted share ends up */
  uint64_t *sorted_values;
  h5g_dset *carry_src, *carry_dst; /* the carried dataset being moved */
  void *carry_rows, *carry_out;
  unsigned long long output_bytes; /* what the temporary file will hold, at most (rank 0) */
  uint64_t checksum_in, exchanged_bytes;
  size_t reading_run; /* the run whose pieces read_piece hands to the backend */
  uint64_t loaded;    /* keys of that run handed to the backend so far */
  double seconds[H5G_PHASE_COUNT];
} run_state;

/* True when the test-hook variable `name` names `point` ("<point>" or "<point>:<arg>"); *arg is
 * then the text after the colon ("" without one). */
static int hook_names(const char *name, const char *point, const char **arg) {
  const char *spec = getenv(name);
  size_t len = strlen(point);
  if (!spec || strncmp(spec, point, len) != 0 || (spec[len] != '\0' && spec[len] != ':')) return 0;
  *arg = spec[len] ? spec + len + 1 : "";
  return 1;
}

/* Test hooks for tests/faults, so tests can prove that a failing run never costs data:
 * H5GSORT_TEST_KILL=<point>[:<rank>] sends SIGKILL to that rank (every rank when none is named)
 * on reaching <point>, a phase name or "write-data" (output created, data not yet written);
 * H5GSORT_TEST_SLEEP=<point>:<seconds> stops every rank there a while, so a test can change the
 * file system under a running job. */
static void fault_point(const run_state *st, const char *point) {
  const char *arg;
  if (hook_names("H5GSORT_TEST_SLEEP", point, &arg)) sleep((unsigned)atoi(arg));
  if (hook_names("H5GSORT_TEST_KILL", point, &arg) && (!arg[0] || atoi(arg) == st->rank))
    raise(SIGKILL);
}

static void announce(const run_state *st, h5g_phase phase) {
  if (st->opt->progress && st->rank == 0) {
    fprintf(stderr, "h5gsort: %s\n", h5g_phase_name(phase));
    fflush(stderr);
  }
  fault_point(st, h5g_phase_name(phase));
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
    struct stat input;
    CHECK(h5g_io_inspect(opt->input, opt->dataset, opt->key_field, &st->v.info));
    for (int i = 0; i < opt->ncarry; i++)
      CHECK(h5g_io_inspect_rows(opt->input, opt->carry[i], st->v.info.n));
    CHECK(h5g_files_check_output(opt->input, opt->output, opt->force, &st->v.in_place));
    if (opt->report) CHECK(h5g_files_check_report(opt->report));
    if ((opt->ncarry || opt->key_field) && stat(opt->input, &input) == 0)
      st->v.carried_bytes = (unsigned long long)input.st_size;
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
  st->records = h5g_options_moves_records(st->opt);
  st->offset = h5g_share_begin((uint64_t)st->rank, st->v.info.n, (uint64_t)st->size);
  st->n = h5g_share_begin((uint64_t)st->rank + 1, st->v.info.n, (uint64_t)st->size) - st->offset;
done:
  return rc;
}

/* Device memory NCCL stages the exchange through: taken from --device-memory when given. */
static uint64_t nccl_staging_bytes(const run_state *st) {
  uint64_t staging = (uint64_t)512 << 20, budget = st->opt->device_memory;
  return budget && budget / 4 < staging ? budget / 4 : staging;
}

/* Collective: each rank's backend and GPU. */
static int choose_devices(run_state *st) {
  int rc = H5G_OK, local_rank = 0, local_size = 1;
  int devices = h5g_cuda_device_count();
  /* auto: the GPU when there is one (keys and records alike) */
  st->use_cuda = st->opt->backend == H5G_BACKEND_CUDA ||
                 (st->opt->backend == H5G_BACKEND_AUTO && devices > 0);
  CHECK(h5g_local_rank(st->comm, &local_rank, &local_size));
  st->ranks_on_node = local_size;
  st->device = devices > 0 ? local_rank % devices : 0;
  st->device_sharers = devices > 0 ? (local_size - st->device + devices - 1) / devices : 1;
  int own_gpu = st->use_cuda && devices > 0 && st->device_sharers == 1;
  CHECK_MPI(MPI_Allreduce(&own_gpu, &st->gpu_per_rank, 1, MPI_INT, MPI_MIN, st->comm));
done:
  return rc;
}

/* Collective: the exchange transport, before the CUDA backend sizes itself from the free device
 * memory (NCCL takes its own first). Keys without records may stay on the GPUs, which `auto`
 * does only across nodes: on one node (2 H200s, 2^30 uint32 keys) the host exchange through MPI
 * took 2.88 s end to end and NCCL between the GPUs 3.62 s, its connection set-up (1.0-1.6 s)
 * not hidden behind the read (bench/RESULTS.md). */
static int connect_transport(run_state *st) {
  int keys_stay = !st->records && st->ranks_on_node < st->size;
  return h5g_transport_open(st->comm, st->opt->exchange, st->gpu_per_rank, keys_stay, st->device,
                            nccl_staging_bytes(st), &st->transport);
}

/* The CUDA backend's budget: its share of 90% of the GPU's free memory (ranks sharing a GPU
 * split it), or --device-memory when that is smaller: a cap above what the GPU has does not
 * bind. The NCCL staging buffers come out of --device-memory. */
static uint64_t cuda_budget(const run_state *st) {
  uint64_t budget = st->opt->device_memory;
  if (budget && strcmp(h5g_transport_name(st->transport), "nccl") == 0)
    budget -= nccl_staging_bytes(st);
  uint64_t share = h5g_cuda_free_memory(st->device) / 10 * 9 / (uint64_t)st->device_sharers;
  if (share && (!budget || budget > share)) {
    if (budget && st->opt->verbose)
      fprintf(stderr, "h5gsort: rank %d: --device-memory above this rank's share of the free GPU "
              "memory; using %llu bytes\n", st->rank, (unsigned long long)share);
    budget = share;
  }
  return budget;
}

static int create_backend(run_state *st) {
  int rc = H5G_OK;
  if (!st->use_cuda) CHECK(h5g_backend_cpu_create(&st->be, st->opt->device_memory));
  else CHECK(h5g_backend_cuda_create(&st->be, st->device, cuda_budget(st)));
  if (st->records && (!st->be->sort_pairs || !st->be->merge_pairs))
    H5G_FAIL(H5G_ERR_USAGE, "the %s backend cannot move records (--carry, --index-out, "
             "--key-field) yet; use --backend cpu", st->be->name);
done:
  return rc;
}

static int pin_piece(void *be, void *p, size_t bytes) {
  return ((h5g_backend *)be)->pin(be, p, bytes);
}

static void unpin_piece(void *be, void *p) { ((h5g_backend *)be)->unpin(be, p); }

enum { BUFFER_A, BUFFER_B, BUFFER_VA, BUFFER_VB, BUFFER_COUNT };

/* The host buffers, made resident (piece by piece) and pinned by a helper thread while the
 * pipeline reads into the pieces already resident. The resident path needs no spare: the output
 * comes back into the slice buffer. */
static int start_buffers(run_state *st) {
  int rc = H5G_OK;
  int spare = (st->size > 1 || st->nruns > 1) && !st->resident;
  h5g_buffer_spec *specs = st->buffer_specs;
  specs[BUFFER_A] = (h5g_buffer_spec){st->n, st->ks.width, NULL};
  specs[BUFFER_B] = (h5g_buffer_spec){spare || st->opt->verify ? st->n : 0, st->ks.width, NULL};
  specs[BUFFER_VA] = (h5g_buffer_spec){st->records ? st->n : 0, sizeof(uint64_t), NULL};
  specs[BUFFER_VB] = (h5g_buffer_spec){st->records && spare ? st->n : 0, sizeof(uint64_t), NULL};
  CHECK(h5g_buffers_start(specs, BUFFER_COUNT, h5g_io_piece_bytes(), st->ranks_on_node,
                          st->be->pin ? pin_piece : NULL, unpin_piece, st->be, &st->buffers));
  st->a = specs[BUFFER_A].p;
  st->b = specs[BUFFER_B].p;
  st->va = specs[BUFFER_VA].p;
  st->vb = specs[BUFFER_VB].p;
done:
  return rc;
}

/* Cuts the share into the same number of runs on every rank, each within the backend's
 * capacity, and starts making the host buffers ready. */
static int plan_runs(run_state *st) {
  int rc = H5G_OK;
  unsigned w = st->ks.width;
  uint64_t cap = st->be->capacity(st->be, st->records ? w + 8 : w);
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
  st->device_sort = st->be->load && !st->records;
  st->resident = st->device_sort && st->nruns == 1 &&
                 (st->size == 1 || h5g_transport_moves_device_buffers(st->transport));
  CHECK(start_buffers(st));
done:
  return rc;
}

static int open_input(run_state *st) {
  int rc = H5G_OK;
  CHECK(h5g_io_open_file(st->comm, st->opt->input, 0, &st->in_file));
  CHECK(h5g_io_open_keys(st->in_file, st->opt->dataset, st->opt->key_field, &st->keys_in));
done:
  return rc;
}

/* Hands keys [loaded, upto) of run `reading_run` to the backend, which copies them to the GPU
 * while the host reads on. */
static int load_read_keys(run_state *st, uint64_t upto) {
  int rc = H5G_OK;
  uint64_t begin = st->run_offsets[st->reading_run], len = st->run_offsets[st->reading_run + 1] - begin;
  if (upto > st->loaded)
    CHECK(st->be->load(st->be, (char *)st->a + (begin + st->loaded) * st->ks.width, st->loaded,
                       upto - st->loaded, len, st->ks.width));
  st->loaded = upto;
done:
  return rc;
}

/* Called around each piece of run `reading_run` the file delivers: before it, its buffer must be
 * resident; after it, its checksum for --verify and, once the buffer is pinned (a copy from it
 * can then run in the background), its copy to the GPU. */
static int read_piece(void *ctx, uint64_t first, uint64_t count, int moved) {
  run_state *st = ctx;
  uint64_t run_begin = st->run_offsets[st->reading_run];
  unsigned w = st->ks.width;
  if (!moved) return h5g_buffers_wait(st->buffers, BUFFER_A, run_begin + first + count);
  if (st->opt->verify)
    st->checksum_in += h5g_keys_checksum((const char *)st->a + (run_begin + first) * w, count, w);
  if (!st->device_sort || !h5g_buffers_pinned(st->buffers, BUFFER_A)) return H5G_OK;
  return load_read_keys(st, first + count);
}

/* Reads run j of the slice; the device-resident path then starts its sort on the GPU. */
static int read_run(run_state *st, size_t j) {
  int rc = H5G_OK;
  uint64_t begin = st->run_offsets[j], len = st->run_offsets[j + 1] - begin;
  st->reading_run = j;
  st->loaded = 0;
  CHECK(h5g_io_read_each(st->keys_in, st->offset + begin, len, (char *)st->a + begin * st->ks.width,
                         read_piece, st));
  if (st->device_sort) { /* what waited for the buffer to be pinned */
    CHECK(h5g_buffers_wait_pinned(st->buffers, BUFFER_A));
    CHECK(load_read_keys(st, len));
  }
  if (st->va) CHECK(h5g_buffers_wait(st->buffers, BUFFER_VA, begin + len));
  for (uint64_t i = begin; st->va && i < begin + len; i++) st->va[i] = st->offset + i; /* source index */
done:
  return rc;
}

/* Sorts run j on the GPU while the next one is read. With one rank and one run the keys come
 * back as the output; otherwise as ordered bits for the splitters or the merge. */
static int sort_loaded_run(run_state *st, size_t j) {
  uint64_t begin = st->run_offsets[j];
  int final = st->size == 1 && st->nruns == 1;
  st->copy_back_pending = final;
  return st->be->sort_loaded(st->be, (char *)st->a + begin * st->ks.width,
                             st->run_offsets[j + 1] - begin, &st->ks, final);
}

/* The host needs the sorted runs: waits for the last one, the others came back before it. */
static int wait_sorted_runs(run_state *st) {
  return st->be->wait_copied(st->be, st->run_offsets[st->nruns] - st->run_offsets[st->nruns - 1]);
}

/* Collective: the input checksum for --verify, from the pieces as they were read. */
static int sum_checksums(run_state *st) {
  int rc = H5G_OK;
  uint64_t mine = st->checksum_in;
  CHECK_MPI(MPI_Allreduce(&mine, &st->checksum_in, 1, MPI_UINT64_T, MPI_SUM, st->comm));
done:
  return rc;
}

static int sort_runs(run_state *st) {
  int rc = H5G_OK;
  unsigned w = st->ks.width;
  for (size_t j = 0; j < st->nruns; j++) {
    uint64_t begin = st->run_offsets[j], len = st->run_offsets[j + 1] - begin;
    if (st->records)
      CHECK(st->be->sort_pairs(st->be, (char *)st->a + begin * w, st->va + begin, len, w));
    else
      CHECK(st->be->sort(st->be, (char *)st->a + begin * w, len, w));
  }
done:
  return rc;
}

/* One backend merge of n keys (and values, when records move) in place. */
static int merge_call(run_state *st, void *keys, uint64_t *values, size_t n,
                      const uint64_t *offsets, size_t nruns) {
  if (st->records) return st->be->merge_pairs(st->be, keys, values, n, st->ks.width, offsets, nruns);
  return st->be->merge(st->be, keys, n, st->ks.width, offsets, nruns);
}

/* Merges the sorted runs of st->sorted (and st->sorted_values; offsets has nruns + 1 entries).
 * Within the backend's budget this is one call. Beyond it the output is cut into chunks of one
 * call each: exact cuts of the local runs (mpi/splitters.h on MPI_COMM_SELF, stable at equal keys)
 * say which piece of every run a chunk takes; the pieces are packed at the chunk's own place in
 * the spare buffer and merged there, which then holds the result. */
static int merge_runs(run_state *st, const uint64_t *offsets, size_t nruns) {
  int rc = H5G_OK;
  unsigned w = st->ks.width;
  uint64_t *cuts = NULL, *pieces = NULL;
  if (nruns < 2) goto done;
  uint64_t cap = st->be->capacity(st->be, st->records ? w + 8 : w);
  if (st->n <= cap) {
    CHECK(merge_call(st, st->sorted, st->sorted_values, st->n, offsets, nruns));
    goto done;
  }
  char *keys = st->sorted, *spare = st->sorted == st->a ? st->b : st->a;
  uint64_t *values = st->sorted_values, *spare_values = values == st->va ? st->vb : st->va;
  cuts = malloc(3 * nruns * sizeof(uint64_t)); /* row 1: where the chunk ends in every run */
  pieces = malloc((2 * nruns + 1) * sizeof(uint64_t));
  CHECK_ALLOC(cuts, 3 * nruns * sizeof(uint64_t));
  CHECK_ALLOC(pieces, (2 * nruns + 1) * sizeof(uint64_t));
  uint64_t *from = pieces, *piece_offsets = pieces + nruns; /* in the runs; in the chunk */
  memcpy(from, offsets, nruns * sizeof(uint64_t));
  for (uint64_t begin = 0; begin < st->n; begin += cap) {
    uint64_t end = st->n - begin < cap ? st->n : begin + cap, at = begin;
    CHECK(h5g_cuts_at(MPI_COMM_SELF, keys, w, offsets, nruns, &end, 1, cuts));
    for (size_t j = 0; j < nruns; j++) {
      uint64_t count = cuts[nruns + j] - from[j];
      memcpy(spare + at * w, keys + from[j] * w, count * w);
      if (values) memcpy(spare_values + at, values + from[j], count * sizeof(uint64_t));
      piece_offsets[j] = at - begin;
      at += count;
      from[j] = cuts[nruns + j];
    }
    if (at != end)
      H5G_FAIL(H5G_ERR_RUNTIME, "internal error: merge chunk [%llu, %llu) got %llu keys",
               (unsigned long long)begin, (unsigned long long)end, (unsigned long long)(at - begin));
    piece_offsets[nruns] = end - begin;
    CHECK(merge_call(st, spare + begin * w, values ? spare_values + begin : NULL, end - begin,
                     piece_offsets, nruns));
  }
  st->sorted = spare;
  st->sorted_values = values ? spare_values : NULL;
done:
  free(cuts);
  free(pieces);
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
  uint64_t *send_values = st->va, *recv_values = st->vb;
  if (R > 1) { /* pieces of one destination must be contiguous: pack them run by run */
    char *packed = st->b;
    uint64_t *packed_values = st->vb;
    for (size_t d = 0; d < P; d++)
      for (size_t j = 0; j < R; j++) {
        size_t count = send_runs[d * R + j], from = st->cuts[d * R + j];
        memcpy(packed, (char *)st->a + from * w, count * w);
        packed += count * w;
        if (packed_values) {
          memcpy(packed_values, st->va + from, count * sizeof(uint64_t));
          packed_values += count;
        }
      }
    sendbuf = st->b;
    recvbuf = st->a;
    send_values = st->vb;
    recv_values = st->va;
  }
  /* Exact splitters promise every rank exactly its share; check before moving any data. */
  uint64_t before = 0;
  CHECK_MPI(MPI_Exscan(&received, &before, 1, MPI_UINT64_T, MPI_SUM, st->comm));
  if (st->rank == 0) before = 0;
  if (received != st->n || before != st->offset)
    H5G_FAIL(H5G_ERR_RUNTIME, "internal error: rank %d would receive %llu keys at %llu, not %llu at %llu",
             st->rank, (unsigned long long)received, (unsigned long long)before,
             (unsigned long long)st->n, (unsigned long long)st->offset);
  if (st->resident) { /* device to device; the host keeps its copy of the sorted run */
    void *run = NULL, *spare = NULL;
    CHECK(st->be->run_buffers(st->be, &run, &spare));
    CHECK(h5g_transport_exchange_device(st->transport, run, send_total, spare, recv_total, w));
  } else {
    CHECK(h5g_transport_exchange(st->transport, sendbuf, send_total, recvbuf, recv_total, w));
  }
  if (st->records)
    CHECK(h5g_transport_exchange(st->transport, send_values, send_total, recv_values, recv_total,
                                 sizeof(uint64_t)));
  st->exchanged_bytes = (st->n - send_total[st->rank]) * (w + (st->records ? sizeof(uint64_t) : 0));
  /* resident: the merged output comes back into the slice buffer, whose keys the cuts were taken from */
  st->sorted = st->resident ? st->a : recvbuf;
  st->sorted_values = recv_values;
done:
  free(counts);
  return rc;
}

static int merge_received(run_state *st) {
  size_t nruns = (size_t)st->size * st->nruns;
  if (st->resident) { /* on the GPU, then the output comes back while it is written */
    st->copy_back_pending = 1;
    return st->be->merge_received(st->be, st->sorted, st->n, &st->ks, st->recv_offsets, nruns);
  }
  return merge_runs(st, st->recv_offsets, nruns);
}

/* Before each piece is written: the GPU has copied it back. */
static int piece_copied_back(void *ctx, uint64_t first, uint64_t count, int moved) {
  run_state *st = ctx;
  return moved ? H5G_OK : st->be->wait_copied(st->be, first + count);
}

/* Rank 0 checks that the output fits, then (in place) copies the input beside OUTPUT. */
static int prepare_output(run_state *st) {
  int rc = H5G_OK;
  struct stat input;
  if (st->rank != 0) goto done;
  /* the dataset, the in-place copy, and headroom for HDF5's metadata and attributes */
  unsigned long long need = st->v.info.n * st->ks.width + st->v.carried_bytes + (1ull << 20);
  if (st->opt->index_out) need += st->v.info.n * sizeof(uint64_t);
  if (st->v.in_place && stat(st->opt->input, &input) == 0) need += (unsigned long long)input.st_size;
  CHECK(h5g_files_check_space(st->opt->output, need));
  if (st->v.in_place) CHECK(h5g_files_copy(st->opt->input, st->v.tmp_path));
  st->output_bytes = need;
done:
  return rc;
}

static int open_output(run_state *st) {
  if (st->v.in_place) return h5g_io_open_file(st->comm, st->v.tmp_path, 1, &st->out_file);
  return h5g_io_create_file(st->comm, st->v.tmp_path, &st->out_file);
}

/* Rank 0 reserves the output's disk space before any data is written. */
static int reserve_output(run_state *st) {
  return st->rank == 0 ? h5g_files_reserve(st->v.tmp_path, st->output_bytes) : H5G_OK;
}

/* Keys (unless whole records of a compound move), then the source index when asked for. */
static int write_keys(run_state *st) {
  int rc = H5G_OK;
  h5g_dset *keys = NULL, *index = NULL;
  if (!st->opt->key_field) {
    CHECK(h5g_io_create_like(st->out_file, st->opt->output_dataset, st->keys_in, &keys));
    fault_point(st, "write-data");
    CHECK(h5g_io_write_each(keys, st->offset, st->n, st->sorted,
                            st->copy_back_pending ? piece_copied_back : NULL, st));
    st->copy_back_pending = 0;
  }
  if (st->opt->index_out) {
    CHECK(h5g_io_create_index(st->out_file, st->opt->index_out, st->v.info.n, &index));
    CHECK(h5g_io_write(index, st->offset, st->n, st->sorted_values));
  }
done:
  if (h5g_io_close(index) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  if (h5g_io_close(keys) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  return rc;
}

/* Moving one carried dataset: open both ends, read this rank's rows, fetch the rows of the
 * sorted order from their owners, write them. */
static int carry_open(run_state *st, const char *src, const char *dst) {
  int rc = H5G_OK;
  CHECK(h5g_io_open_rows(st->in_file, src, &st->carry_src));
  CHECK(h5g_io_create_like(st->out_file, dst, st->carry_src, &st->carry_dst));
done:
  return rc;
}

static int carry_allocate(run_state *st) {
  int rc = H5G_OK;
  size_t bytes = st->n * h5g_io_row_bytes(st->carry_src);
  st->carry_rows = malloc(bytes ? bytes : 1);
  st->carry_out = malloc(bytes ? bytes : 1);
  CHECK_ALLOC(st->carry_rows, bytes);
  CHECK_ALLOC(st->carry_out, bytes);
done:
  return rc;
}

static int carry_close(run_state *st) {
  int rc = h5g_io_close(st->carry_dst);
  if (h5g_io_close(st->carry_src) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  st->carry_src = st->carry_dst = NULL;
  free(st->carry_rows);
  free(st->carry_out);
  st->carry_rows = st->carry_out = NULL;
  return rc;
}

static int carry_dataset(run_state *st, const char *src, const char *dst) {
  int rc = H5G_OK;
  STEP(st, H5G_PHASE_CARRY, carry_open(st, src, dst));
  STEP(st, H5G_PHASE_CARRY, carry_allocate(st));
  STEP(st, H5G_PHASE_CARRY, h5g_io_read(st->carry_src, st->offset, st->n, st->carry_rows));
  STEP(st, H5G_PHASE_CARRY, h5g_gather_rows(st->comm, st->sorted_values, st->n, st->carry_rows,
                                            st->v.info.n, h5g_io_row_bytes(st->carry_src),
                                            st->carry_out));
  STEP(st, H5G_PHASE_CARRY, h5g_io_write(st->carry_dst, st->offset, st->n, st->carry_out));
  STEP(st, H5G_PHASE_CARRY, carry_close(st));
done:
  return rc;
}

/* Every carried dataset, and with --key-field the compound table itself. */
static int carry_all(run_state *st) {
  int rc = H5G_OK;
  char target[PATH_MAX];
  if (st->opt->key_field) CHECK(carry_dataset(st, st->opt->dataset, st->opt->output_dataset));
  for (int i = 0; i < st->opt->ncarry; i++) {
    h5g_options_carry_target(st->opt, st->opt->carry[i], target, sizeof target);
    CHECK(carry_dataset(st, st->opt->carry[i], target));
  }
done:
  return rc;
}

/* Reads the written share back and checks order (within and across ranks), count and the
 * order-independent checksum against the input's. */
static int verify_output(run_state *st) {
  int rc = H5G_OK;
  h5g_verify_result res;
  h5g_dset *written = NULL;
  void *check = st->sorted == st->a ? st->b : st->a; /* allocated by plan_runs for --verify */
  CHECK(h5g_io_open_keys(st->out_file, st->opt->output_dataset, st->opt->key_field, &written));
  CHECK(h5g_io_read(written, st->offset, st->n, check));
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
  if (h5g_io_close(written) != H5G_OK && rc == H5G_OK) rc = H5G_ERR_RUNTIME;
  return rc;
}

static int close_output(run_state *st) {
  int rc = h5g_io_close_file(st->out_file);
  st->out_file = NULL;
  return rc;
}

static int commit_output(run_state *st) {
  int rc = H5G_OK;
  if (st->rank == 0) CHECK(h5g_files_commit(st->v.tmp_path, st->opt->output, st->v.in_place));
  st->tmp_created = 0;
done:
  return rc;
}

static int fill_report(run_state *st, h5g_report *rep, double total) {
  int rc = H5G_OK;
  char *names = NULL;
  memset(rep, 0, sizeof *rep);
  CHECK_MPI(MPI_Reduce(st->seconds, rep->seconds, H5G_PHASE_COUNT, MPI_DOUBLE, MPI_MAX, 0, st->comm));
  CHECK_MPI(MPI_Reduce(&total, &rep->total_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, st->comm));
  const h5g_backend *be = st->be;
  double device = be->h2d_seconds + be->d2h_seconds + be->kernel_seconds;
  double gpu[5] = {be->h2d_seconds, be->d2h_seconds, be->kernel_seconds, be->waited_seconds,
                   device > be->waited_seconds ? device - be->waited_seconds : 0},
         slowest[5] = {0, 0, 0, 0, 0};
  CHECK_MPI(MPI_Reduce(gpu, slowest, 5, MPI_DOUBLE, MPI_MAX, 0, st->comm));
  rep->h2d_seconds = slowest[0];
  rep->d2h_seconds = slowest[1];
  rep->kernel_seconds = slowest[2];
  rep->waited_seconds = slowest[3];
  rep->hidden_seconds = slowest[4];
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
  snprintf(rep->exchange, sizeof rep->exchange, "%s", h5g_transport_name(st->transport));
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
  STEP(st, H5G_PHASE_SETUP, choose_devices(st));
  STEP(st, H5G_PHASE_CONNECT, connect_transport(st));
  STEP(st, H5G_PHASE_SETUP, create_backend(st));
  STEP(st, H5G_PHASE_BUFFERS, plan_runs(st));
  STEP(st, H5G_PHASE_READ, open_input(st));
  for (size_t j = 0; j < st->nruns; j++) { /* the GPU sorts run j while run j + 1 is read */
    STEP(st, H5G_PHASE_READ, read_run(st, j));
    if (st->device_sort) STEP(st, H5G_PHASE_SORT, sort_loaded_run(st, j));
  }
  STEP(st, H5G_PHASE_BUFFERS, h5g_buffers_wait_all(st->buffers)); /* what the read did not hide */
  if (opt->verify) STEP(st, H5G_PHASE_VERIFY, sum_checksums(st));
  if (!st->device_sort) {
    STEP(st, H5G_PHASE_TRANSFORM, st->be->transform(st->be, st->a, st->n, &st->ks, 0));
    STEP(st, H5G_PHASE_SORT, sort_runs(st));
  } else if (!st->copy_back_pending) {
    STEP(st, H5G_PHASE_SORT, wait_sorted_runs(st));
  }
  st->sorted = st->a;
  if (st->size > 1) {
    STEP(st, H5G_PHASE_CONNECT, h5g_transport_wait(st->transport)); /* what the read did not hide */
    STEP(st, H5G_PHASE_SPLITTERS, h5g_exact_cuts(comm, st->a, st->ks.width, st->run_offsets,
                                                 st->nruns, st->v.info.n, st->cuts));
    STEP(st, H5G_PHASE_EXCHANGE, exchange(st));
    STEP(st, H5G_PHASE_MERGE, merge_received(st));
  } else {
    st->sorted_values = st->va;
    STEP(st, H5G_PHASE_MERGE, merge_runs(st, st->run_offsets, st->nruns));
  }
  if (!st->copy_back_pending) /* else the GPU did it */
    STEP(st, H5G_PHASE_TRANSFORM, st->be->transform(st->be, st->sorted, st->n, &st->ks, 1));
  st->tmp_created = 1;
  STEP(st, H5G_PHASE_WRITE, prepare_output(st));
  STEP(st, H5G_PHASE_WRITE, open_output(st));
  STEP(st, H5G_PHASE_WRITE, reserve_output(st));
  STEP(st, H5G_PHASE_WRITE, write_keys(st));
  CHECK(carry_all(st));
  if (opt->verify) STEP(st, H5G_PHASE_VERIFY, verify_output(st));
  STEP(st, H5G_PHASE_WRITE, close_output(st));
  STEP(st, H5G_PHASE_WRITE, commit_output(st));
  CHECK(h5g_agree(comm, fill_report(st, rep, MPI_Wtime() - start)));
  CHECK(h5g_agree(comm, write_report(st, rep)));
done:
  /* every rank is here together (rc was agreed), so the collective closes match */
  carry_close(st);
  h5g_io_close_file(st->out_file);
  if (st->tmp_created && st->rank == 0) unlink(st->v.tmp_path);
  h5g_io_close(st->keys_in);
  h5g_io_close_file(st->in_file);
  h5g_buffers_free(st->buffers);
  if (st->be) st->be->destroy(st->be);
  h5g_transport_close(st->transport);
  free(st->run_offsets);
  free(st->cuts);
  free(st->recv_offsets);
  return rc;
}
