/* Phases "setup", "connect" and "buffers": the plan made once. Which backend and GPU each rank
 * uses, how ranks exchange keys, how many sorted runs fit the backend, which path the keys take
 * (h5g_path) and which host buffers that path needs. Nothing after this phase decides again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpus.h"
#include "base/error.h"
#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/reduce_u64.h"
#include "mpi/topology.h"
#include "src/plan.h"
#include "src/top.h"

/* The floor of --device-memory: a smaller cap is raised to it (a warning on rank 0). The runs
 * cost more the more there are, and a cap of a few bytes made one run per key or two (issue 32):
 * thousands of runs took many times as long as a few hundred. 64 KiB keeps a run to 4,096 8-byte
 * keys or more, and the tests' tiny caps (4K on 20k-100k keys) still sort out of core, in 3 to 25
 * runs. */
#define H5G_DEVICE_MEMORY_MIN ((uint64_t)64 << 10)

/* --device-memory with its floor; 0: not given. */
static uint64_t device_memory(const h5g_run *r) {
  uint64_t cap = r->opt->device_memory;
  return cap && cap < H5G_DEVICE_MEMORY_MIN ? H5G_DEVICE_MEMORY_MIN : cap;
}

/* Device memory NCCL stages the exchange through: taken from --device-memory when given. */
static uint64_t nccl_staging_bytes(const h5g_run *r) {
  uint64_t staging = (uint64_t)512 << 20, budget = device_memory(r);
  return budget && budget / 4 < staging ? budget / 4 : staging;
}

void h5g_plan_share(const h5g_run *r, const h5g_verdict *v, h5g_plan *plan) {
  uint64_t n = v->info.n;
  plan->ks.cls = v->info.cls;
  plan->ks.width = v->info.width;
  plan->ks.descending = v->composed ? 0 : r->opt->descending; /* composed: per key */
  plan->ks.na = v->composed ? H5G_NA_DEFAULT : r->opt->na_position;
  /* --counts: the runs cut down before the exchange send their group sizes as values */
  plan->records = h5g_options_moves_records(r->opt) || r->opt->counts ||
                  (v->composed && h5g_keyset_by_index(&v->layout));
  plan->offset = h5g_share_begin((uint64_t)r->rank, n, (uint64_t)r->size);
  plan->n = h5g_share_begin((uint64_t)r->rank + 1, n, (uint64_t)r->size) - plan->offset;
}

/* The rank's CPUs (direct file I/O uses the CPUs the launcher gave the rank; --io-threads
 * overrides) and the I/O policy, by whether every rank is on this node (h5g_io_configure). Asks
 * nothing of the GPU: the context's thread is starting the driver meanwhile (a call here would
 * wait for it). */
int h5g_plan_node(const h5g_run *r, h5g_plan *plan) {
  int rc = H5G_OK;
  plan->cpus = h5g_cpus_allowed();
  plan->io_threads = r->opt->io_threads ? r->opt->io_threads : plan->cpus;
  CHECK(h5g_io_configure(plan->io_threads, plan->ranks_on_node == r->size, &plan->io_policy));
done:
  return rc;
}

/* Collective: each rank's backend and GPU (local rank modulo the visible devices). */
int h5g_plan_devices(const h5g_run *r, h5g_plan *plan) {
  int rc = H5G_OK;
  int devices = h5g_cuda_device_count();
  /* auto: the GPU when every rank has one (keys and records alike): ranks on different paths
   * would not meet in the same collective calls */
  int have_gpu = devices > 0, every_rank_has_gpu = 0;
  CHECK_MPI(MPI_Allreduce(&have_gpu, &every_rank_has_gpu, 1, MPI_INT, MPI_MIN, r->comm));
  plan->use_cuda = r->opt->backend == H5G_BACKEND_CUDA ||
                   (r->opt->backend == H5G_BACKEND_AUTO && every_rank_has_gpu);
  plan->device = devices > 0 ? plan->local_rank % devices : 0;
  plan->device_sharers =
      devices > 0 ? (plan->ranks_on_node - plan->device + devices - 1) / devices : 1;
  int own_gpu = plan->use_cuda && devices > 0 && plan->device_sharers == 1;
  CHECK_MPI(MPI_Allreduce(&own_gpu, &plan->gpu_per_rank, 1, MPI_INT, MPI_MIN, r->comm));
done:
  return rc;
}

/* Collective: the exchange transport, before the CUDA backend sizes itself from the free device
 * memory (NCCL takes its own first). Keys may stay on the GPUs, which `auto` does only across
 * nodes: on one node the host exchange through MPI was faster end to end than NCCL between the
 * GPUs, whose connection set-up the read did not hide
 * (bench/RESULTS.md, "Third run: device-resident path"). */
int h5g_plan_transport(h5g_run *r, const h5g_plan *plan) {
  int across_nodes = plan->ranks_on_node < r->size;
  return h5g_transport_open(r->comm, r->opt->exchange, plan->gpu_per_rank, across_nodes,
                            plan->device, nccl_staging_bytes(r), &r->transport);
}

/* The CUDA backend's budget: its share of 90% of the GPU's free memory (ranks sharing a GPU
 * split it), or --device-memory when that is smaller: a cap above what the GPU has does not
 * bind. The NCCL staging buffers come out of --device-memory. */
static uint64_t cuda_budget(const h5g_run *r, const h5g_plan *plan) {
  uint64_t budget = device_memory(r);
  if (budget && strcmp(h5g_transport_name(r->transport), "nccl") == 0)
    budget -= nccl_staging_bytes(r);
  uint64_t share = h5g_cuda_free_memory(plan->device) / 10 * 9 / (uint64_t)plan->device_sharers;
  if (share && (!budget || budget > share)) {
    if (budget && r->opt->verbose)
      fprintf(stderr, "h5gsort: rank %d: --device-memory above this rank's share of the free GPU "
              "memory; using %llu bytes\n", r->rank, (unsigned long long)share);
    budget = share;
  }
  return budget;
}

int h5g_plan_backend(h5g_run *r, const h5g_plan *plan) {
  if (device_memory(r) != r->opt->device_memory && r->rank == 0 && !r->opt->quiet)
    fprintf(stderr, "h5gsort: warning: --device-memory %llu bytes is below the floor of %llu; "
            "using %llu bytes\n", (unsigned long long)r->opt->device_memory,
            (unsigned long long)H5G_DEVICE_MEMORY_MIN, (unsigned long long)H5G_DEVICE_MEMORY_MIN);
  if (!plan->use_cuda) return h5g_backend_cpu_create(&r->be, device_memory(r));
  return h5g_backend_cuda_create(&r->be, plan->device, cuda_budget(r, plan));
}

/* Runs of at most `cap` keys that n keys take (one when there are none). */
static uint64_t runs_of(uint64_t n, uint64_t cap) { return n ? (n + cap - 1) / cap : 1; }

/* Collective: cuts the share into the same number of runs on every rank, each within the
 * backend's capacity, and picks the path the keys take. */
int h5g_plan_runs(const h5g_run *r, const h5g_verdict *v, h5g_plan *plan) {
  int rc = H5G_OK;
  uint64_t cap = r->be->capacity(r->be, plan->ks.width, plan->records);
  uint64_t mine = runs_of(plan->n, cap), runs = 0;
  CHECK(h5g_allreduce_u64(r->comm, &mine, &runs, 1, H5G_REDUCE_MAX));
  plan->nruns = (size_t)runs;
  /* the GPU receives into a run of the rank's own length */
  int top_fits = h5g_top_rows(r->opt, v, r->size, r->rank) <= plan->n, every_top_fits = 0;
  CHECK_MPI(MPI_Allreduce(&top_fits, &every_top_fits, 1, MPI_INT, MPI_MIN, r->comm));
  if (!r->be->load)
    plan->path = H5G_PATH_HOST;
  else if (plan->nruns == 1 && every_top_fits &&
           (r->size == 1 || h5g_transport_moves_device_buffers(r->transport)))
    plan->path = H5G_PATH_DEVICE_RESIDENT;
  else
    plan->path = H5G_PATH_DEVICE_RUNS;
  plan->sort_is_output = plan->path == H5G_PATH_DEVICE_RESIDENT && r->size == 1;
  plan->slot_elems = h5g_pin_piece_bytes() / plan->ks.width;
  const h5g_options *o = r->opt;
  /* Not into filtered chunks: a slot's write that ends inside a chunk would have it encoded
   * again with the next one (the gzip output of a streamed run differed from the slice's); nor
   * from them, the input's storage kept (else a chunk a slot ends inside is decoded twice). Only
   * with writes into a mapping: the other policies' writes end in fdatasync, once a slot. */
  /* the values only an unfiltered --index-out takes come back slot by slot with the keys */
  int index_only = o->index_out && !o->ncarry && !o->key_field && !o->nkey_columns &&
                   !v->index_filtered;
  plan->streamed = plan->sort_is_output && r->be->copy_out && r->be->wait_loaded &&
                   (!plan->records || index_only) && !v->composed &&
                   plan->io_policy == H5G_IO_ONE_NODE &&
                   !v->keys_filtered && o->storage.layout == H5G_LAYOUT_KEEP &&
                   o->storage.compress == H5G_COMPRESS_KEEP &&
                   !o->unique && o->top < 0 && !o->counts &&
                   plan->n > h5g_ring_elems(plan);
done:
  return rc;
}

void h5g_plan_at(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, int size,
                 int rank, h5g_plan *at) {
  uint64_t n = v->info.n;
  *at = *plan;
  at->offset = h5g_share_begin((uint64_t)rank, n, (uint64_t)size);
  at->n = h5g_share_begin((uint64_t)rank + 1, n, (uint64_t)size) - at->offset;
  if (size == r->size) return; /* the runs and path agreed for this size */
  /* the most rows a rank holds (the last rank's share) sets the runs, as the agreement does */
  uint64_t most = n - h5g_share_begin((uint64_t)size - 1, n, (uint64_t)size);
  at->nruns = (size_t)runs_of(most, r->be->capacity(r->be, plan->ks.width, plan->records));
  /* resident only where the plan is, with one run each and a transport already chosen for an
   * exchange: a bound, as the other paths hold more on the host */
  if (at->path == H5G_PATH_DEVICE_RESIDENT && (at->nruns > 1 || (size > 1 && r->size == 1)))
    at->path = H5G_PATH_DEVICE_RUNS;
  at->sort_is_output = at->path == H5G_PATH_DEVICE_RESIDENT && size == 1;
  at->streamed = 0; /* it needs less, and only one rank's slice streams */
}

/* The run offsets and the tables of the exchange (local: agreed by the step). */
int h5g_plan_tables(const h5g_run *r, h5g_plan *plan, h5g_data *d) {
  int rc = H5G_OK;
  size_t runs_bytes = (plan->nruns + 1) * sizeof(uint64_t);
  /* P + 2 rows of cuts: --top's cut at K beside the ranks' */
  size_t table_bytes = (plan->nruns * ((size_t)r->size + 2) + 1) * sizeof(uint64_t);
  uint64_t *offsets = malloc(runs_bytes);
  plan->run_offsets = offsets;
  d->runs = malloc(runs_bytes);
  d->cuts = malloc(table_bytes);
  d->recv_offsets = malloc(table_bytes);
  d->run_checksums = calloc(plan->nruns + 1, sizeof(uint64_t));
  CHECK_ALLOC(offsets, runs_bytes);
  CHECK_ALLOC(d->run_checksums, runs_bytes);
  CHECK_ALLOC(d->runs, runs_bytes);
  CHECK_ALLOC(d->cuts, table_bytes);
  CHECK_ALLOC(d->recv_offsets, table_bytes);
  for (size_t j = 0; j <= plan->nruns; j++)
    d->runs[j] = offsets[j] = h5g_share_begin(j, plan->n, plan->nruns);
done:
  return rc;
}

int h5g_plan_pin_piece(void *be, void *p, size_t bytes) {
  return ((h5g_backend *)be)->pin(be, p, bytes);
}

void h5g_plan_unpin_piece(void *be, void *p) { ((h5g_backend *)be)->unpin(be, p); }

/* The host buffers of the run (made by h5g_plan_buffers, counted by src/sizing.c): the slice,
 * or the rows --top or --unique send here when they are more (at most N/P rounded up); a merge
 * needs a spare buffer; the resident path merges on the GPU and gets its output back into the
 * slice buffer. */
void h5g_plan_buffer_specs(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, int size,
                           int rank, h5g_buffer_spec *specs) {
  int merges = (size > 1 || plan->nruns > 1) && plan->path != H5G_PATH_DEVICE_RESIDENT;
  uint64_t top = h5g_top_rows(r->opt, v, size, rank);
  uint64_t n = plan->n > top ? plan->n : top;
  uint64_t most = (v->info.n + (uint64_t)size - 1) / (uint64_t)size;
  if (r->opt->unique && most > n) n = most;
  unsigned w = plan->ks.width;
  if (plan->streamed) n = h5g_ring_elems(plan);
  /* the direct read's threads fill it (direct reads: every policy but mpio) */
  specs[H5G_BUFFER_KEYS] =
      (h5g_buffer_spec){.n = n, .elem_bytes = w, .filled_in_place = plan->io_policy != H5G_IO_MPIO};
  specs[H5G_BUFFER_SPARE] = (h5g_buffer_spec){.n = merges ? n : 0, .elem_bytes = w};
  specs[H5G_BUFFER_VALUES] =
      (h5g_buffer_spec){.n = plan->records ? n : 0, .elem_bytes = sizeof(uint64_t)};
  specs[H5G_BUFFER_SPARE_VALUES] =
      (h5g_buffer_spec){.n = plan->records && merges ? n : 0, .elem_bytes = sizeof(uint64_t)};
}

/* Starts making the host buffers ready: a helper thread makes them resident (piece by piece)
 * and pinned while the read fills the pieces already resident. */
int h5g_plan_buffers(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                     const h5g_resume *res, h5g_data *d) {
  int rc = H5G_OK;
  h5g_plan_buffer_specs(r, v, plan, r->size, r->rank, d->specs);
  h5g_resume_name_buffers(res, d->specs);
  /* pinned pages stay in memory: scratch files are not pinned (GPU copies go through staging) */
  CHECK(h5g_buffers_start(d->specs, H5G_BUFFER_COUNT, h5g_io_piece_bytes(), plan->ranks_on_node,
                          r->be->pin && !plan->spills ? h5g_plan_pin_piece : NULL,
                          h5g_plan_unpin_piece, r->be, &d->set));
  d->keys = d->specs[H5G_BUFFER_KEYS].p;
  d->spare = d->specs[H5G_BUFFER_SPARE].p;
  d->values = d->specs[H5G_BUFFER_VALUES].p;
  d->spare_values = d->specs[H5G_BUFFER_SPARE_VALUES].p;
  h5g_data_set_sorted(d, d->keys, d->values);
done:
  return rc;
}

void h5g_plan_free(h5g_plan *plan) {
  free((void *)plan->run_offsets);
  plan->run_offsets = NULL;
}

void h5g_data_free(h5g_data *d) {
  h5g_buffers_free(d->set);
  d->set = NULL;
  free(d->runs);
  free(d->cuts);
  h5g_bulk_free(d->counts);
  free(d->order);
  free(d->recv_offsets);
  free(d->run_checksums);
  h5g_data_free_table_rows(d);
}

void h5g_data_free_table_rows(h5g_data *d) {
  if (d->table_set) h5g_buffers_free(d->table_set); /* its buffer is table_rows */
  else h5g_resident_free(d->table_rows, d->table_rows_capacity);
  d->table_set = NULL;
  d->table_rows = NULL;
  d->table_rows_capacity = 0;
}
