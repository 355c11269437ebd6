/* One h5gsort run on this rank: its context (h5g_run) and the types of the state the phases
 * share. Internal to src/; src/pipeline.c drives the phases in the order of docs/design-notes.md,
 * "Architecture": validate, plan, read, local sort, exact splitters, exchange, merge,
 * write, carry, verify, commit. Each phase lives in a file of its own, whose header (src/plan.h,
 * src/read.h, ...) says what it takes and what it changes. */
#ifndef H5G_SRC_RUN_H
#define H5G_SRC_RUN_H

#include <limits.h>
#include <mpi.h>
#include <stdint.h>

#include "base/backend.h"
#include "kernels/cuda_backend.h"
#include "base/host_memory.h"
#include "base/keys.h"
#include "io/h5io.h"
#include "src/keyset.h"
#include "src/options.h"
#include "src/progress.h"
#include "src/report.h"
#include "src/transport.h"

/* What rank 0 finds out before any work and every rank needs: made by src/validate.c, const
 * for every other phase. */
typedef struct {
  h5g_dataset_info info;  /* of the key, or of the composed key (src/keyset.h) */
  int composed;           /* several keys, or a column: sorted as one composed key */
  h5g_key_layout layout;  /* those keys */
  int in_place;
  unsigned long long carried_bytes; /* size of the input file when datasets are carried */
  uint64_t moved_row_bytes; /* the widest row moved by source index (src/carry.c), 0: none */
  uint64_t carried_row_bytes[H5G_MAX_CARRY]; /* each carried dataset's row */
  /* the keys' and the index's output storage has filters: their size is known once written */
  int keys_filtered, index_filtered;
  /* bytes of one row of every filtered output together: with several ranks each keeps its
   * share of them encoded until rank 0 stores them (io/gathered.h) */
  uint64_t filtered_row_bytes;
  char tmp_path[PATH_MAX];
  /* the input as validated: a run whose input changes before the commit fails */
  long long input_size, input_mtime_sec, input_mtime_nsec;
} h5g_verdict;

/* How the keys of this rank travel; decided once by the plan (src/plan.h). */
typedef enum {
  /* Sorted and merged by host calls of the backend (the CPU backend). */
  H5G_PATH_HOST,
  /* Each run goes to the GPU while the file is read and is sorted there; the runs come back
   * (ordered bits) for the splitters, the host exchange and the merge calls. */
  H5G_PATH_DEVICE_RUNS,
  /* One run per rank that stays on the GPU through the exchange (NCCL between the GPUs, or no
   * exchange with one rank) and the merge; the output comes back while it is written. */
  H5G_PATH_DEVICE_RESIDENT
} h5g_path;

/* Slots of the ring a streamed run goes through: one being read or written, the others' copies
 * under way (bench/e2e.sh, bench_staged_io: 4 slots of 128 MiB). */
enum { H5G_RING_SLOTS = 4 };

/* The plan: made by src/plan.c, const for every other phase. */
typedef struct {
  int use_cuda, device;   /* this rank's backend and GPU */
  int device_sharers;     /* ranks of this node on the same GPU */
  int local_rank, ranks_on_node; /* this rank's place among the node's */
  int gpu_per_rank;       /* every rank runs the CUDA backend on a GPU of its own */
  int cpus, io_threads;   /* CPUs this rank may run on; threads for its direct file I/O */
  h5g_io_policy io_policy;
  h5g_path path;
  int sort_is_output;     /* one rank, one run on the GPU: the sorted run comes back as output */
  /* The sorted run is the output and only its keys move (and an unfiltered --index-out's
   * source indices, through a ring of their own): the slice goes up and comes back
   * through a ring of pinned slots (src/read.c, src/write.c) instead of a slice-sized host
   * buffer, which costs its making resident, pinning and unpinning (bench_staged_io:
   * bench/RESULTS.md, "Streamed runs: a ring of pinned slots"). */
  int streamed;
  uint64_t slot_elems;    /* streamed: keys a slot holds (a pin piece); the ring holds
                           * H5G_RING_SLOTS of them */
  h5g_keyspec ks;
  int records;            /* values (source indices) move with the keys */
  /* The share needs more host memory than the rank may use: its large buffers are scratch files
   * (base/scratch_memory.h), of scratch_bytes in all, unpinned, and on the CPU backend its runs
   * are cut to what fits beside the rest (src/sizing.c, h5g_sizing_spill). */
  int spills;
  uint64_t scratch_bytes;
  uint64_t unspilled_budget; /* the backend's budget before a spill cut it: what fits in memory */
  uint64_t offset, n;     /* this rank's share [offset, offset + n) of the N elements */
  size_t nruns;           /* sorted runs per rank (the same on every rank) */
  const uint64_t *run_offsets; /* nruns + 1: the runs the slice is read and sorted in */
} h5g_plan;

/* plan.streamed: the keys the ring holds, the slot that holds keys from `first` on, and how many
 * of the n keys it holds then (none from n on). */
static inline uint64_t h5g_ring_elems(const h5g_plan *plan) {
  return H5G_RING_SLOTS * plan->slot_elems;
}
static inline uint64_t h5g_slot_keys(const h5g_plan *plan, uint64_t first, uint64_t n) {
  return first >= n ? 0 : n - first < plan->slot_elems ? n - first : plan->slot_elems;
}
static inline char *h5g_ring_slot(const h5g_plan *plan, void *ring, uint64_t first) {
  return (char *)ring + first % h5g_ring_elems(plan) * plan->ks.width;
}

/* The rows the exchange sorts and the rows this rank writes: the input's unless --top or
 * --unique keep fewer. Set from the verdict (src/validate.c), cut only by src/top.c and
 * src/unique.c. */
typedef struct {
  uint64_t total; /* elements the exchange sorts: N, fewer after h5g_unique_runs */
  /* what this rank writes: rows [out_offset, out_offset + out_n) of out_total */
  uint64_t out_offset, out_n, out_total;
} h5g_extent;

/* The host buffers (base/host_memory.h), made ready in the background while the file is read,
 * in the order the helper thread makes them ready: the read and the sort need the first two. */
enum { H5G_BUFFER_KEYS, H5G_BUFFER_VALUES, H5G_BUFFER_SPARE, H5G_BUFFER_SPARE_VALUES,
       H5G_BUFFER_COUNT };

/* The keys and what goes with them: buffers and tables made by src/plan.c, filled and moved by
 * the phases that take an h5g_data * (the sorted share only through h5g_data_set_sorted). */
typedef struct {
  h5g_buffer_spec specs[H5G_BUFFER_COUNT];
  h5g_buffer_set *set;
  void *keys, *spare;           /* n keys each: the slice as read; the other side of a merge */
  uint64_t *values, *spare_values; /* their values, when records move */
  void *sorted;                 /* keys or spare: where the rank's sorted share is now */
  uint64_t *sorted_values;
  /* nruns + 1: the sorted runs in `keys`, the plan's until h5g_unique_runs packs them */
  uint64_t *runs;
  uint64_t *cuts, *recv_offsets; /* exact cuts of the runs; the received runs */
  uint64_t *run_checksums; /* nruns + 1: --verify's checksum of the keys of runs [0, j) as read */
  uint64_t *counts;              /* --counts: the count of each kept key (src/unique.c) */
  int values_are_counts; /* --unique --counts: the values are the runs' group sizes (unique.c) */
  /* the resident path's sorted share is all back in its host buffers (src/pipeline.c): waited
   * for before a record to resume from, or restored by a resume */
  int share_on_host;
  uint64_t *order; /* keys of several words: the source index at each position (src/passes.c) */
  /* A table's raw rows as read for their keys, kept for the carry in a buffer of
   * table_rows_capacity bytes (src/read.h; NULL on a rank without rows) until it is done;
   * table_row_bytes, a row's, 0 where they are not kept, is the same on every rank */
  void *table_rows;
  size_t table_rows_capacity, table_row_bytes;
  /* where the carry moves them on the GPU (h5g_carry_gpu_planned): made resident and pinned in
   * the background by this set (of table_spec), NULL otherwise */
  h5g_buffer_spec table_spec;
  h5g_buffer_set *table_set;
} h5g_data;

/* The sorted share (keys: d->keys or d->spare; values: their values, or NULL when none move) is
 * now there. The one place sorted and sorted_values change: the phases that move the share
 * (src/plan.c, src/exchange_runs.c, src/merge_runs.c, src/passes.c) call it. */
static inline void h5g_data_set_sorted(h5g_data *d, void *keys, uint64_t *values) {
  d->sorted = keys;
  d->sorted_values = values;
}
/* The host buffers that do not hold the sorted keys (values): a merge's other side. */
static inline void *h5g_data_spare_keys(const h5g_data *d) {
  return d->sorted == d->keys ? d->spare : d->keys;
}
static inline uint64_t *h5g_data_spare_values(const h5g_data *d) {
  return d->sorted_values == d->values ? d->spare_values : d->values;
}

typedef struct {
  double seconds[H5G_PHASE_COUNT];
  uint64_t checksum_in;     /* of the keys as read, for --verify (summed over ranks) */
  uint64_t exchanged_bytes; /* sent to other ranks (every pass) */
  h5g_startup startup;      /* mpi_init comes from main, through the report */
  h5g_teardown teardown;    /* what of it comes before the report */
  int carried_on_gpu;       /* the carry put its rows in order on the GPU (src/carry.c) */
} h5g_metrics;

/* The context of one run on this rank: what every phase may use, and only that. The state the
 * phases make (verdict, plan, extent, data) is not here: src/pipeline.c holds it and hands each
 * phase the parts it reads (const) and the parts it changes, as the phase's header says. */
typedef struct {
  MPI_Comm comm;
  int rank, size;
  const h5g_options *opt;
  h5g_metrics metrics;
  h5g_progress progress; /* --progress, rank 0 */
  uint64_t phase_bytes[H5G_PHASE_COUNT]; /* of the whole job, for --progress (0: none to tell) */
  h5g_backend *be;         /* made by src/plan.c */
  h5g_cuda_warmup *warmup; /* the GPU context being made, until "setup" joins it */
  h5g_transport *transport; /* opened by src/plan.c */
  h5g_file *in_file, *out_file; /* opened by src/read.c and src/write.c */
  h5g_dset *keys_in[H5G_MAX_KEYS]; /* the key dataset; composed: the keys' (src/keyset.h) */
  int tmp_created;    /* the temporary output may exist (rank 0 removes it on failure) */
  double step_start;
} h5g_run;

/* Test hooks (src/faults.c): H5GSORT_TEST_KILL=<point>[:<rank>] and H5GSORT_TEST_SLEEP. */
void h5g_fault_point(const h5g_run *r, const char *point);

/* One step of `phase` on every rank (src/pipeline.c): announced (--progress, fault hooks),
 * timed, and its status agreed. A call may fail on one rank only where it makes no collective
 * call after the failure: the agreement that ends the step is where the other ranks meet it. */
void h5g_step_begin(h5g_run *r, h5g_phase phase);
int h5g_step_end(h5g_run *r, h5g_phase phase, int status);
#define STEP(r, phase, call)                                                                      \
  do {                                                                                            \
    h5g_step_begin((r), (phase));                                                                 \
    CHECK(h5g_step_end((r), (phase), (call)));                                                    \
  } while (0)

#endif
