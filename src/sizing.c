/* Sizing (README "Sizing a job"): before anything is read, the host memory each rank needs
 * against what its node gives it, so that a run that cannot fit stops with one line instead of
 * being killed by the kernel; and --plan, which prints that sizing with the plan and stops. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/memory_limits.h"
#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/gather_rows.h"
#include "src/sizing.h"

#include "src/plan.h"
#include "src/write.h"

/* Host memory of a rank beyond its buffers: the MPI, HDF5 and C libraries, the code, the
 * threads' stacks: a CPU rank sorting 1000 keys peaks well under RANK_BASE_BYTES (Open MPI
 * 4.1, /usr/bin/time -v); a CUDA rank adds the driver's and runtime's host allocations, taken
 * at 512 MiB (not measured: a bound, not a figure). */
#define RANK_BASE_BYTES ((uint64_t)64 << 20)
#define CUDA_CONTEXT_BYTES ((uint64_t)512 << 20)
/* Rank 0 storing several ranks' filtered chunks (io/gathered.c): two 64 MiB messages received,
 * a chunk put together and its encoding, the chunks' list; at most three times a rank's share
 * (a message holds one rank's chunks). */
#define GATHER_RANK0_BYTES ((uint64_t)256 << 20)

/* Whole-process rate for the time estimate: bytes of input per second per node, rounded from
 * whole runs of one GPU node (a large file in the page cache) and of the CPU backend (a small
 * one, most of it start-up). A guide, not a promise. */
#define GPU_NODE_BYTES_PER_S 2.8e9
#define CPU_CORE_BYTES_PER_S 0.2e9

typedef struct {
  uint64_t buffers; /* the slice, its values, the merge's other side (src/plan.c) */
  uint64_t scratch; /* the CPU backend's sort scratch: one run and its values */
  uint64_t moved;   /* rows moved by source index (carried datasets, tables), in and out */
  uint64_t passes;  /* keys of several words: index and composed word per element */
  uint64_t kept;    /* several ranks: filtered outputs' chunks held for rank 0 (io/gathered.h) */
  uint64_t base;    /* RANK_BASE_BYTES, CUDA_CONTEXT_BYTES */
  uint64_t split;   /* all but base, were the slice merged after an exchange (several ranks) */
} host_need;

static uint64_t need_total(const host_need *n) {
  return n->buffers + n->scratch + n->moved + n->passes + n->kept + n->base;
}

static void rank_need(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      host_need *need) {
  h5g_buffer_spec specs[H5G_BUFFER_COUNT];
  uint64_t most = (v->info.n + (uint64_t)r->size - 1) / (uint64_t)r->size;
  memset(need, 0, sizeof *need);
  h5g_plan_buffer_specs(r, v, plan, specs);
  for (int i = 0; i < H5G_BUFFER_COUNT; i++) need->buffers += specs[i].n * specs[i].elem_bytes;
  if (!plan->use_cuda) {
    uint64_t run = plan->nruns ? (plan->n + plan->nruns - 1) / plan->nruns : plan->n;
    need->scratch = run * (plan->ks.width + (plan->records ? sizeof(uint64_t) : 0));
  }
  /* rows as read and as sorted, a batch's rows one dataset at a time, and what the route
   * between the ranks takes (src/carry.c, mpi/gather_rows.h) */
  need->moved = v->moved_row_bytes * (plan->n + most) +
                v->staged_row_bytes * (plan->n > most ? plan->n : most) +
                (v->moved_row_bytes ? h5g_row_route_bytes(plan->n, most, r->size,
                                                          v->moved_row_bytes, plan->rows_follow)
                                    : 0);
  if (v->composed && v->layout.words > 1) need->passes = 24 * plan->n;
  /* the encoded rows of this rank's share of every filtered output (about their raw bytes),
   * and rank 0's buffers to receive and store the others' */
  uint64_t kept = most * v->filtered_row_bytes;
  if (r->size > 1 && kept) /* rank 0's buffers hold a few of the others' messages at most */
    need->kept = kept + (r->rank == 0 ? (3 * kept < GATHER_RANK0_BYTES ? 3 * kept
                                                                        : GATHER_RANK0_BYTES)
                                      : 0);
  need->base = RANK_BASE_BYTES + (plan->use_cuda ? CUDA_CONTEXT_BYTES : 0);
  need->split = need_total(need) - need->base;
  if (!specs[H5G_BUFFER_SPARE].n) /* the merge's other side, for the keys and their values */
    need->split += specs[H5G_BUFFER_KEYS].n * specs[H5G_BUFFER_KEYS].elem_bytes +
                   specs[H5G_BUFFER_VALUES].n * specs[H5G_BUFFER_VALUES].elem_bytes;
}

static double gib(uint64_t bytes) { return (double)bytes / (double)((uint64_t)1 << 30); }

/* What fits, for the one-line refusal: ranks needing `base` each plus their share of `spread`
 * bytes, on nodes that give `node_bytes` to their ranks: the fewest nodes, at any count of ranks
 * per node up to `per_node`. */
static void what_fits(uint64_t spread, uint64_t base, uint64_t node_bytes, int per_node,
                      char *text, size_t len) {
  uint64_t best_nodes = UINT64_MAX, best_ranks = 0;
  for (int ranks_per_node = per_node; ranks_per_node >= 1; ranks_per_node--) {
    uint64_t room = node_bytes / (uint64_t)ranks_per_node;
    if (room <= base) continue;
    uint64_t ranks = (spread + (room - base) - 1) / (room - base);
    uint64_t nodes = (ranks + (uint64_t)ranks_per_node - 1) / (uint64_t)ranks_per_node;
    if (nodes < best_nodes) best_nodes = nodes, best_ranks = (uint64_t)ranks_per_node;
  }
  if (best_nodes == UINT64_MAX)
    snprintf(text, len, "no rank count fits: a rank needs %.2f GiB before any data", gib(base));
  else
    snprintf(text, len, "%" PRIu64 " node%s of %" PRIu64 " rank%s would fit", best_nodes,
             best_nodes == 1 ? "" : "s", best_ranks, best_ranks == 1 ? "" : "s");
}

int h5g_sizing_check(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan) {
  int rc = H5G_OK;
  host_need need;
  h5g_memory_limits limits;
  rank_need(r, v, plan, &need);
  h5g_memory_limits_read(r->opt->host_memory, &limits);
  uint64_t mine = need_total(&need), share = limits.available / (uint64_t)plan->ranks_on_node;
  int fits = mine <= share, all_fit = 0;
  CHECK_MPI(MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, r->comm));
  if (all_fit) goto done;
  /* the same line on every rank: the neediest rank, the tightest node */
  uint64_t spread = need.split, most[2] = {mine, UINT64_MAX - share}, worst[2], total = 0;
  CHECK_MPI(MPI_Allreduce(most, worst, 2, MPI_UINT64_T, MPI_MAX, r->comm));
  CHECK_MPI(MPI_Allreduce(&spread, &total, 1, MPI_UINT64_T, MPI_SUM, r->comm));
  uint64_t tightest = UINT64_MAX - worst[1];
  char fit[160];
  what_fits(total, need.base, tightest * (uint64_t)plan->ranks_on_node, plan->ranks_on_node,
            fit, sizeof fit);
  H5G_FAIL(H5G_ERR_RUNTIME, "not enough host memory: a rank needs up to %.2f GiB, and its node "
           "gives each of its %d rank%s %.2f GiB (%s); %s (%s)", gib(worst[0]),
           plan->ranks_on_node, plan->ranks_on_node == 1 ? "" : "s", gib(tightest),
           limits.bound, fit, r->opt->input);
done:
  return rc;
}

static const char *path_name(h5g_path path) {
  return path == H5G_PATH_HOST           ? "host"
         : path == H5G_PATH_DEVICE_RUNS ? "device runs"
                                        : "device resident";
}

/* The I/O line of the plan (README "Several nodes"). */
static const char *io_text(h5g_io_policy policy) {
  static const char *const text[] = {
      "threaded direct reads and writes on one node",
      "threaded direct reads, aligned pwrite + fdatasync by every rank (ranks on several nodes)",
      "threaded direct reads, aligned pwrite + fdatasync by every rank "
      "(forced: H5GSORT_IO_POLICY=multinode)",
      "collective MPI-IO (H5GSORT_IO=mpio)"};
  return text[policy];
}

/* One rank's line of the plan, gathered to rank 0. */
typedef struct {
  char host[64];
  uint64_t rows, runs, need, share, device_budget;
  int use_cuda, io_threads, path;
} plan_line;

/* --plan --report FILE.json: the same, for scripts. */
static int write_plan_json(const h5g_run *r, const h5g_verdict *v, const plan_line *lines,
                           const char *bound, const h5g_plan *plan,
                           uint64_t disk, uint64_t free_bytes, double estimate, int fits) {
  int rc = H5G_OK;
  FILE *f = fopen(r->opt->report, "w");
  if (!f) H5G_FAIL(H5G_ERR_RUNTIME, "cannot write the report (%s)", r->opt->report);
  fprintf(f, "{\n  \"plan\": true,\n  \"fits\": %s,\n  \"rows\": %" PRIu64
          ",\n  \"ranks\": %d,\n  \"memory_bound\": \"%s\",\n  \"disk_bytes\": %" PRIu64
          ",\n  \"disk_free_bytes\": %" PRIu64 ",\n  \"exchange\": \"%s\",\n"
          "  \"io_policy\": \"%s\",\n  \"streamed\": %s,\n  \"estimate_seconds\": %.1f,\n"
          "  \"per_rank\": [\n",
          fits ? "true" : "false", v->info.n, r->size, bound, disk, free_bytes,
          h5g_transport_name(r->transport), h5g_io_policy_name(plan->io_policy),
          plan->streamed ? "true" : "false", estimate);
  for (int i = 0; i < r->size; i++)
    fprintf(f, "    {\"rank\": %d, \"host\": \"%s\", \"rows\": %" PRIu64 ", \"runs\": %" PRIu64
            ", \"path\": \"%s\", \"host_bytes\": %" PRIu64 ", \"host_available_bytes\": %" PRIu64
            ", \"device_bytes\": %" PRIu64 ", \"io_threads\": %d}%s\n", i, lines[i].host,
            lines[i].rows, lines[i].runs, path_name((h5g_path)lines[i].path), lines[i].need,
            lines[i].share, lines[i].use_cuda ? lines[i].device_budget : 0, lines[i].io_threads,
            i + 1 < r->size ? "," : "");
  fprintf(f, "  ]\n}\n");
  if (fclose(f) != 0) H5G_FAIL(H5G_ERR_RUNTIME, "cannot write the report (%s)", r->opt->report);
done:
  return rc;
}

static int print_plan(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *e, const plan_line *lines, const h5g_memory_limits *l) {
  const h5g_options *opt = r->opt;
  uint64_t disk = h5g_write_output_bytes(r, v, plan, e);
  uint64_t free_bytes = h5g_files_free_bytes(opt->output);
  int fits = 1, gpus = 0;
  printf("h5gsort plan: %s:%s, %" PRIu64 " rows of %s, %d rank%s\n", opt->input, opt->dataset,
         v->info.n, v->info.type_name, r->size, r->size == 1 ? "" : "s");
  printf("%5s  %-20s %14s %5s %-16s %11s %11s %12s %7s\n", "rank", "host", "rows", "runs", "path",
         "host GiB", "avail GiB", "device GiB", "I/O thr");
  for (int i = 0; i < r->size; i++) {
    const plan_line *p = &lines[i];
    fits &= p->need <= p->share;
    gpus += p->use_cuda;
    if (i < 16 || i == r->size - 1)
      printf("%5d  %-20.20s %14" PRIu64 " %5" PRIu64 " %-16s %11.2f %11.2f %12.2f %7d\n", i,
             p->host, p->rows, p->runs, path_name((h5g_path)p->path), gib(p->need), gib(p->share),
             p->use_cuda ? gib(p->device_budget) : 0.0, p->io_threads);
    else if (i == 16)
      printf("  ...\n");
  }
  double bytes = (double)v->info.n * v->info.width;
  int nodes = r->size / plan->ranks_on_node;
  double rate = gpus ? GPU_NODE_BYTES_PER_S * nodes : CPU_CORE_BYTES_PER_S * r->size;
  double estimate = bytes / rate + 1.0; /* a second of start-up and tear-down */
  printf("memory: %s per rank (%s)\n", fits ? "fits" : "DOES NOT FIT", l->bound);
  printf("disk: output and temporary file %.2f GiB, %.2f GiB free beside %s\n", gib(disk),
         gib(free_bytes), opt->output);
  printf("exchange: %s; I/O: %s\n", h5g_transport_name(r->transport), io_text(plan->io_policy));
  if (plan->streamed) /* one rank: its slice needs no host buffer of its size (host GiB above) */
    printf("streamed: the slice goes to the GPU and back through %d pinned slots of %.4g MiB\n",
           H5G_RING_SLOTS, (double)plan->slot_elems * plan->ks.width / 1048576.0);
  printf("estimate: %.1f s (README's rates: %s)\n", estimate,
         gpus ? "2.8 GB/s per GPU node" : "0.2 GB/s per CPU rank");
  fflush(stdout);
  return opt->report ? write_plan_json(r, v, lines, l->bound, plan, disk, free_bytes,
                                       estimate, fits)
                     : H5G_OK;
}

int h5g_sizing_print_plan(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                          const h5g_extent *e) {
  int rc = H5G_OK;
  host_need need;
  h5g_memory_limits limits;
  plan_line mine, *lines = NULL;
  memset(&mine, 0, sizeof mine);
  rank_need(r, v, plan, &need);
  h5g_memory_limits_read(r->opt->host_memory, &limits);
  gethostname(mine.host, sizeof mine.host - 1);
  mine.rows = plan->n;
  mine.runs = plan->nruns;
  mine.need = need_total(&need);
  mine.share = limits.available / (uint64_t)plan->ranks_on_node;
  mine.device_budget = r->be->mem_budget;
  mine.use_cuda = plan->use_cuda;
  mine.io_threads = plan->io_threads;
  mine.path = (int)plan->path;
  if (r->rank == 0) lines = malloc((size_t)r->size * sizeof *lines);
  CHECK(h5g_agree_alloc(r->comm, r->rank != 0 || lines, (size_t)r->size * sizeof *lines));
  CHECK_MPI(MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, lines, (int)sizeof mine, MPI_BYTE, 0,
                       r->comm));
  CHECK(h5g_agree(r->comm, r->rank == 0 ? print_plan(r, v, plan, e, lines, &limits) : H5G_OK));
  CHECK(h5g_sizing_check(r, v, plan)); /* exit 1 when it does not fit, as the run would */
done:
  free(lines);
  return rc;
}
