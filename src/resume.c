#define _GNU_SOURCE
#include "src/resume.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/parallel.h"
#include "base/scratch_memory.h"
#include "io/h5io.h"
#include "mpi/agree.h"
#include "src/interrupt.h"

enum { MANIFEST_VERSION = 4 };

/* FNV-1a, 64 bits: names the directory and stands for the command in the manifest. */
static uint64_t fnv(uint64_t h, const void *bytes, size_t n) {
  const unsigned char *p = bytes;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
static const uint64_t FNV_BASIS = 14695981039346656037ull;

/* The command as given, less the program's path and --resume (the same command resumes). */
static uint64_t command_hash(const h5g_options *opt) {
  uint64_t h = FNV_BASIS;
  for (int i = 1; opt->argv[0] && opt->argv[i]; i++)
    if (strcmp(opt->argv[i], "--resume") != 0) h = fnv(h, opt->argv[i], strlen(opt->argv[i]) + 1);
  return h;
}

static int identity_of(const h5g_run *r, const h5g_verdict *v, const h5g_plan *plan,
                       h5g_resume_identity *id) {
  int rc = H5G_OK;
  struct stat st;
  if (stat(r->opt->input, &st) != 0)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot stat %s: %s", r->opt->input, strerror(errno));
  *id = (h5g_resume_identity){.command = command_hash(r->opt), .device = (uint64_t)st.st_dev,
                   .inode = (uint64_t)st.st_ino, .n = plan->n, .offset = plan->offset,
                   .size = v->input_size, .mtime_sec = v->input_mtime_sec,
                   .mtime_nsec = v->input_mtime_nsec, .ranks = r->size, .rank = r->rank,
                   .width = (int)plan->ks.width, .records = plan->records};
done:
  return rc;
}

/* Written whole at `tmp`, then named `path`. */
static int write_manifest(const char *path, const char *tmp, const h5g_resume_identity *id,
                          h5g_resume_stage stage, const h5g_resume_kept *s) {
  int rc = H5G_OK;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  int error = errno;
  if (!f && fd >= 0) close(fd);
  if (!f) H5G_FAIL(H5G_ERR_RUNTIME, "cannot write %s: %s", tmp, strerror(error));
  fprintf(f, "buffers");
  for (int i = 0; i < H5G_BUFFER_COUNT; i++)
    fprintf(f, " %" PRIu64 " %" PRIu64, s->buffer_elems[i], s->file_bytes[i]);
  fprintf(f, "\nh5gsort-resume %d\nstage %d\ncommand %" PRIu64 "\ninput %" PRIu64 " %" PRIu64
          " %lld %lld %lld\nranks %d %d\nshare %" PRIu64 " %" PRIu64 " %d %d\n"
          "extent %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\nin_spare %d %d\n"
          "checksums %" PRIu64 " %" PRIu64 " %" PRIu64 "\nruns %" PRIu64,
          MANIFEST_VERSION, (int)stage, id->command, id->device, id->inode, id->size,
          id->mtime_sec, id->mtime_nsec, id->ranks, id->rank, id->n, id->offset, id->width,
          id->records, s->extent.total, s->extent.out_offset, s->extent.out_n,
          s->extent.out_total, s->in_spare, s->values_are_counts, s->checksum_in, s->keys_sum,
          s->values_sum, s->nruns);
  for (uint64_t j = 0; s->nruns && j <= s->nruns; j++) fprintf(f, " %" PRIu64, s->run_offsets[j]);
  fputc('\n', f);
  /* written whole before it is named: a kill leaves the old name or the new whole */
  int failed = ferror(f) | (fclose(f) != 0);
  if (failed || rename(tmp, path) != 0) {
    error = errno;
    unlink(tmp);
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot write %s: %s", path, strerror(error));
  }
done:
  return rc;
}

/* The buffers' files (none for a buffer of no bytes) of the sizes recorded: a truncated one is
 * not mapped (its end would be a SIGBUS). */
static int files_as_recorded(const char (*files)[PATH_MAX + 64], const h5g_resume_kept *s) {
  struct stat st;
  for (int i = 0; i < H5G_BUFFER_COUNT; i++) {
    int present = stat(files[i], &st) == 0;
    if (s->file_bytes[i] ? !present || (uint64_t)st.st_size != s->file_bytes[i] : present)
      return 0;
  }
  return 1;
}

/* The recorded runs' offsets (nruns + 1 of them, read from f), rising from 0 to what the buffer
 * holding them has room for. */
static int read_run_offsets(FILE *f, h5g_resume_kept *s) {
  uint64_t room = s->buffer_elems[s->in_spare ? H5G_BUFFER_SPARE : H5G_BUFFER_KEYS];
  if (s->nruns == 0) return 1;
  if (s->nruns >= UINT64_C(1) << 32 || !(s->run_offsets = malloc((s->nruns + 1) * sizeof(uint64_t))))
    return 0;
  for (uint64_t j = 0; j <= s->nruns; j++)
    if (fscanf(f, " %" SCNu64, &s->run_offsets[j]) != 1 ||
        (j ? s->run_offsets[j] < s->run_offsets[j - 1] : s->run_offsets[0] != 0))
      return 0;
  return s->run_offsets[s->nruns] <= room;
}

/* 1 when `path` holds a manifest of `want`'s run at `stage` (in *s); 0 with the reason why not. */
static int read_manifest(const char *path, const char (*files)[PATH_MAX + 64],
                         const h5g_resume_identity *want, h5g_resume_stage stage,
                         h5g_resume_kept *s, const char **why) {
  h5g_resume_identity got = {0};
  int version = 0, got_stage = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    *why = "no record";
    return 0;
  }
  int fields = fscanf(f, "buffers");
  for (int i = 0; i < H5G_BUFFER_COUNT; i++)
    fields += fscanf(f, " %" SCNu64 " %" SCNu64, &s->buffer_elems[i], &s->file_bytes[i]);
  fields += fscanf(f, "\nh5gsort-resume %d\nstage %d\ncommand %" SCNu64 "\ninput %" SCNu64
                      " %" SCNu64 " %lld %lld %lld\nranks %d %d\nshare %" SCNu64 " %" SCNu64
                      " %d %d\nextent %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                      "\nin_spare %d %d\nchecksums %" SCNu64 " %" SCNu64 " %" SCNu64
                      "\nruns %" SCNu64,
                      &version, &got_stage, &got.command, &got.device, &got.inode, &got.size,
                      &got.mtime_sec, &got.mtime_nsec, &got.ranks, &got.rank, &got.n, &got.offset,
                      &got.width, &got.records, &s->extent.total, &s->extent.out_offset,
                      &s->extent.out_n, &s->extent.out_total, &s->in_spare,
                      &s->values_are_counts, &s->checksum_in,
                      &s->keys_sum, &s->values_sum, &s->nruns);
  int offsets_hold = fields == 2 * H5G_BUFFER_COUNT + 24 && read_run_offsets(f, s);
  fclose(f);
  if (!offsets_hold || version != MANIFEST_VERSION || got_stage != (int)stage ||
      (stage == H5G_RESUME_AT_WRITE) == (s->nruns > 0))
    *why = "its record cannot be read";
  else if (got.command != want->command) *why = "it was made by another command";
  else if (got.device != want->device || got.inode != want->inode || got.size != want->size ||
           got.mtime_sec != want->mtime_sec || got.mtime_nsec != want->mtime_nsec)
    *why = "INPUT has changed since";
  else if (got.ranks != want->ranks || got.rank != want->rank)
    *why = "it was made on another number of ranks";
  else if (got.n != want->n || got.offset != want->offset || got.width != want->width ||
           got.records != want->records)
    *why = "its slice is not this run's";
  else if (s->extent.out_offset + s->extent.out_n > s->extent.out_total)
    *why = "its record is inconsistent";
  else if (!files_as_recorded(files, s))
    *why = "its files have changed since";
  else return 1;
  free(s->run_offsets);
  s->run_offsets = NULL;
  return 0;
}

/* A rank's files in the directory, of these kinds: the buffers' from FILE_BUFFERS on, the lock
 * last. */
static const char *const FILE_KINDS[] = {"sorted", "runs", "share", "manifest.new", "b0", "b1",
                                         "b2", "b3", "lock"};
enum { FILE_SORTED, FILE_RUNS, FILE_SHARE, FILE_MANIFEST_NEW, FILE_BUFFERS,
       FILE_LOCK = FILE_BUFFERS + H5G_BUFFER_COUNT,
       FILE_KIND_COUNT };
_Static_assert(sizeof FILE_KINDS / sizeof FILE_KINDS[0] == FILE_KIND_COUNT, "a name per kind");

static void rank_file(const char *dir, int rank, int kind, char *path, size_t len) {
  snprintf(path, len, "%s/r%d.%s", dir, rank, FILE_KINDS[kind]);
}

/* Removes this rank's files (not the lock, last of them: the caller holds it). */
static void remove_files(const h5g_resume *res) {
  for (int i = 0; i < FILE_LOCK; i++) unlink(res->removable[i]);
}

/* Files in the directory whose lock no live run holds (every rank of this one holds its own by
 * now): an earlier run's on more ranks, or, in a node's own scratch, of ranks now elsewhere.
 * Counted as room (h5g_resume_kept_bytes); removed by every spilling rank, and by every rank of
 * a run where none spills (rank -1: none is its own). Not `rank`'s own: on NFS flock is a
 * byte-range lock of the process, which its own second lock does not meet. 1 where a rank's
 * files were removed. */
static int remove_unheld_ranks(const h5g_resume *res, int rank) {
  char path[PATH_MAX + 64];
  int removed = 0;
  DIR *d = opendir(res->dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    int k = -1, end = 0;
    if (sscanf(e->d_name, "r%d.lock%n", &k, &end) != 1 || e->d_name[end] || k < 0 || k == rank)
      continue;
    rank_file(res->dir, k, FILE_LOCK, path, sizeof path);
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    int unheld = flock(fd, LOCK_EX | LOCK_NB) == 0;
    for (int kind = 0; unheld && kind < FILE_KIND_COUNT; kind++) {
      rank_file(res->dir, k, kind, path, sizeof path);
      removed |= unlink(path) == 0 && kind != FILE_LOCK;
    }
    close(fd);
  }
  if (d) closedir(d);
  return removed;
}

/* OUTPUT's directory under `scratch` (0: the path would be too long). */
static int resume_dir(const h5g_options *opt, const char *scratch, char *dir, size_t len) {
  char output[PATH_MAX * 2], cwd[PATH_MAX];
  if (opt->output[0] == '/' || !getcwd(cwd, sizeof cwd))
    snprintf(output, sizeof output, "%s", opt->output);
  else
    snprintf(output, sizeof output, "%s/%s", cwd, opt->output);
  uint64_t h = fnv(FNV_BASIS, output, strlen(output));
  return (size_t)snprintf(dir, len, "%s/.h5gsort-resume-%016" PRIx64, scratch, h) < len;
}

/* A run where no rank spills: an earlier spilling run's files of this OUTPUT, where it kept them
 * (--scratch; else $TMPDIR or OUTPUT's directory: src/sizing.c), removed unless a live run holds
 * them; 1 where some were. */
static int remove_earlier(const h5g_run *r, h5g_resume *res) {
  const char *tmp = getenv("TMPDIR");
  char beside[4096];
  h5g_files_directory_of(r->opt->output, beside, sizeof beside);
  const char *places[2] = {r->opt->scratch ? r->opt->scratch : tmp && *tmp ? tmp : NULL,
                           r->opt->scratch ? NULL : beside};
  int removed = 0;
  struct stat st;
  for (int i = 0; i < 2; i++) {
    if (!places[i] || !resume_dir(r->opt, places[i], res->dir, sizeof res->dir)) continue;
    /* only this user's own directory (lock_files' rule) */
    if (lstat(res->dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077))
      continue;
    removed |= remove_unheld_ranks(res, -1);
    rmdir(res->dir); /* the last rank of its node to leave it */
  }
  res->dir[0] = '\0';
  return removed;
}

uint64_t h5g_resume_kept_bytes(const h5g_options *opt, const char *scratch) {
  char dir[PATH_MAX], path[PATH_MAX + 300];
  uint64_t bytes = 0;
  struct stat st;
  if (!resume_dir(opt, scratch, dir, sizeof dir)) return 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) bytes += (uint64_t)st.st_blocks * 512;
  }
  if (d) closedir(d);
  return bytes;
}

/* The directory, this rank's file names and its lock. */
static int lock_files(const h5g_run *r, h5g_resume *res) {
  int rc = H5G_OK;
  if (!resume_dir(r->opt, h5g_scratch_dir(), res->dir, sizeof res->dir))
    H5G_FAIL(H5G_ERR_USAGE, "scratch directory path too long (%s)", h5g_scratch_dir());
  for (int i = 0; i < H5G_BUFFER_COUNT; i++)
    rank_file(res->dir, r->rank, FILE_BUFFERS + i, res->files[i], sizeof res->files[i]);
  rank_file(res->dir, r->rank, FILE_SORTED, res->manifests[H5G_RESUME_AT_SORT],
            sizeof res->manifests[0]);
  rank_file(res->dir, r->rank, FILE_RUNS, res->manifests[H5G_RESUME_AT_MERGE],
            sizeof res->manifests[0]);
  rank_file(res->dir, r->rank, FILE_SHARE, res->manifests[H5G_RESUME_AT_WRITE],
            sizeof res->manifests[0]);
  rank_file(res->dir, r->rank, FILE_MANIFEST_NEW, res->manifest_new, sizeof res->manifest_new);
  rank_file(res->dir, r->rank, FILE_LOCK, res->lock, sizeof res->lock);
  if (mkdir(res->dir, 0700) != 0 && errno != EEXIST)
    H5G_FAIL(H5G_ERR_RUNTIME, "cannot make the scratch directory %s: %s", res->dir,
             strerror(errno));
  /* its name is known to all: one another user made (in a shared /tmp) is not used */
  struct stat dir, held, named;
  if (lstat(res->dir, &dir) != 0 || !S_ISDIR(dir.st_mode) || dir.st_uid != geteuid() ||
      (dir.st_mode & 077))
    H5G_FAIL(H5G_ERR_RUNTIME, "the scratch directory %s is not this user's alone (a directory "
             "of mode 0700); remove it, or give --scratch elsewhere", res->dir);
  for (int tries = 0;; tries++) {
    res->lock_fd = open(res->lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (res->lock_fd < 0)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot make %s: %s", res->lock, strerror(errno));
    if (flock(res->lock_fd, LOCK_EX | LOCK_NB) != 0) {
      int busy = errno == EWOULDBLOCK;
      close(res->lock_fd);
      res->lock_fd = -1;
      if (busy)
        H5G_FAIL(H5G_ERR_RUNTIME, "another h5gsort run of this OUTPUT is under way (its scratch "
                 "%s is locked) (%s)", res->dir, r->opt->output);
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot lock %s: %s", res->lock, strerror(errno));
    }
    /* the lock of a run that removed the file meanwhile is no lock: take the new file's */
    if (fstat(res->lock_fd, &held) == 0 && stat(res->lock, &named) == 0 &&
        held.st_ino == named.st_ino && held.st_dev == named.st_dev)
      break;
    close(res->lock_fd);
    res->lock_fd = -1;
    if (tries == 8)
      H5G_FAIL(H5G_ERR_RUNTIME, "cannot lock %s: it keeps being replaced", res->lock);
  }
  /* in FILE_KINDS' order, the lock last */
  res->removable[FILE_SORTED] = res->manifests[H5G_RESUME_AT_SORT];
  res->removable[FILE_RUNS] = res->manifests[H5G_RESUME_AT_MERGE];
  res->removable[FILE_SHARE] = res->manifests[H5G_RESUME_AT_WRITE];
  res->removable[FILE_MANIFEST_NEW] = res->manifest_new;
  for (int i = 0; i < H5G_BUFFER_COUNT; i++) res->removable[FILE_BUFFERS + i] = res->files[i];
  res->removable[FILE_LOCK] = res->lock;
  res->removable[FILE_KIND_COUNT] = NULL;
  snprintf(res->kept_line[H5G_RESUME_AT_SORT], sizeof res->kept_line[0], "h5gsort: the runs "
           "sorted so far are kept in %s: the same command with --resume goes on from them "
           "(remove the directory to drop them)\n", res->dir);
  snprintf(res->kept_line[H5G_RESUME_AT_MERGE], sizeof res->kept_line[0], "h5gsort: the sorted "
           "runs are kept in %s: the same command with --resume goes on from their merge (remove "
           "the directory to drop them)\n", res->dir);
  snprintf(res->kept_line[H5G_RESUME_AT_WRITE], sizeof res->kept_line[0], "h5gsort: the sorted "
           "share is kept in %s: the same command with --resume goes on from it (remove the "
           "directory to drop it)\n", res->dir);
done:
  return rc;
}

/* The latest of the stages (bits) in `stages` (NONE: none). */
static h5g_resume_stage latest_stage(unsigned stages) {
  h5g_resume_stage latest = H5G_RESUME_NONE;
  for (int stage = H5G_RESUME_AT_SORT; stage < H5G_RESUME_STAGES; stage++)
    if (stages & (1u << stage)) latest = (h5g_resume_stage)stage;
  return latest;
}

/* The stages (bits) whose manifests this rank holds for this run (their states read into
 * res->kept), and why the latest manifest there is not taken. The states of one run lie in the
 * same buffers: an earlier one that disagrees on them with a later one is not taken. */
static unsigned stages_held(h5g_resume *res, const char **why) {
  unsigned held = 0;
  *why = "no record of sorted runs or of a sorted share";
  for (int stage = H5G_RESUME_AT_SORT; stage < H5G_RESUME_STAGES; stage++) {
    const char *reason = "";
    if (read_manifest(res->manifests[stage], res->files, &res->id, (h5g_resume_stage)stage,
                      &res->kept[stage], &reason))
      held |= 1u << stage;
    else if (access(res->manifests[stage], F_OK) == 0)
      *why = reason;
  }
  for (int early = H5G_RESUME_AT_SORT; early < H5G_RESUME_AT_WRITE; early++)
    for (int later = early + 1; later < H5G_RESUME_STAGES; later++)
      if ((held & 1u << early) && (held & 1u << later) &&
          memcmp(res->kept[early].buffer_elems, res->kept[later].buffer_elems,
                 sizeof res->kept[early].buffer_elems) != 0)
        held &= ~(1u << early);
  return held;
}

int h5g_resume_open(h5g_run *r, const h5g_verdict *v, const h5g_plan *plan, h5g_resume *res) {
  int rc = H5G_OK, found = 0, any_found = 0;
  unsigned held = 0;
  const char *why = "";
  memset(res, 0, sizeof *res);
  res->lock_fd = -1;
  /* The runs are recorded where the host merges them (the resident path's GPU merges what it
   * holds) and the keys take one pass (else the passes' order is part of the state), as they
   * are sorted unless --unique packs them in place at once; the share unless --counts (its
   * counts lie in memory of their own); a streamed share never lies whole in the host buffers. */
  int runs_recorded = plan->path != H5G_PATH_DEVICE_RESIDENT &&
                      !(v->composed && v->layout.words > 1);
  unsigned records = (runs_recorded ? 1u << H5G_RESUME_AT_MERGE : 0) |
                     (runs_recorded && !r->opt->unique ? 1u << H5G_RESUME_AT_SORT : 0) |
                     (r->opt->counts ? 0 : 1u << H5G_RESUME_AT_WRITE);
  /* every rank spills (the spill is each rank's own), and the same states are recorded on each */
  int agreed[3] = {plan->spills && records && !plan->streamed && r->opt->argv, plan->spills,
                   !plan->spills};
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, agreed, 3, MPI_INT, MPI_MIN, r->comm));
  int every_rank_spills = agreed[1], none_spills = agreed[2];
  res->eligible = agreed[0];
  if (res->eligible) res->records = records;
  if (!res->eligible && r->opt->resume && r->rank == 0 && !r->opt->quiet)
    fprintf(stderr, "h5gsort: note: --resume: %s; sorting from the start\n",
            !every_rank_spills ? "not every rank spills, and nothing of a run in memory is kept"
                               : "a run whose sorted slice stays on the GPU until it is written "
                                 "(streamed, or with --counts) keeps nothing to go on from");
  /* a spilling rank counted an earlier run's files of this OUTPUT in its directory as room
   * (src/sizing.c): a run that keeps none of its own removes them all the same */
  if (none_spills) {
    int removed = remove_earlier(r, res), any = 0;
    CHECK_MPI(MPI_Reduce(&removed, &any, 1, MPI_INT, MPI_MAX, 0, r->comm));
    if (any && r->rank == 0 && !r->opt->quiet)
      fprintf(stderr, "h5gsort: note: removed the sorted data an earlier spilling run of this "
              "OUTPUT left in scratch\n");
    goto done;
  }
  CHECK(h5g_agree(r->comm, plan->spills ? lock_files(r, res) : H5G_OK));
  if (res->eligible) CHECK(h5g_agree(r->comm, identity_of(r, v, plan, &res->id)));
  for (int stage = H5G_RESUME_AT_SORT; plan->spills && stage < H5G_RESUME_STAGES; stage++)
    found |= access(res->manifests[stage], F_OK) == 0;
  /* only the states this plan records: one it does not would give it buffers its path never
   * fills (a run on the host killed, resumed where the GPU keeps its slice) */
  if (r->opt->resume && res->eligible) held = stages_held(res, &why) & res->records;
  const h5g_resume_kept *sorted = &res->kept[H5G_RESUME_AT_SORT];
  if ((held & 1u << H5G_RESUME_AT_SORT) &&
      (sorted->nruns > plan->nruns ||
       memcmp(sorted->run_offsets, plan->run_offsets, (sorted->nruns + 1) * sizeof(uint64_t)))) {
    held &= ~(1u << H5G_RESUME_AT_SORT); /* the read goes on in this plan's runs */
    why = "its runs are not cut as this run's (the memory it found differs)";
  }
  CHECK_MPI(MPI_Allreduce(&held, &res->usable, 1, MPI_UNSIGNED, MPI_BAND, r->comm));
  int founds[2] = {found, !found}; /* some rank's files found; some rank's not */
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, founds, 2, MPI_INT, MPI_MAX, r->comm));
  any_found = founds[0];
  res->resuming = latest_stage(res->usable);
  res->opened = 1; /* an earlier run's files are this run's from here: taken, or removed now */
  if (!plan->spills) goto done; /* none of its own */
  if (!res->resuming) remove_files(res);
  /* an interrupt leaves the files only where they hold a state (a run resuming keeps them) */
  h5g_interrupt_scratch(res->resuming ? NULL : res->removable, res->dir,
                        res->resuming ? res->kept_line[res->resuming] : NULL);
  remove_unheld_ranks(res, r->rank);
  if (res->resuming || r->rank != 0 || r->opt->quiet) goto done;
  if (r->opt->resume && res->eligible)
    fprintf(stderr, "h5gsort: note: --resume: nothing to go on from in %s (%s); sorting from the "
            "start\n", res->dir,
            !held      ? why
            : founds[1] ? "another rank kept no record"
            : "another rank's record does not match");
  else if (any_found)
    fprintf(stderr, "h5gsort: note: removed the sorted data an earlier run of this OUTPUT left "
            "in %s%s\n", res->dir, res->eligible ? " (--resume goes on from it)" : "");
done:
  return rc;
}

void h5g_resume_name_buffers(const h5g_resume *res, h5g_buffer_spec *specs) {
  for (int i = 0; res->eligible && i < H5G_BUFFER_COUNT; i++) {
    specs[i].scratch_file = res->files[i];
    specs[i].reuse_file = res->resuming != H5G_RESUME_NONE;
    if (res->resuming) specs[i].n = res->kept[res->resuming].buffer_elems[i];
  }
}

/* A hash of bytes that depends on their order (a node's crash may leave pages of an older state
 * beside the manifest, or put them out of place): blocks hashed word by word by the rank's
 * threads, each mixed with its index. */
enum { HASH_BLOCK = 1 << 20 };
typedef struct {
  const unsigned char *p;
  size_t bytes, blocks;
  uint64_t sum[H5G_MAX_PARTS];
} hash_job;

static uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
  x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

static void hash_part(void *ctx, int part, int parts) {
  hash_job *j = ctx;
  uint64_t sum = 0;
  for (size_t b = j->blocks * (size_t)part / (size_t)parts;
       b < j->blocks * (size_t)(part + 1) / (size_t)parts; b++) {
    size_t i = b * HASH_BLOCK, end = j->bytes - i < HASH_BLOCK ? j->bytes : i + HASH_BLOCK;
    /* four lanes, so that the multiplies do not wait on each other */
    uint64_t h[4] = {mix64(4 * b + 1), mix64(4 * b + 2), mix64(4 * b + 3), mix64(4 * b + 4)};
    uint64_t w[4];
    for (; i + sizeof w <= end; i += sizeof w) {
      memcpy(w, j->p + i, sizeof w);
      for (int k = 0; k < 4; k++) h[k] = (h[k] ^ w[k]) * 1099511628211ull;
    }
    for (; i < end; i++) h[0] = (h[0] ^ j->p[i]) * 1099511628211ull;
    sum += mix64(h[0] ^ mix64(h[1] ^ mix64(h[2] ^ mix64(h[3]))));
  }
  j->sum[part] = sum;
}

static uint64_t ordered_hash(const void *p, size_t bytes, int threads) {
  hash_job job = {p, bytes, (bytes + HASH_BLOCK - 1) / HASH_BLOCK, {0}};
  int parts = h5g_parts(job.blocks, 1, threads < H5G_MAX_PARTS ? threads : H5G_MAX_PARTS);
  uint64_t sum = 0;
  h5g_parallel(parts, hash_part, &job);
  for (int i = 0; i < parts; i++) sum += job.sum[i];
  return sum;
}

/* The hashes of the n keys of `keys` and of their values (none: NULL). */
static void kept_sums(const h5g_plan *plan, const void *keys, const uint64_t *values, uint64_t n,
                      uint64_t *keys_sum, uint64_t *values_sum) {
  *keys_sum = ordered_hash(keys, n * plan->ks.width, plan->io_threads);
  *values_sum = values ? ordered_hash(values, n * sizeof(uint64_t), plan->io_threads) : 0;
}

/* The keys a state holds: the runs' or the share's. */
static uint64_t kept_keys(const h5g_resume_kept *s) {
  return s->nruns ? s->run_offsets[s->nruns] : s->extent.out_n;
}

/* AT_SORT: the hashes of runs [from, to) of the slice (those of each run, mixed with its index,
 * added), into sums (keys, values). */
static void sorted_run_sums(const h5g_plan *plan, const h5g_data *d, size_t from, size_t to,
                            uint64_t *sums) {
  unsigned w = plan->ks.width;
  for (size_t j = from; j < to; j++) {
    uint64_t begin = plan->run_offsets[j], len = plan->run_offsets[j + 1] - begin, keys, values;
    kept_sums(plan, (const char *)d->keys + begin * w, plan->records ? d->values + begin : NULL,
              len, &keys, &values);
    sums[0] += mix64(keys ^ mix64(2 * j + 1));
    sums[1] += mix64(values ^ mix64(2 * j + 2));
  }
}

/* Whether this rank's state `stage` is in its buffers as recorded (the sorted keys then there).
 * AT_SORT's runs are this plan's first (h5g_resume_open held it to that). */
static int kept_holds(const h5g_plan *plan, h5g_resume_stage stage, const h5g_resume_kept *s,
                      h5g_data *d) {
  uint64_t keys = 0, values = 0, n = kept_keys(s);
  void *sorted = s->in_spare ? d->spare : d->keys;
  uint64_t *sorted_values = s->in_spare ? d->spare_values : d->values;
  if (n > d->specs[s->in_spare ? H5G_BUFFER_SPARE : H5G_BUFFER_KEYS].n || (n && !sorted))
    return 0;
  h5g_data_set_sorted(d, sorted, plan->records ? sorted_values : NULL);
  if (stage == H5G_RESUME_AT_SORT) {
    uint64_t sums[2] = {0, 0};
    sorted_run_sums(plan, d, 0, s->nruns, sums);
    keys = sums[0];
    values = sums[1];
  } else {
    kept_sums(plan, d->sorted, d->sorted_values, n, &keys, &values);
  }
  return keys == s->keys_sum && values == s->values_sum;
}

int h5g_resume_restore(h5g_run *r, const h5g_plan *plan, h5g_resume *res, h5g_data *d,
                       h5g_extent *e) {
  int rc = H5G_OK, holds = 0, all = 0;
  CHECK(h5g_agree(r->comm, h5g_buffers_wait_all(d->set)));
  /* the latest state every rank has, then the one before: a share whose check fails (a kill
   * during its write may have changed it in place) may still have its runs */
  for (; res->resuming; res->resuming = latest_stage(res->usable & ((1u << res->resuming) - 1))) {
    holds = kept_holds(plan, res->resuming, &res->kept[res->resuming], d);
    CHECK_MPI(MPI_Allreduce(&holds, &all, 1, MPI_INT, MPI_MIN, r->comm));
    if (all) break;
  }
  if (!all) {
    remove_files(res); /* the caller makes the buffers again, of this run's plan */
    h5g_interrupt_scratch(res->removable, res->dir, NULL);
    if (r->rank == 0 && !r->opt->quiet)
      fprintf(stderr, "h5gsort: note: --resume: the sorted data kept in %s failed its check "
              "(%s); sorting from the start\n", res->dir,
              holds ? "another rank's" : "its checksum");
    goto done;
  }
  const h5g_resume_kept *s = &res->kept[res->resuming];
  *e = s->extent;
  d->values_are_counts = s->values_are_counts;
  r->metrics.checksum_in = s->checksum_in;
  res->recorded = res->resuming;
  if (res->resuming == H5G_RESUME_AT_SORT) { /* the records go on from them */
    res->sorted_runs = s->nruns;
    res->sorted_sums[0] = s->keys_sum;
    res->sorted_sums[1] = s->values_sum;
  }
  h5g_interrupt_scratch(NULL, res->dir, res->kept_line[res->resuming]);
  if (r->rank == 0 && !r->opt->quiet && res->resuming == H5G_RESUME_AT_SORT)
    fprintf(stderr, "h5gsort: resuming: every rank's runs sorted so far, kept in %s, checked; "
            "they are not read or sorted again\n", res->dir);
  else if (r->rank == 0 && !r->opt->quiet)
    fprintf(stderr, "h5gsort: resuming: every rank's %s, kept in %s, checked; the read, sort%s "
            "are not done again\n",
            res->resuming == H5G_RESUME_AT_WRITE ? "sorted share" : "sorted runs", res->dir,
            res->resuming == H5G_RESUME_AT_WRITE ? ", exchange and merge" : " and exchange");
done:
  return rc;
}

/* The state s (its extent, checksums and runs set) written down as `stage`, with the buffers as
 * they are (named first: a run killed before this left no files). */
static int write_state(const h5g_data *d, h5g_resume *res, h5g_resume_stage stage,
                       h5g_resume_kept *s) {
  int rc = H5G_OK;
  CHECK(h5g_buffers_name_scratch(d->set));
  for (int i = 0; i < H5G_BUFFER_COUNT; i++) {
    struct stat st;
    s->buffer_elems[i] = d->specs[i].n;
    s->file_bytes[i] = d->specs[i].p && stat(res->files[i], &st) == 0 ? (uint64_t)st.st_size : 0;
  }
  CHECK(write_manifest(res->manifests[stage], res->manifest_new, &res->id, stage, s));
done:
  return rc;
}

int h5g_resume_record(h5g_run *r, const h5g_plan *plan, h5g_resume *res, const h5g_data *d,
                      const h5g_extent *e, h5g_resume_stage stage, const uint64_t *run_offsets,
                      size_t nruns) {
  int rc = H5G_OK;
  uint64_t loaded = 0;
  if (!(res->records & (1u << stage)) || res->resuming >= stage) goto done;
  h5g_resume_kept s = {.extent = *e, .checksum_in = r->metrics.checksum_in,
                       .values_are_counts = d->values_are_counts,
                       .nruns = stage == H5G_RESUME_AT_MERGE ? nruns : 0,
                       .run_offsets = (uint64_t *)run_offsets};
  s.in_spare = kept_keys(&s) && d->sorted == d->spare;
  if (r->be && r->be->loaded_checksum) CHECK(r->be->loaded_checksum(r->be, &loaded));
  s.checksum_in += loaded;
  kept_sums(plan, d->sorted, d->sorted_values, kept_keys(&s), &s.keys_sum, &s.values_sum);
  CHECK(write_state(d, res, stage, &s));
done:
  return rc;
}

int h5g_resume_record_sorted(const h5g_plan *plan, h5g_resume *res, const h5g_data *d,
                             const h5g_extent *e, size_t upto, uint64_t checksum_in) {
  int rc = H5G_OK;
  if (!(res->records & (1u << H5G_RESUME_AT_SORT)) || upto <= res->sorted_runs) goto done;
  sorted_run_sums(plan, d, res->sorted_runs, upto, res->sorted_sums);
  res->sorted_runs = upto;
  h5g_resume_kept s = {.extent = *e, .checksum_in = checksum_in, .nruns = upto,
                       .run_offsets = (uint64_t *)plan->run_offsets,
                       .keys_sum = res->sorted_sums[0], .values_sum = res->sorted_sums[1]};
  CHECK(write_state(d, res, H5G_RESUME_AT_SORT, &s));
  h5g_resume_recorded(res, H5G_RESUME_AT_SORT);
done:
  return rc;
}

void h5g_resume_recorded(h5g_resume *res, h5g_resume_stage stage) {
  if (!(res->records & (1u << stage)) || res->recorded >= stage) return;
  res->recorded = stage;
  h5g_interrupt_scratch(NULL, NULL, res->kept_line[stage]);
}

void h5g_resume_drop_sorted(h5g_resume *res) {
  if (!(res->records & (1u << H5G_RESUME_AT_SORT)) || res->sorted_runs == 0) return;
  unlink(res->manifests[H5G_RESUME_AT_SORT]);
  res->sorted_runs = 0;
  if (res->resuming == H5G_RESUME_AT_SORT) res->resuming = H5G_RESUME_NONE; /* nothing kept */
  if (res->recorded != H5G_RESUME_AT_SORT) return;
  res->recorded = H5G_RESUME_NONE;
  h5g_interrupt_scratch(res->removable, res->dir, NULL);
}

void h5g_resume_close(const h5g_run *r, h5g_resume *res, int succeeded) {
  for (int stage = 0; stage < H5G_RESUME_STAGES; stage++) {
    free(res->kept[stage].run_offsets);
    res->kept[stage].run_offsets = NULL;
  }
  /* a run that failed keeps the states every rank holds (each records its own: what one rank
   * alone holds, a resume could not go on from), and one that failed before its files were
   * settled what an earlier run left; every rank is here together where res->eligible */
  unsigned held = 0, every = 0;
  for (int stage = H5G_RESUME_AT_SORT; res->opened && stage < H5G_RESUME_STAGES; stage++)
    if ((res->recorded || res->resuming) && (res->records & 1u << stage) &&
        access(res->manifests[stage], F_OK) == 0)
      held |= 1u << stage;
  if (res->eligible &&
      MPI_Allreduce(&held, &every, 1, MPI_UNSIGNED, MPI_BAND, r->comm) != MPI_SUCCESS)
    every = 0;
  if (res->lock_fd < 0) return; /* none, or not ours to touch */
  h5g_interrupt_scratch(NULL, NULL, NULL);
  h5g_resume_stage kept = latest_stage(every);
  if (res->opened && (succeeded || !kept)) {
    remove_files(res);
    unlink(res->lock);
    rmdir(res->dir); /* the last rank of its node to leave it */
  } else if (r->rank == 0 && kept) {
    fputs(res->kept_line[kept], stderr);
  }
  close(res->lock_fd);
  res->lock_fd = -1;
}
