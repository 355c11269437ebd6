/* Sizing (docs/cost-model.md, "Sizing a job"): before anything is read, the host memory each rank
 * needs against what its node gives it, so that a run that cannot fit stops with one line instead
 * of being killed by the kernel, or spills to scratch files; and --plan, which prints that sizing
 * with the plan and stops. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cpus.h"
#include "base/error.h"
#include "base/memory_limits.h"
#include "base/scratch_memory.h"
#include "io/h5io.h"
#include "mpi/agree.h"
#include "mpi/reduce_u64.h"
#include "mpi/gather_rows.h"
#include "src/sizing.h"

#include "src/carry.h"
#include "src/plan.h"
#include "src/resume.h"
#include "src/report.h"
#include "src/verify_output.h"
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
/* A spilling CPU rank's sort works in runs of at least this much (run and scratch): smaller,
 * the many runs' merge would cost more than the memory it saves. */
#define SPILL_LEAST_BUDGET ((uint64_t)16 << 20)

/* The time estimate's rates (--plan): bytes a second on one core of a rank, each from h5gsort
 * itself on the CPU backend (2-core VM, Open MPI 4.1.4, inputs of h5gsort-gen --dist uniform in
 * the page cache, --report's phase seconds, best of two runs; 2026-12-02). A guide, not a
 * promise: the filters' rates depend on the data (random rows compress little and slowly). */
static const struct {
  /* plain reads, writes and copies of rows (threads of the rank): 4M u4 keys carrying 4 f8
   * datasets (128 MiB), 1 rank, 1 I/O thread: carry 0.20 s to read, move and write them (three
   * passes, 2 GB/s); a plain 256 MiB write took 0.05-0.34 s: 1.5 GB/s */
  double copy;
  /* the CPU sort of keys and their values (one thread a rank): 32M u8 at 1 rank, 0.90 s; at 2
   * and 4 ranks on 2 cores 0.46 s for 128 and 64 MiB a rank */
  double sort;
  /* the exchange and the merge, of keys and values: 2 ranks, 128 MiB each, 0.02 + 0.06 s */
  double merge;
  /* deflate decode (a gzip input, shuffle + deflate 6; the chunks decoded by the rank's
   * threads): the carry above from a gzip input to a plain output, 1.31 s on 1 thread and 0.66
   * on 2 against 0.20 s plain: 0.11-0.2 GB/s a thread */
  double inflate;
  /* deflate encode, level 6 (HDF5's filter: one thread a rank): the same 4 f8 and u4 keys
   * written with --compress gzip, carry 3.9 s + write 0.25 at 1 rank (1 or 2 I/O threads
   * alike), 1.97 + 0.33 at 2 ranks (35 MB/s); from the gzip input, its storage kept, about 2.2
   * s of the carry's 3.5 (58 MB/s); the u4 keys alone 64 MB/s: 45 MB/s */
  double deflate;
  /* the encoding's rate on its share of the cores where a node has more ranks than cores: it
   * runs in steps that end in agreements, where a waiting rank polls and takes cores from an
   * encoding one: 4 ranks on 2 cores, carry + write 4.5 s against 2.3 at 2 ranks */
  double deflate_shared;
  /* the keys on a GPU node, whole process: rounded from whole runs of one GPU node (a large
   * file in the page cache) */
  double gpu_node;
  /* seconds outside the phases (MPI's start, the process's start and end): 0.29 s at 1 and 2
   * ranks, 0.37-0.40 at 4 on 2 cores */
  double start, start_per_rank;
  /* a spilling rank's scratch bytes, written out and read back by the kernel under a memory
   * limit: 50M u4 keys (426 MB of scratch), 1 rank in a 300 MiB memory cgroup, scratch on the
   * VM's disk, 2.78 s against 0.91 in memory (bench/RESULTS.md, "Spilling to scratch") */
  double spill;
} rates = {1.5e9, 0.3e9, 1.5e9, 0.15e9, 45e6, 0.5, 2.8e9, 0.25, 0.04, 0.23e9};

typedef struct {
  uint64_t buffers; /* the slice, its values, the merge's other side (src/plan.c) */
  uint64_t scratch; /* the CPU backend's sort scratch: one run and its values */
  uint64_t moved;   /* rows moved by source index (carried datasets, tables), in and out */
  uint64_t route;   /* the route those rows take between the ranks (mpi/gather_rows.h) */
  uint64_t outputs; /* --counts, integer keys taken out of composed words (src/write.c) */
  uint64_t passes;  /* keys of several words: index and composed word per element */
  uint64_t kept;    /* several ranks: filtered outputs' chunks held for rank 0 (io/gathered.h) */
  uint64_t verify;  /* --verify: the pieces the output is read back in (src/verify_output.h) */
  uint64_t base;    /* RANK_BASE_BYTES, CUDA_CONTEXT_BYTES */
  int spilled;      /* the buffers, moved rows and route are scratch files, not host memory */
} host_need;

/* Spilled, the pages of the run being sorted are in memory beside the sort's scratch. */
static uint64_t need_total(const host_need *n) {
  uint64_t held = n->spilled ? n->scratch : n->buffers + n->moved + n->route + n->outputs;
  return held + n->scratch + n->passes + n->kept + n->verify + n->base;
}

/* The scratch files of a spilled rank: its buffers, moved rows, their route and the outputs
 * above, each mapped in whole huge pages or pages (base/host_memory.c; H5G_BUFFER_COUNT buffers,
 * the carry's two, the route's three, two outputs'). */
static uint64_t scratch_total(const host_need *n) {
  return n->buffers + n->moved + n->route + n->outputs +
         (uint64_t)(H5G_BUFFER_COUNT + 2 + 3 + 2) * (2u << 20);
}

/* What rank `rank` of `size` ranks needs (the run's own rank and size: what it will make),
 * `spilled` or not. */
static void rank_need(const h5g_run *r, const h5g_verdict *v, const h5g_plan *run_plan,
                      int size, int rank, int spilled, host_need *need) {
  h5g_plan at;
  h5g_plan_at(r, v, run_plan, size, rank, &at);
  const h5g_plan *plan = &at;
  h5g_buffer_spec specs[H5G_BUFFER_COUNT];
  uint64_t most = (v->info.n + (uint64_t)size - 1) / (uint64_t)size;
  memset(need, 0, sizeof *need);
  need->spilled = spilled;
  h5g_plan_buffer_specs(r, v, plan, size, rank, specs);
  for (int i = 0; i < H5G_BUFFER_COUNT; i++) need->buffers += specs[i].n * specs[i].elem_bytes;
  if (!plan->use_cuda) {
    uint64_t run = plan->nruns ? (plan->n + plan->nruns - 1) / plan->nruns : plan->n;
    need->scratch = run * (plan->ks.width + (plan->records ? sizeof(uint64_t) : 0));
  }
  /* the carry's two buffers of rows (as read, as sorted: src/carry.c) and what the route
   * between the ranks takes (mpi/gather_rows.h; its buffers rounded up to whole huge pages,
   * a few MiB, within RANK_BASE_BYTES) */
  need->moved = 2 * h5g_carry_buffer_bytes(v, plan->n, size);
  need->route = v->moved_row_bytes ? h5g_row_route_bytes(plan->n, most, size, v->moved_row_bytes)
                                   : 0;
  uint64_t rows = plan->n > most ? plan->n : most; /* the most this rank sorts or writes */
  if (v->composed && v->layout.words > 1) /* --unique also reads words 1.. in order */
    need->passes = 24 * plan->n + (r->opt->unique ? (v->layout.words - 1) * rows * plan->ks.width
                                                  : 0);
  int keys_taken = v->composed && !r->opt->key_field && !r->opt->nkey_columns;
  need->outputs = ((r->opt->counts ? 1 : 0) + (keys_taken ? 1 : 0)) * rows * sizeof(uint64_t);
  /* the encoded rows of this rank's share of every filtered output (about their raw bytes),
   * and rank 0's buffers to receive and store the others' */
  uint64_t kept = most * v->filtered_row_bytes;
  if (size > 1 && kept) /* rank 0's buffers hold a few of the others' messages at most */
    need->kept = kept + (rank == 0 ? (3 * kept < GATHER_RANK0_BYTES ? 3 * kept
                                                                    : GATHER_RANK0_BYTES)
                                   : 0);
  need->verify = h5g_verify_output_bytes(r->opt, v, plan, most); /* no rank writes more */
  need->base = RANK_BASE_BYTES + (plan->use_cuda ? CUDA_CONTEXT_BYTES : 0);
}

/* Whether rank `rank` of `size` ranks fits in `room` bytes (*need: what it needs): the one test
 * of the check (each rank against its node's share) and of the search for what would fit. */
static int rank_fits(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, int size,
                     int rank, int spilled, uint64_t room, host_need *need) {
  rank_need(r, v, plan, size, rank, spilled, need);
  return need_total(need) <= room;
}

/* Whether `size` ranks fit, each given `room` bytes: the neediest ones do, rank 0 (which also
 * stores the others' filtered chunks) and the last, whose share is the largest
 * (h5g_share_begin); the others hold no more rows than the last. */
static int ranks_fit(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, int size,
                     uint64_t room) {
  host_need need;
  return rank_fits(r, v, plan, size, 0, 0, room, &need) &&
         rank_fits(r, v, plan, size, size - 1, 0, room, &need);
}

static double gib(uint64_t bytes) { return (double)bytes / (double)((uint64_t)1 << 30); }

/* Nodes the search for what fits tries, for each count of ranks per node: every count up to
 * LINEAR_NODES, then doubling up to MOST_RANKS ranks. */
enum { LINEAR_NODES = 1024, MOST_RANKS = 1 << 24 };

/* What fits, for the one-line refusal: on nodes that give `node_bytes` to their ranks, the
 * fewest nodes, at any count of ranks per node up to `per_node` (the most, of as few nodes),
 * that ranks_fit, the check's own arithmetic. */
static void what_fits(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      uint64_t node_bytes, int per_node, uint64_t base, char *text, size_t len) {
  uint64_t best_nodes = UINT64_MAX, best_ranks = 0;
  for (int ranks_per_node = per_node; ranks_per_node >= 1; ranks_per_node--) {
    uint64_t room = node_bytes / (uint64_t)ranks_per_node;
    if (room <= base) continue; /* not even a rank without data */
    for (uint64_t nodes = 1; nodes < best_nodes && nodes * (uint64_t)ranks_per_node <= MOST_RANKS;
         nodes = nodes < LINEAR_NODES ? nodes + 1 : 2 * nodes)
      if (ranks_fit(r, v, plan, (int)(nodes * (uint64_t)ranks_per_node), room)) {
        best_nodes = nodes, best_ranks = (uint64_t)ranks_per_node;
        break;
      }
  }
  if (best_nodes == UINT64_MAX)
    snprintf(text, len, "no rank count fits: a rank needs %.2f GiB before any data", gib(base));
  else
    snprintf(text, len, "%" PRIu64 " node%s of %" PRIu64 " rank%s would fit", best_nodes,
             best_nodes == 1 ? "" : "s", best_ranks, best_ranks == 1 ? "" : "s");
}

/* What this rank may use: its share of what its node gives the job. */
static uint64_t rank_room(const h5g_run *r, const h5g_plan *plan, h5g_memory_limits *limits) {
  h5g_memory_limits_read(r->opt->host_memory, limits);
  return limits->available / (uint64_t)plan->ranks_on_node;
}

/* Where a spilling rank's scratch files go: --scratch; else $TMPDIR (a Slurm job's node-local
 * directory, often) where it is on disk with room for `bytes` a rank of the node's; else
 * OUTPUT's directory. */
static void scratch_dir_for(const h5g_run *r, const h5g_plan *plan, uint64_t bytes, char *dir,
                            size_t len) {
  const char *tmp = getenv("TMPDIR");
  uint64_t free_bytes = 0;
  if (r->opt->scratch) {
    snprintf(dir, len, "%s", r->opt->scratch);
  } else if (tmp && *tmp && !h5g_scratch_in_memory(tmp) &&
             h5g_scratch_free_bytes(tmp, &free_bytes) == H5G_OK &&
             (free_bytes + h5g_resume_kept_bytes(r->opt, tmp)) / (uint64_t)plan->ranks_on_node >=
                 bytes) {
    snprintf(dir, len, "%s", tmp);
  } else {
    h5g_error_clear(); /* a $TMPDIR that cannot be used is passed over */
    char beside[4096];
    h5g_files_directory_of(r->opt->output, beside, sizeof beside);
    char *absolute = realpath(beside, NULL); /* the plan and the note name it whole */
    snprintf(dir, len, "%s", absolute ? absolute : beside);
    free(absolute);
  }
}

int h5g_sizing_spill(h5g_run *r, const h5g_verdict *v, h5g_plan *plan) {
  int rc = H5G_OK, spills = 0, any = 0;
  host_need need;
  h5g_memory_limits limits;
  uint64_t room = rank_room(r, plan, &limits);
  plan->spills = 0;
  plan->scratch_bytes = 0;
  spills = !r->opt->no_spill && !rank_fits(r, v, plan, r->size, r->rank, 0, room, &need);
  CHECK_MPI(MPI_Allreduce(&spills, &any, 1, MPI_INT, MPI_MAX, r->comm));
  if (!any) goto done;
  plan->unspilled_budget = r->be->mem_budget;
  if (spills && !plan->use_cuda) {
    /* the CPU sort's runs take what stays free: a run's pages and its scratch (the GPU's runs
     * are its memory's) */
    uint64_t held = need.passes + need.kept + need.verify + need.base;
    uint64_t budget = room > held + SPILL_LEAST_BUDGET ? room - held : SPILL_LEAST_BUDGET;
    if (!r->be->mem_budget || budget < r->be->mem_budget) r->be->mem_budget = budget;
  }
  plan->spills = spills;
  CHECK(h5g_plan_runs(r, v, plan)); /* the runs agreed again, on every rank */
  rank_need(r, v, plan, r->size, r->rank, spills, &need);
  plan->scratch_bytes = spills ? scratch_total(&need) : 0;
done:
  return rc;
}

/* Local, a spilling rank: its scratch directory has room for the files of its node's ranks;
 * with `use`, its buffers come from there from now on. */
static int use_scratch(const h5g_run *r, const h5g_plan *plan, int use, char *dir, size_t len) {
  int rc = H5G_OK;
  uint64_t free_bytes = 0, need = plan->scratch_bytes * (uint64_t)plan->ranks_on_node;
  scratch_dir_for(r, plan, plan->scratch_bytes, dir, len);
  CHECK(h5g_scratch_free_bytes(dir, &free_bytes));
  free_bytes += h5g_resume_kept_bytes(r->opt, dir); /* reused or removed by this run */
  if (free_bytes < need)
    H5G_FAIL(H5G_ERR_RUNTIME, "not enough host memory for this rank's share, and not enough room "
             "to spill it: %s has %.2f GiB free, the node's %d rank%s need %.2f GiB of scratch "
             "(--scratch DIR elsewhere, or more nodes) (%s)", dir, gib(free_bytes),
             plan->ranks_on_node, plan->ranks_on_node == 1 ? "" : "s", gib(need), r->opt->input);
  if (use) CHECK(h5g_scratch_use(dir));
done:
  return rc;
}

/* Collective: the spilling ranks' scratch has room; with `start` (a run, not --plan) it is in
 * use and rank 0 says how many spill. */
static int start_spill(const h5g_run *r, const h5g_plan *plan, int start) {
  int rc = H5G_OK, ranks = 0, spills = plan->spills;
  char dir[4096] = "";
  CHECK(h5g_agree(r->comm, spills ? use_scratch(r, plan, start, dir, sizeof dir) : H5G_OK));
  if (!start) goto done;
  CHECK_MPI(MPI_Reduce(&spills, &ranks, 1, MPI_INT, MPI_SUM, 0, r->comm));
  char where[4200] = "";
  if (spills)
    snprintf(where, sizeof where, " (rank 0's: %.2f GiB in %s)", gib(plan->scratch_bytes), dir);
  if (r->rank == 0 && ranks && !r->opt->quiet)
    fprintf(stderr, "h5gsort: spilling: %d rank%s of %d need%s more host memory than %s may "
            "use; %s buffers are scratch files%s\n", ranks, ranks == 1 ? "" : "s", r->size,
            ranks == 1 ? "s" : "", ranks == 1 ? "it" : "they", ranks == 1 ? "its" : "their",
            where);
  if (spills && h5g_scratch_in_memory(dir) && !r->opt->quiet)
    fprintf(stderr, "h5gsort: warning: rank %d's scratch directory %s is in memory (tmpfs): "
            "spilling there saves none (--scratch DIR on disk)\n", r->rank, dir);
done:
  return rc;
}

/* The check of h5g_sizing_check; `start`: a run's, which starts the spill. */
static int check_fit(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, int start) {
  int rc = H5G_OK;
  host_need need;
  h5g_memory_limits limits;
  uint64_t share = rank_room(r, plan, &limits);
  int fits = rank_fits(r, v, plan, r->size, r->rank, plan->spills, share, &need), all_fit = 0;
  CHECK_MPI(MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, r->comm));
  if (all_fit) {
    CHECK(start_spill(r, plan, start));
    goto done;
  }
  /* the same line on every rank: the neediest rank, the tightest node, whether any spilled */
  uint64_t most[3] = {need_total(&need), UINT64_MAX - share, (uint64_t)plan->spills}, worst[3];
  CHECK(h5g_allreduce_u64(r->comm, most, worst, 3, H5G_REDUCE_MAX));
  uint64_t tightest = UINT64_MAX - worst[1];
  char fit[160];
  /* what fits in memory, with the backend's budget as it was before a spill cut it */
  uint64_t budget = r->be->mem_budget;
  if (plan->spills) r->be->mem_budget = plan->unspilled_budget;
  what_fits(r, v, plan, tightest * (uint64_t)plan->ranks_on_node, plan->ranks_on_node,
            need.base, fit, sizeof fit);
  r->be->mem_budget = budget;
  H5G_FAIL(H5G_ERR_RUNTIME, "not enough host memory: a rank needs up to %.2f GiB%s, and its "
           "node gives each of its %d rank%s %.2f GiB (%s); %s (%s)", gib(worst[0]),
           worst[2] ? " even spilling to scratch" : "", plan->ranks_on_node,
           plan->ranks_on_node == 1 ? "" : "s", gib(tightest), limits.bound, fit,
           r->opt->input);
done:
  return rc;
}

int h5g_sizing_check(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan) {
  return check_fit(r, v, plan, 1);
}

static const char *path_name(h5g_path path) {
  return path == H5G_PATH_HOST           ? "host"
         : path == H5G_PATH_DEVICE_RUNS ? "device runs"
                                        : "device resident";
}

/* The I/O line of the plan (docs/io-paths.md, "Several nodes"). */
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
  uint64_t scratch_bytes, scratch_free; /* spilled: its scratch files; free where they go */
  char scratch_dir[256];
  int use_cuda, io_threads, path, cpus, spills;
  uint64_t cpu_mask[H5G_CPUS_MASK_WORDS]; /* the CPUs it may run on */
} plan_line;

/* The cores rank 0 gets: its CPUs, or its share of the CPUs its node's ranks run on where they
 * share them (4 ranks on 2 cores: half a core each). Its node: the lines of its host name. */
static double rank_cores(const h5g_run *r, const plan_line *lines) {
  uint64_t mask[H5G_CPUS_MASK_WORDS] = {0};
  int ranks = 0, cpus = 0;
  for (int i = 0; i < r->size; i++) {
    if (strcmp(lines[i].host, lines[0].host) != 0) continue;
    ranks++;
    for (int w = 0; w < H5G_CPUS_MASK_WORDS; w++) mask[w] |= lines[i].cpu_mask[w];
  }
  for (int w = 0; w < H5G_CPUS_MASK_WORDS; w++) cpus += __builtin_popcountll(mask[w]);
  double shared = cpus > 0 ? (double)cpus / ranks : 1;
  return shared < lines[0].cpus ? shared : lines[0].cpus;
}

/* Bytes of one row of a kind the run reads or writes, and of them those in filtered storage. */
typedef struct {
  double keys_in, keys_in_filtered;     /* the keys as read */
  double carried, carried_in_filtered;  /* rows moved by source index (src/carry.c) */
  double out, out_filtered;             /* written: the keys, the carried rows, index, counts */
} row_bytes;

/* Serial (rank 0): whether INPUT's `dataset` has filters: as an output kept like it would. */
static int input_filtered(const h5g_options *opt, const char *dataset, int *filtered) {
  static const h5g_io_storage_choice keep; /* all zero: the source's storage */
  return h5g_io_inspect_storage(opt->input, dataset, &keep, 1, NULL, filtered);
}

static int rows_of_run(const h5g_run *r, const h5g_verdict *v, row_bytes *b) {
  int rc = H5G_OK, filtered = 0;
  const h5g_options *opt = r->opt;
  int whole_rows = opt->key_field || opt->nkey_columns, keys = h5g_options_key_count(opt);
  memset(b, 0, sizeof *b);
  for (int i = 0; i < (whole_rows || !v->composed ? 1 : keys); i++) {
    double width = whole_rows || !v->composed ? v->info.row_bytes : v->layout.key[i].width;
    CHECK(input_filtered(opt, opt->datasets[i], &filtered));
    b->keys_in += width;
    b->keys_in_filtered += filtered ? width : 0;
  }
  b->carried = (double)h5g_carry_row_bytes(opt, v);
  for (int i = 0; i < opt->ncarry; i++) {
    CHECK(input_filtered(opt, opt->carry[i], &filtered));
    b->carried_in_filtered += filtered ? v->carried_row_bytes[i] : 0;
  }
  if (whole_rows) b->carried_in_filtered = b->keys_in_filtered; /* the table again */
  /* a table's rows are written by the carry, the keys' otherwise */
  b->out = (whole_rows ? 0 : b->keys_in) + b->carried + (opt->index_out ? 8 : 0) +
           (opt->counts ? 8 : 0);
  b->out_filtered = v->filtered_row_bytes < b->out ? v->filtered_row_bytes : b->out;
done:
  return rc;
}

/* The time estimate of a run (rank 0's share stands for every rank's): its start, and each
 * phase's bytes at the rates above on the cores the rank gets: threaded (plain I/O, the
 * decoding, the copies) on min(I/O threads, cores), one thread (the CPU sort, the merge, the
 * encoding) on min(1, cores). */
typedef struct {
  double start, read, sort, carry, write, spill, total, cores;
} estimate;

/* `spilled`: the scratch bytes of the rank that spills the most (0: none spills); the node's
 * ranks spill to one directory, so their scratch goes through one disk. */
static void estimate_run(const h5g_run *r, const h5g_plan *plan, const h5g_verdict *v,
                         const row_bytes *b, double cores, int gpus, uint64_t spilled,
                         estimate *e) {
  double rows = (double)((v->info.n + (uint64_t)r->size - 1) / (uint64_t)r->size);
  double threads = plan->io_threads < cores ? plan->io_threads : cores;
  double one = cores < 1 ? cores : 1;
  double keys = rows * (plan->ks.width + (plan->records ? sizeof(uint64_t) : 0));
  int passes = v->composed ? v->layout.words : 1;
  e->cores = cores;
  e->start = rates.start + rates.start_per_rank * plan->ranks_on_node;
  e->read = rows * ((b->keys_in - b->keys_in_filtered) / rates.copy +
                    b->keys_in_filtered / rates.inflate) / threads;
  if (gpus) {
    e->sort = (double)v->info.n * plan->ks.width /
              (rates.gpu_node * (r->size / plan->ranks_on_node));
  } else {
    e->sort = passes * keys / (rates.sort * one);
    if (r->size > 1 || plan->nruns > 1) e->sort += passes * keys / (rates.merge * one);
  }
  /* read (not a table's rows, kept from the keys' read unless the run spills: src/read.h; the
   * carry reads them again where the keys came through HDF5's conversion, which the plan does
   * not know yet: the estimate is short there by one read of the table), moved (between the
   * ranks: as the exchange) and written by the write below */
  double read_again = (r->opt->key_field || r->opt->nkey_columns) && !spilled ? 0 : 1;
  e->carry = rows * (read_again * ((b->carried - b->carried_in_filtered) / rates.copy +
                                   b->carried_in_filtered / rates.inflate) +
                     b->carried / rates.copy) / threads;
  if (r->size > 1) e->carry += rows * b->carried / (rates.merge * one);
  e->write = rows * ((b->out - b->out_filtered) / rates.copy / threads +
                     b->out_filtered / (rates.deflate * one * (cores < 1 ? rates.deflate_shared
                                                                         : 1)));
  e->spill = (double)spilled * plan->ranks_on_node / rates.spill;
  e->total = e->start + e->read + e->sort + e->carry + e->write + e->spill;
}

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
          "  \"io_policy\": \"%s\",\n  \"streamed\": %s,\n  \"estimate_seconds\": %.3f,\n"
          "  \"per_rank\": [\n",
          fits ? "true" : "false", v->info.n, r->size, bound, disk, free_bytes,
          h5g_transport_name(r->transport), h5g_io_policy_name(plan->io_policy),
          plan->streamed ? "true" : "false", estimate);
  for (int i = 0; i < r->size; i++) {
    const plan_line *p = &lines[i];
    fprintf(f, "    {\"rank\": %d, \"host\": \"%s\", \"rows\": %" PRIu64 ", \"runs\": %" PRIu64
            ", \"path\": \"%s\", \"host_bytes\": %" PRIu64 ", \"host_available_bytes\": %" PRIu64
            ", \"device_bytes\": %" PRIu64 ", \"io_threads\": %d, \"spills\": %s", i, p->host,
            p->rows, p->runs, path_name((h5g_path)p->path), p->need, p->share,
            p->use_cuda ? p->device_budget : 0, p->io_threads, p->spills ? "true" : "false");
    if (p->spills) {
      fputs(", \"scratch_dir\": ", f);
      h5g_report_put_json_string(f, p->scratch_dir);
      fprintf(f, ", \"scratch_bytes\": %" PRIu64 ", \"scratch_free_bytes\": %" PRIu64,
              p->scratch_bytes, p->scratch_free);
    }
    fprintf(f, "}%s\n", i + 1 < r->size ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  if (fclose(f) != 0) H5G_FAIL(H5G_ERR_RUNTIME, "cannot write the report (%s)", r->opt->report);
done:
  return rc;
}

static int print_plan(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                      const h5g_extent *e, const plan_line *lines, const h5g_memory_limits *l) {
  int rc = H5G_OK;
  const h5g_options *opt = r->opt;
  row_bytes rows;
  estimate time;
  CHECK(rows_of_run(r, v, &rows));
  uint64_t disk = h5g_write_output_bytes(r, v, plan, e);
  uint64_t free_bytes = h5g_files_free_bytes(opt->output);
  int fits = 1, gpus = 0;
  printf("h5gsort plan: %s:%s, %" PRIu64 " rows of %s, %d rank%s\n", opt->input, opt->dataset,
         v->info.n, v->info.type_name, r->size, r->size == 1 ? "" : "s");
  printf("%5s  %-20s %14s %5s %-16s %11s %11s %12s %7s\n", "rank", "host", "rows", "runs", "path",
         "host GiB", "avail GiB", "device GiB", "I/O thr");
  int spilling = 0;
  uint64_t scratch = 0, scratch_free = UINT64_MAX;
  for (int i = 0; i < r->size; i++) {
    const plan_line *p = &lines[i];
    /* a node's ranks spill into one directory, each taking what a rank needs */
    uint64_t node_scratch = p->scratch_bytes * (uint64_t)plan->ranks_on_node;
    fits &= p->need <= p->share && (!p->spills || node_scratch <= p->scratch_free);
    gpus += p->use_cuda;
    spilling += p->spills;
    if (p->spills && p->scratch_bytes > scratch) scratch = p->scratch_bytes;
    if (p->spills && p->scratch_free < scratch_free) scratch_free = p->scratch_free;
    if (i < 16 || i == r->size - 1)
      printf("%5d  %-20.20s %14" PRIu64 " %5" PRIu64 " %-16s %11.2f %11.2f %12.2f %7d\n", i,
             p->host, p->rows, p->runs, path_name((h5g_path)p->path), gib(p->need), gib(p->share),
             p->use_cuda ? gib(p->device_budget) : 0.0, p->io_threads);
    else if (i == 16)
      printf("  ...\n");
  }
  estimate_run(r, plan, v, &rows, rank_cores(r, lines), gpus, scratch, &time);
  printf("memory: %s per rank (%s)\n", fits ? "fits" : "DOES NOT FIT", l->bound);
  printf("disk: output and temporary file %.2f GiB, %.2f GiB free beside %s\n", gib(disk),
         gib(free_bytes), opt->output);
  printf("exchange: %s; I/O: %s\n", h5g_transport_name(r->transport), io_text(plan->io_policy));
  if (spilling) /* rank 0's directory: the others' are in the report */
    printf("spill: %d of %d rank%s spill to scratch files, up to %.2f GiB a rank (%.2f GiB free "
           "in %s; runs above)\n", spilling, r->size, r->size == 1 ? "" : "s", gib(scratch),
           gib(scratch_free), lines[0].spills ? lines[0].scratch_dir : "their directories");
  /* one rank: its slice needs no host buffer of its size (host GiB above) */
  if (plan->streamed) {
    printf("streamed: the slice goes to the GPU and back through %d pinned slots of %.4g MiB",
           H5G_RING_SLOTS, (double)plan->slot_elems * plan->ks.width / 1048576.0);
    if (plan->records) /* --index-out */
      printf(", its source indices through as many of %.4g MiB",
             (double)plan->slot_elems * sizeof(uint64_t) / 1048576.0);
    printf("\n");
  }
  printf("estimate: %.1f s (start %.1f, read %.1f, sort %.1f, carry %.1f, write %.1f, spill "
         "%.1f; %.2g core%s a rank; rates: docs/cost-model.md)\n", time.total, time.start,
         time.read, time.sort, time.carry, time.write, time.spill, time.cores,
         time.cores == 1 ? "" : "s");
  fflush(stdout);
  if (opt->report)
    CHECK(write_plan_json(r, v, lines, l->bound, plan, disk, free_bytes, time.total, fits));
done:
  return rc;
}

int h5g_sizing_print_plan(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                          const h5g_extent *e) {
  int rc = H5G_OK;
  host_need need;
  h5g_memory_limits limits;
  plan_line mine, *lines = NULL;
  memset(&mine, 0, sizeof mine);
  rank_need(r, v, plan, r->size, r->rank, plan->spills, &need);
  h5g_memory_limits_read(r->opt->host_memory, &limits);
  mine.spills = plan->spills;
  mine.scratch_bytes = plan->scratch_bytes;
  if (plan->spills) {
    char dir[4096];
    scratch_dir_for(r, plan, plan->scratch_bytes, dir, sizeof dir);
    if (h5g_scratch_free_bytes(dir, &mine.scratch_free) != H5G_OK)
      h5g_error_clear(); /* 0 free: the check below says why */
    /* shown, cut to the line's room */
    memcpy(mine.scratch_dir, dir, sizeof mine.scratch_dir - 1);
    mine.scratch_dir[sizeof mine.scratch_dir - 1] = '\0';
  }
  gethostname(mine.host, sizeof mine.host - 1);
  mine.rows = plan->n;
  mine.runs = plan->nruns;
  mine.need = need_total(&need);
  mine.share = limits.available / (uint64_t)plan->ranks_on_node;
  mine.device_budget = r->be->mem_budget;
  mine.use_cuda = plan->use_cuda;
  mine.io_threads = plan->io_threads;
  mine.path = (int)plan->path;
  mine.cpus = plan->cpus;
  h5g_cpus_mask(mine.cpu_mask);
  if (r->rank == 0) lines = malloc((size_t)r->size * sizeof *lines);
  CHECK(h5g_agree_alloc(r->comm, r->rank != 0 || lines, (size_t)r->size * sizeof *lines));
  CHECK_MPI(MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, lines, (int)sizeof mine, MPI_BYTE, 0,
                       r->comm));
  CHECK(h5g_agree(r->comm, r->rank == 0 ? print_plan(r, v, plan, e, lines, &limits) : H5G_OK));
  CHECK(check_fit(r, v, plan, 0)); /* exit 1 when it does not fit, as the run would */
done:
  free(lines);
  return rc;
}
