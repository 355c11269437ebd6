/* A spilling run that can be resumed (issue 54 item 4): its host buffers are scratch files in a
 * directory of their own under the scratch directory, ".h5gsort-resume-<hash of OUTPUT's path>",
 * and a manifest beside them records each of three states once it is there: the rank's runs
 * sorted so far (run by run as the sort brings them back, before the exchange), its sorted runs
 * before the merge (after the sort and the exchange), and its sorted share before the write
 * (after the merge, --top/--unique and the keys' transform back). A manifest holds the input
 * (device, inode, size, modification time), the command (less --resume), the ranks, the extent,
 * where the keys lie (and the runs' offsets), and checksums of the keys and values. After a killed
 * run, the same command with --resume checks every rank's latest state that all ranks have and,
 * where all hold, goes on from it: from the write, from the merge, or from the read of the first
 * run not sorted yet (every rank from its own); anything that does not
 * match is discarded with a one-line note and the run starts over. The files go when the run
 * succeeds, and after a failure unless a state was recorded (a line then says where it is kept).
 * With --counts only the runs are recorded (the counts of the share lie in memory of their own).
 * The files have no name until the first state is recorded. A lock on each rank's files keeps two
 * runs of one OUTPUT apart; a spilling run that cannot be resumed (its slice streamed through
 * the GPU, or resident there with --counts) takes the lock too and removes an earlier run's
 * files. A resident slice records only its share, once all of it is back on the host. */
#ifndef H5G_RESUME_H
#define H5G_RESUME_H

#include <limits.h>

#include "src/run.h"

/* The states a run records, in the order it reaches them. */
typedef enum {
  H5G_RESUME_NONE,
  H5G_RESUME_AT_SORT,
  H5G_RESUME_AT_MERGE,
  H5G_RESUME_AT_WRITE,
  H5G_RESUME_STAGES
} h5g_resume_stage;

/* One recorded state of a rank. */
typedef struct {
  uint64_t buffer_elems[H5G_BUFFER_COUNT]; /* the buffers as made (a later plan may differ) */
  uint64_t file_bytes[H5G_BUFFER_COUNT];   /* their files' sizes (0: none) */
  h5g_extent extent;
  int in_spare;                  /* the keys are in the spare buffers, not the slice's */
  int values_are_counts;         /* --counts: the values are the runs' group sizes (unique.c) */
  uint64_t checksum_in;          /* of the input's keys, for --verify */
  uint64_t keys_sum, values_sum; /* of the keys recorded (and their values) */
  /* AT_SORT: the first nruns of the slice's runs, sorted (run_offsets: the plan's); AT_MERGE: the
   * runs [run_offsets[j], run_offsets[j + 1]) of the keys recorded; AT_WRITE: the share's out_n
   * keys (nruns 0) */
  uint64_t nruns, *run_offsets;
} h5g_resume_kept;

/* What a recorded state must match, besides its extent and checksums. */
typedef struct {
  uint64_t command, device, inode, n, offset;
  long long size, mtime_sec, mtime_nsec;
  int ranks, rank, width, records;
} h5g_resume_identity;

typedef struct {
  int eligible;               /* this run's buffers are its files here and it records its states */
  unsigned records;           /* the stages (bits) it records: not the share with --counts */
  int opened;                 /* an earlier run's files taken or removed (spilling ranks) */
  h5g_resume_stage resuming;  /* the state every rank goes on from (NONE: from the start) */
  h5g_resume_stage recorded;  /* the latest state of this run every rank holds (NONE: none) */
  unsigned usable;            /* the stages (bits) whose manifests match on every rank */
  int lock_fd;                /* held on this rank's files (-1: none) */
  char dir[PATH_MAX];
  char files[H5G_BUFFER_COUNT][PATH_MAX + 64];
  char manifests[H5G_RESUME_STAGES][PATH_MAX + 64]; /* of each stage ([NONE]: unused) */
  char manifest_new[PATH_MAX + 80], lock[PATH_MAX + 64];
  const char *removable[H5G_BUFFER_COUNT + 6]; /* this rank's files, for an interrupt */
  char kept_line[H5G_RESUME_STAGES][PATH_MAX + 160]; /* where a recorded state is kept */
  h5g_resume_identity id;
  h5g_resume_kept kept[H5G_RESUME_STAGES]; /* the manifests read, when resuming */
  /* AT_SORT: the runs recorded so far and their hashes (keys, values), the next record's start */
  size_t sorted_runs;
  uint64_t sorted_sums[2];
} h5g_resume;

/* The bytes the files an earlier run of this OUTPUT kept in `scratch` take: the room a run there
 * would free by going on from them or removing them. */
uint64_t h5g_resume_kept_bytes(const h5g_options *opt, const char *scratch);
/* Collective, after the spill is decided and before the buffers are made: whether this run can
 * be resumed; where any rank spills, each spilling rank's files locked, and with --resume the
 * ranks agree which states every one has a manifest that matches (none, or a run that cannot be
 * resumed: what an earlier run left is removed, with a note). */
int h5g_resume_open(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, h5g_resume *res);
/* The buffers' files (specs of h5g_plan_buffer_specs), reused when resuming, and then of the
 * sizes they were made with. */
void h5g_resume_name_buffers(const h5g_resume *res, h5g_buffer_spec *specs);
/* Collective, resuming, the buffers made: every rank's latest common state checked against its
 * manifest (the share, then the runs); where all hold, the extent, the sorted keys and the
 * input's checksum are the recorded ones (resuming says which state: the runs' offsets are in
 * kept[H5G_RESUME_AT_MERGE]), else the run starts over (resuming NONE, a note). */
int h5g_resume_restore(h5g_run *r, const h5g_plan *plan, h5g_resume *res, h5g_data *d,
                       h5g_extent *e);
/* Local: the rank's state `stage` is written down: AT_MERGE, the nruns sorted runs of d->sorted
 * at `run_offsets` (keys as the sort has them); AT_WRITE, the sorted share (keys in file order).
 * Nothing where the run goes on from that state or a later one. h5g_resume_recorded, once every
 * rank has (agreed), makes it the run's: kept on a failure or an interrupt. */
int h5g_resume_record(h5g_run *r, const h5g_plan *plan, h5g_resume *res, const h5g_data *d,
                      const h5g_extent *e, h5g_resume_stage stage, const uint64_t *run_offsets,
                      size_t nruns);
/* Local, AT_SORT: the slice's runs [0, upto) are sorted in the slice buffer (keys as the sort
 * has them), the input's checksum of their keys as read `checksum_in`; only the runs not
 * recorded before are hashed. Made the run's at once (each rank goes on from its own runs). */
int h5g_resume_record_sorted(const h5g_plan *plan, h5g_resume *res, const h5g_data *d,
                             const h5g_extent *e, size_t upto, uint64_t checksum_in);
void h5g_resume_recorded(h5g_resume *res, h5g_resume_stage stage);
/* Local: the runs as sorted are about to be written over (by a packed exchange's runs received
 * into the slice buffer, or a merge): their record goes (with it the files, on a failure or an
 * interrupt, unless a later state is recorded). */
void h5g_resume_drop_sorted(h5g_resume *res);
/* Local, at the end of the run: its files removed when it succeeded or recorded nothing, else
 * kept (rank 0 says where and how to go on). */
void h5g_resume_close(const h5g_run *r, h5g_resume *res, int succeeded);

#endif
