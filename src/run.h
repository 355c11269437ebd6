/* One h5gsort run on this rank: the state the phases share, and the phases themselves. Internal
 * to src/; src/pipeline.c drives the phases in the order of the README's "Architecture" section:
 * validate, plan, read, local sort, exact splitters, exchange, merge, write, carry, verify,
 * commit. Each phase lives in a file of its own and fills its part of the run. */
#ifndef H5G_SRC_RUN_H
#define H5G_SRC_RUN_H

#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <time.h>

#include "base/backend.h"
#include "base/host_memory.h"
#include "base/keys.h"
#include "io/h5io.h"
#include "src/keyset.h"
#include "src/options.h"
#include "src/progress.h"
#include "src/report.h"
#include "src/transport.h"

/* What rank 0 finds out before any work and every rank needs (src/validate.c). */
typedef struct {
  h5g_dataset_info info;  /* of the key, or of the composed key (src/keyset.h) */
  int composed;           /* several keys, or a column: sorted as one composed key */
  h5g_key_layout layout;  /* those keys */
  int in_place;
  unsigned long long carried_bytes; /* size of the input file when datasets are carried */
  uint64_t moved_row_bytes; /* the widest row moved by source index (src/carry.c), 0: none */
  /* the keys' and the index's output storage has filters: their size is known once written */
  int keys_filtered, index_filtered;
  char tmp_path[PATH_MAX];
  /* the input as validated: a run whose input changes before the commit fails */
  long long input_size, input_mtime_sec, input_mtime_nsec;
} h5g_verdict;

/* How the keys of this rank travel; decided once by the plan (src/plan.c). */
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

typedef struct {
  int use_cuda, device;   /* this rank's backend and GPU */
  int device_sharers;     /* ranks of this node on the same GPU */
  int ranks_on_node;
  int gpu_per_rank;       /* every rank runs the CUDA backend on a GPU of its own */
  int cpus, io_threads;   /* CPUs this rank may run on; threads for its direct file I/O */
  h5g_path path;
  int sort_is_output;     /* one rank, one run on the GPU: the sorted run comes back as the output */
  h5g_keyspec ks;
  int records;            /* values (source indices) move with the keys */
  uint64_t offset, n;     /* this rank's share [offset, offset + n) of the N elements */
  size_t nruns;           /* sorted runs per rank (the same on every rank) */
  uint64_t *run_offsets;  /* nruns + 1: the runs the slice is read and sorted in */
} h5g_plan;

/* The rows the exchange sorts and the rows this rank writes: the input's unless --top or
 * --unique keep fewer. Set from the verdict (src/validate.c), cut only by src/top.c and
 * src/unique.c. */
typedef struct {
  uint64_t total; /* elements the exchange sorts: N, fewer after h5g_unique_runs */
  /* what this rank writes: rows [out_offset, out_offset + out_n) of out_total */
  uint64_t out_offset, out_n, out_total;
} h5g_extent;

/* The host buffers (base/host_memory.h), made ready in the background while the file is read. */
/* In the order the helper thread makes them ready: the read and the sort need the first two. */
enum { H5G_BUFFER_KEYS, H5G_BUFFER_VALUES, H5G_BUFFER_SPARE, H5G_BUFFER_SPARE_VALUES,
       H5G_BUFFER_COUNT };

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
  uint64_t *counts;              /* --counts: the count of each kept key (src/unique.c) */
  int values_are_counts; /* --unique --counts: the values are the runs' group sizes (src/unique.c) */
  uint64_t *order; /* keys of several words: the source index at each position (src/passes.c) */
} h5g_data;

/* The sorted share (keys: d->keys or d->spare; values: their values, or NULL when none move) is
 * now there. The one place sorted and sorted_values change: the phases that move the share
 * (src/plan.c, src/exchange_runs.c, src/merge_runs.c, src/passes.c) call it. */
static inline void h5g_data_set_sorted(h5g_data *d, void *keys, uint64_t *values) {
  d->sorted = keys;
  d->sorted_values = values;
}
/* The host buffers that do not hold the sorted keys (values): a merge's other side, or where
 * --verify reads the output back (the plan makes a spare buffer for both). */
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
  time_t start_time;
  h5g_startup startup;      /* mpi_init comes from main, through the report */
  h5g_teardown teardown;    /* what of it comes before the report */
} h5g_metrics;

typedef struct {
  MPI_Comm comm;
  int rank, size;
  const h5g_options *opt;
  h5g_verdict verdict;
  h5g_plan plan;
  h5g_extent extent;
  h5g_data data;
  h5g_metrics metrics;
  h5g_progress progress; /* --progress, rank 0 */
  h5g_backend *be;
  h5g_cuda_warmup *warmup; /* the GPU context being made, until "setup" joins it */
  h5g_transport *transport;
  h5g_file *in_file, *out_file;
  h5g_dset *keys_in[H5G_MAX_KEYS]; /* the key dataset; composed: the keys' (src/keyset.h) */
  int tmp_created;    /* the temporary output may exist (rank 0 removes it on failure) */
  double step_start;
  int word;           /* the composed word this pass sorts (src/passes.c; 0: the last pass) */
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

/* src/validate.c */
struct stat;
void h5g_input_stamp(const struct stat *st, h5g_verdict *v);
int h5g_validate(h5g_run *r);
int h5g_share_verdict(h5g_run *r);
/* src/plan.c */
int h5g_plan_devices(h5g_run *r);
int h5g_plan_transport(h5g_run *r);
int h5g_plan_backend(h5g_run *r);
int h5g_plan_runs(h5g_run *r);
void h5g_plan_buffer_specs(const h5g_run *r, h5g_buffer_spec *specs);
int h5g_plan_buffers(h5g_run *r);
int h5g_plan_tables(h5g_run *r);
void h5g_run_free(h5g_run *r);
/* src/read.c */
int h5g_read_open_file(h5g_run *r);
int h5g_read_open_keys(h5g_run *r);
/* Collective: every run of the slice read (from_file; else the keys of word `word` are in the
 * slice buffer already: a later pass of src/passes.c); on the device paths each run goes to the
 * GPU and its sort starts as soon as it is read and the slice buffer is pinned. */
int h5g_read_runs(h5g_run *r, int word, int from_file);
int h5g_read_checksum(h5g_run *r);
/* src/local_sort.c */
int h5g_sort_loaded_run(h5g_run *r, size_t j);
/* A run can be sorted without waiting: the host buffers its copies use are pinned (ready:
 * never blocks; wait_ready: blocks until they are). */
int h5g_sort_ready(const h5g_run *r);
int h5g_sort_wait_ready(h5g_run *r);
int h5g_sort_wait_runs(h5g_run *r);
int h5g_sort_runs(h5g_run *r);
/* src/exchange_runs.c */
int h5g_exchange_runs(h5g_run *r);
/* src/top.c: --top K, the exact cut at global rank K. top_rows: the rows this rank receives
 * (its share of K; 0 without --top), which may be more than its share of N (N = 3, K = 2 on 5
 * ranks: rank 2 holds none and receives one). */
uint64_t h5g_top_rows(const h5g_run *r);
int h5g_top_cuts(h5g_run *r);
int h5g_top_keep(h5g_run *r);
/* src/unique.c: --unique, one element per distinct key */
int h5g_unique(h5g_run *r);
/* Before the exchange: each sorted run keeps the first of each group of equal keys (where the
 * runs are in host memory and the key is one word; else nothing), and the exchange's shares are
 * those of the distinct keys left. */
int h5g_unique_runs(h5g_run *r);
/* src/passes.c: keys of several composed words, one sort per word, the last word first.
 * next: before the pass of `word`, the order of the pass before followed and `word`'s keys
 * fetched in it into the slice buffer. finish: after the last pass, the sorted values become
 * source indices. word_in_order: out[i] = key `word` of source row src_index[i], i < count
 * (checksum: the sum of the rank's own keys of `word` added, unless NULL). */
int h5g_passes_next(h5g_run *r, int word);
int h5g_passes_finish(h5g_run *r);
int h5g_passes_word_in_order(h5g_run *r, int word, const uint64_t *src_index, uint64_t count,
                             void *out, uint64_t *checksum);
/* src/merge_runs.c */
int h5g_merge_local(h5g_run *r);
int h5g_merge_received(h5g_run *r);
/* Local: the sorted share is in host memory (on the resident path it comes back from the GPU
 * behind the merge; the write waits for it piece by piece, --unique and src/passes.c at once). */
int h5g_merge_wait(h5g_run *r);
/* src/write.c */
int h5g_write_prepare(h5g_run *r);
int h5g_write_open(h5g_run *r);
int h5g_write_reserve(h5g_run *r);
int h5g_write_keys(h5g_run *r);
int h5g_write_close(h5g_run *r);
int h5g_write_references(h5g_run *r);
/* What the temporary file will hold at most, as far as it is known before writing. */
unsigned long long h5g_write_output_bytes(const h5g_run *r);
/* src/sizing.c: before reading, the host memory each rank needs against what its node gives
 * it (a run that cannot fit stops, exit 1, with the rank or node count that would fit); --plan
 * prints that sizing and the plan. Collective. */
int h5g_sizing_check(h5g_run *r);
int h5g_sizing_print_plan(h5g_run *r);
int h5g_write_commit(h5g_run *r);
/* src/carry.c: every carried dataset, and with --key-field the compound table itself */
int h5g_carry_all(h5g_run *r);
/* src/verify_output.c */
int h5g_verify_output(h5g_run *r);
/* src/report.c */
int h5g_report_gather(h5g_run *r, double total_seconds, h5g_report *rep);

#endif
