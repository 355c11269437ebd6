/* A spilling run that can be resumed (issue 54 item 4): its host buffers are named files in a
 * directory of their own under the scratch directory, ".h5gsort-resume-<hash of OUTPUT's path>",
 * and once the rank's sorted share is there (after the sort, the exchange, the merge and the
 * keys' transform back, before the write), a manifest beside them records it: the input (device,
 * inode, size, modification time), the command (less --resume), the ranks, the share's extent and
 * where it lies, and checksums of its keys and values. After a killed run, the same command with
 * --resume checks every rank's manifest and share and, where all hold, goes on from the write;
 * anything that does not match is discarded with a one-line note and the run starts over.
 * The files go when the run succeeds, and after a failure unless a share was recorded (a line
 * then says where it is kept). A lock on each rank's files keeps two runs of one OUTPUT apart.
 * Built for the CPU backend's path; a GPU's run and --counts take no checkpoint yet. */
#ifndef H5G_RESUME_H
#define H5G_RESUME_H

#include <limits.h>

#include "src/run.h"

typedef struct {
  uint64_t buffer_elems[H5G_BUFFER_COUNT]; /* the buffers as made (a later plan may differ) */
  uint64_t file_bytes[H5G_BUFFER_COUNT];   /* their files' sizes (0: none) */
  h5g_extent extent;
  int sorted_in_spare;          /* the share is in the spare buffers, not the slice's */
  uint64_t checksum_in;         /* of the input's keys, for --verify */
  uint64_t keys_sum, values_sum; /* of the share */
} h5g_resume_share;

/* What a recorded share must match, besides its extent and checksums. */
typedef struct {
  uint64_t command, device, inode, n, offset;
  long long size, mtime_sec, mtime_nsec;
  int ranks, rank, width, records;
} h5g_resume_identity;

typedef struct {
  int eligible;     /* this run's buffers are named files and it records its share */
  int resuming;     /* every rank goes on from its recorded share */
  int recorded;     /* a share of this run is recorded (written here, or gone on from) */
  int lock_fd;      /* held on this rank's files (-1: none) */
  char dir[PATH_MAX];
  char files[H5G_BUFFER_COUNT][PATH_MAX + 64];
  char manifest[PATH_MAX + 64], manifest_new[PATH_MAX + 80], lock[PATH_MAX + 64];
  const char *removable[H5G_BUFFER_COUNT + 4]; /* this rank's files, for an interrupt */
  char kept_line[PATH_MAX + 160];              /* where a recorded share is kept */
  h5g_resume_identity id;
  h5g_resume_share share; /* the recorded one, when resuming */
} h5g_resume;

/* The bytes the files an earlier run of this OUTPUT kept in `scratch` take: the room a run there
 * would free by going on from them or removing them. */
uint64_t h5g_resume_kept_bytes(const h5g_options *opt, const char *scratch);
/* Collective, after the spill is decided and before the buffers are made: whether this run can
 * be resumed; if so, this rank's files locked, and with --resume the ranks agree whether every
 * one has a manifest that matches (else what an earlier run left is removed, with a note). */
int h5g_resume_open(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, h5g_resume *res);
/* The buffers' files (specs of h5g_plan_buffer_specs), reused when resuming, and then of the
 * sizes they were made with. */
void h5g_resume_name_buffers(const h5g_resume *res, h5g_buffer_spec *specs);
/* Collective, resuming, the buffers made: every rank's share checked against its manifest; where
 * all hold, the extent, the share and the input's checksum are the recorded ones (resuming
 * stays set), else the run starts over (resuming cleared, a note). */
int h5g_resume_restore(h5g_run *r, const h5g_plan *plan, h5g_resume *res, h5g_data *d,
                       h5g_extent *e);
/* Local: the rank's sorted share (keys in file order) is written down; h5g_resume_recorded, once
 * every rank has (agreed), makes it the run's: kept on a failure or an interrupt. */
int h5g_resume_record(h5g_run *r, const h5g_plan *plan, h5g_resume *res, const h5g_data *d,
                      const h5g_extent *e);
void h5g_resume_recorded(h5g_resume *res);
/* Local, at the end of the run: its files removed when it succeeded or recorded nothing, else
 * kept (rank 0 says where and how to go on). */
void h5g_resume_close(const h5g_run *r, h5g_resume *res, int succeeded);

#endif
