/* Per-phase timings and sizes of a run, for --report FILE.json and --verbose. */
#ifndef H5G_REPORT_H
#define H5G_REPORT_H

#include <stdint.h>

#include "src/options.h"

typedef enum {
  H5G_PHASE_VALIDATE,
  H5G_PHASE_SETUP,   /* backend: GPU context */
  H5G_PHASE_CONNECT, /* exchange transport: NCCL communicator */
  H5G_PHASE_BUFFERS, /* host slice buffers: made resident, pinned */
  H5G_PHASE_READ,
  H5G_PHASE_TRANSFORM,
  H5G_PHASE_SORT,
  H5G_PHASE_SPLITTERS,
  H5G_PHASE_EXCHANGE,
  H5G_PHASE_MERGE,
  H5G_PHASE_WRITE,
  H5G_PHASE_CARRY,
  H5G_PHASE_VERIFY,
  H5G_PHASE_COUNT
} h5g_phase;

/* Where one rank ran: what a pipeline keeps as provenance, and what -v shows when a launcher
 * gave a rank fewer CPUs than its node has. */
typedef struct {
  char host[64];
  char cpu_list[96];  /* the CPUs it may run on, e.g. "0-15" */
  int cpus;           /* how many */
  int cpus_online;    /* on its node */
  int ranks_on_node;
  int io_threads;
} h5g_rank_info;

/* Start-up outside the phases (slowest rank; --report "startup_seconds", -v). */
typedef struct {
  double mpi_init;       /* main's first line to MPI_Init's return (main sets it on every rank) */
  double context;        /* the GPU context, made in the background (0: none was) */
  double context_waited; /* what of it "setup" waited for */
} h5g_startup;

/* Tear-down before the report (slowest rank; --report "teardown_seconds"), inside "write": the
 * input closed, the host buffers unpinned behind the write. */
typedef struct {
  double input_close, unpin, unpin_waited;
} h5g_teardown;

typedef struct {
  double seconds[H5G_PHASE_COUNT]; /* slowest rank's time in each phase */
  h5g_startup startup;
  h5g_teardown teardown;
  double total_seconds;
  double h2d_seconds, d2h_seconds; /* GPU copies inside read, transform, local_sort, merge, write */
  double kernel_seconds;           /* GPU time of the device-resident path's kernels */
  double waited_seconds;           /* host time blocked on the GPU */
  double hidden_seconds;           /* GPU time the host did not wait for: overlapped with I/O */
  uint64_t n;                /* keys sorted */
  uint64_t rows_written;     /* rows of each written dataset: n, or fewer with --top, --unique */
  uint64_t bytes;            /* n * element size */
  uint64_t exchanged_bytes;  /* sent to other ranks, summed over ranks */
  int spilled_ranks;         /* ranks whose buffers were scratch files (src/sizing.h) */
  uint64_t runs_per_rank;    /* sorted runs per rank (> 1: the chunked out-of-core path) */
  int ring_slots;            /* streamed: the slots of the pinned ring the slice went through
                              * (plan.streamed; 0: none) */
  uint64_t slot_bytes;       /* and each slot's bytes */
  int carried_on_gpu;        /* the carried rows were put in order on the GPU (src/carry.c) */
  int sort_passes;           /* > 1: keys of more than 16 bytes together, one pass per word */
  int ranks;
  int nodes;                 /* distinct hosts of the ranks (rank 0) */
  unsigned width;
  char type_name[48];
  unsigned float_keys;       /* bit i: key i is floating point (with type_name, once known;
                              * H5G_MAX_KEYS bits) */
  char backend[16];
  char exchange[8];          /* "mpi" or "nccl" */
  char io_policy[24];        /* rank 0's (h5g_io_policy_name) */
  char devices[512];         /* distinct device names, comma separated */
  int verified;              /* --verify ran and passed */
  char start_time[32];       /* UTC, ISO 8601 */
  h5g_rank_info *rank_info;  /* rank 0: one per rank (h5g_report_free) */
} h5g_report;

const char *h5g_phase_name(h5g_phase phase);
/* The run's start (UTC) into rep->start_time: main's first step, so that every report has it. */
void h5g_report_start(h5g_report *rep);
/* The phase under way on this rank (src/pipeline.c, h5g_step_begin): a failure report names it. */
void h5g_report_phase(h5g_phase phase);
/* Its name, "startup" before the first; async-signal-safe (src/interrupt.c). */
const char *h5g_report_phase_now(void);
/* Writes the report as JSON, with the command line, files and datasets of `opt`: the full report
 * of a run that succeeded, or (exit_status != 0, rep may be empty but for its start time) what
 * ran, the phase under way and the error. */
int h5g_report_write_json(const h5g_report *rep, const h5g_options *opt, int exit_status,
                          const char *path);
/* The report of an interrupted run, which src/interrupt.c's handler writes without the JSON
 * writer (not async-signal-safe): this text (malloced; NULL when out of memory), then the phase's
 * name, H5G_REPORT_INTERRUPTED_ERROR, the error line's message and H5G_REPORT_INTERRUPTED_END
 * (the names and the message hold nothing JSON escapes). */
char *h5g_report_interrupted_head(const h5g_report *rep, const h5g_options *opt);
#define H5G_REPORT_INTERRUPTED_ERROR "\",\n  \"error\": \""
#define H5G_REPORT_INTERRUPTED_END "\"\n}\n"
/* Ranks that may run on one CPU while their node has more CPUs than ranks (see -v). */
int h5g_report_starved_ranks(const h5g_report *rep);
/* "node1 (2 ranks), node2 (2 ranks)": the hosts in the order of their first rank (rank 0). */
void h5g_report_nodes(const h5g_report *rep, char *text, size_t len);
void h5g_report_free(h5g_report *rep);
/* `s` as a JSON string: quoted, its quotes, backslashes and control characters escaped. */
void h5g_report_put_json_string(FILE *f, const char *s);

#endif
