/* The small interface between the pipeline (src/, its phases) and a compute backend.
 *
 * The pipeline keeps keys in host memory (pinned, when the backend allocates it) as ordered bits
 * (base/keys.h) and asks the backend to sort a run or to merge sorted runs. A backend never holds
 * more than `mem_budget` bytes of working memory; `capacity` tells how many keys one call may
 * take within it, and the pipeline cuts its work into calls that fit (the out-of-core path).
 * Nothing here knows of MPI or HDF5. */
#ifndef H5G_BACKEND_H
#define H5G_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "base/keys.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct h5g_backend h5g_backend;

/* Device addresses of the resident run (h5g_backend.run_buffers). */
typedef struct {
  void *keys, *spare;                 /* the kept sorted run; where an exchange receives */
  uint64_t *values, *spare_values;    /* the same for values; NULL when the run has none */
} h5g_device_run;

struct h5g_backend {
  const char *name;       /* "cpu" or "cuda" */
  char device_name[128];  /* e.g. "NVIDIA H200" or "host CPU" */
  uint64_t mem_budget;    /* bytes of working memory the backend may use */
  double h2d_seconds;     /* host->device and device->host copy time so far (GPU backends), */
  double d2h_seconds;     /* part of the transform, sort and merge phases of the report */
  double kernel_seconds;  /* device time of the resident path's and merge_stream's kernels */
  double waited_seconds;  /* host time spent blocked on that device work (merge_stream: all) */
  void *impl;

  /* Largest n that one sort/merge call accepts for keys of `width` bytes (>= 1), with a uint64
   * value beside each key when `with_values`. */
  size_t (*capacity)(h5g_backend *be, unsigned width, int with_values);
  /* Pins (page-locks for fast copies) resident host memory [p, p + bytes) and releases it:
   * NULL where host memory needs no pinning (the CPU backend). Host buffers come from
   * base/host_memory.h. */
  int (*pin)(h5g_backend *be, void *p, size_t bytes);
  void (*unpin)(h5g_backend *be, void *p);
  /* Forward (inverse == 0) or inverse key transform of n host keys, in place. */
  int (*transform)(h5g_backend *be, void *keys, size_t n, const h5g_keyspec *ks, int inverse);
  /* Sorts n <= capacity ordered-bit keys in host memory ascending, in place. `values` is NULL
   * for keys only; otherwise values[i] (a uint64: the key's source index) moves with keys[i]
   * and the sort is stable (equal keys keep their order). */
  int (*sort)(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width);
  /* keys[run_offsets[i] .. run_offsets[i+1]) sorted for i < nruns; n == run_offsets[nruns]
   * <= capacity. Leaves keys[0..n) sorted; values as in sort (equal keys: earlier runs first). */
  int (*merge)(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width,
               const uint64_t *run_offsets, size_t nruns);
  /* A merge of more than `capacity` keys, streamed: NULL in a backend whose working memory is
   * the host's (the CPU one), where the pipeline packs each chunk and merges it with `merge`.
   * merge_chunk: the most keys one chunk of merge_stream may hold (fewer than capacity: one chunk
   *   travels while the one before it is merged).
   * merge_stream: chunk c < nchunks of the output is the merge of the pieces
   *   [cuts[c * nruns + j], cuts[(c + 1) * nruns + j]) of the sorted runs j < nruns of `keys`
   *   (and `values`: moved with them, stable, earlier runs first at equal keys); the chunks go to
   *   `out` (and `out_values`) one after another from out[0]. The pieces are copied to the device
   *   from where they lie and the merged chunk back while the next one's pieces go up, so no
   *   host copy packs them. Returns when the output is in host memory. */
  size_t (*merge_chunk)(h5g_backend *be, unsigned width, int with_values);
  int (*merge_stream)(h5g_backend *be, const void *keys, const uint64_t *values, unsigned width,
                      const uint64_t *cuts, size_t nruns, size_t nchunks, void *out,
                      uint64_t *out_values);
  /* The device-resident path (all NULL in a backend without device memory of its own, as the
   * CPU one). The calls are stream-ordered and return before the device is done, so the host
   * reads the next piece of the file while the device copies and sorts the last one, and writes
   * one piece while the next comes back. Values, when a run has them, are the keys' source
   * indices: made on the device, never loaded.
   * load: starts copying `count` host keys to position `first` of a device run of n keys (with
   *   room for a value per key when `with_values`; the first load of a run sets both).
   * sort_loaded: forward transform and sort of the loaded run on the device (with values: value
   *   i = first_index + i before the sort, which is stable), then starts copying it back into
   *   `keys` (n host keys; and `values` unless NULL: the values then stay on the device):
   *   ordered bits, or with `final` inverse transformed (the output). The device keeps the
   *   sorted run as it came back (and the values). With `keys` NULL nothing comes back: copy_out
   *   brings it back piece by piece.
   * run_buffers: the device addresses of the kept run and of a spare run of as many keys that
   *   an exchange between devices can receive into (and of their values; NULL without).
   * merge_received: merges the nruns sorted runs in the spare buffers on the device (stable:
   *   earlier runs first), inverse transform, then starts copying the result into `keys` (and
   *   `values`).
   * wait_copied: blocks until the first `count` keys (and values) of the last copy back are in
   *   host memory (of copy_out's pieces: once the piece that ends there was started).
   * A host buffer smaller than the run (a ring of pinned slots: src/plan.h, plan.streamed):
   * wait_loaded: blocks until the first `count` keys of the run being loaded are on the device
   *   (what they were copied from may then be written again); one run's loads at a time.
   * copy_out: starts copying keys [first, first + count) of the run sorted (or merged) without a
   *   copy back into `dst` (pinned); the pieces in order of `first`. */
  int (*load)(h5g_backend *be, const void *piece, size_t first, size_t count, size_t n,
              unsigned width, int with_values);
  int (*sort_loaded)(h5g_backend *be, void *keys, uint64_t *values, uint64_t first_index,
                     size_t n, const h5g_keyspec *ks, int final);
  int (*run_buffers)(h5g_backend *be, h5g_device_run *run);
  int (*merge_received)(h5g_backend *be, void *keys, uint64_t *values, size_t n,
                        const h5g_keyspec *ks, const uint64_t *run_offsets, size_t nruns);
  int (*wait_copied)(h5g_backend *be, size_t count);
  int (*wait_loaded)(h5g_backend *be, size_t count);
  int (*copy_out)(h5g_backend *be, void *dst, size_t first, size_t count);
  /* Optional (NULL in the CPU backend): the last copy back has been started and the process asks
   * the GPU for nothing more (no MPI that may use it either: mpi/launch.h). A thread waits for
   * the copies, then destroys the context (its device memory and the host memory it pinned go
   * with it; unless it is to be handed over: h5g_cuda_hand_over_context) while the host writes
   * what came back: the 0.06 s of h5g_cuda_release_context leave the path the user waits on.
   * Afterwards the backend takes only wait_copied (which waits for that thread's copies), unpin
   * (which waits for the release, and leaves the registration to it) and destroy. Calling it
   * again does nothing. */
  int (*retire)(h5g_backend *be);
  void (*destroy)(h5g_backend *be);
};

/* CPU backend: our LSD radix sort and a merge tree, working memory capped by `mem_budget`
 * (0 means no cap). */
int h5g_backend_cpu_create(h5g_backend **out, uint64_t mem_budget);

/* CUDA backend (kernels/). `local_rank` picks the GPU (local rank modulo device count);
 * mem_budget 0 means "most of the free device memory". Returns H5G_ERR_RUNTIME with a message
 * when the build has no CUDA or no GPU is visible. */
int h5g_backend_cuda_create(h5g_backend **out, int local_rank, uint64_t mem_budget);
/* Sets the CUDA driver's settings this process wants where the user set none
 * (CUDA_DEVICE_MAX_CONNECTIONS: kernels/tuning.cuh, DEVICE_CONNECTIONS). Call before any thread
 * starts (setenv must not race a getenv) and before any CUDA call; nothing without CUDA. */
void h5g_cuda_environment(void);
/* The CUDA context of this rank's GPU, made in a background thread while the host does work that
 * needs no GPU (the pipeline: while rank 0 inspects the input). On the H200 machine under mpirun
 * it takes 0.13 s (0.24 s for each of 2 ranks on one GPU), of which the inspection of a small
 * file on a local disk hides only 0.01 s; a slower file system's metadata hides more. src/main.c
 * begins it before MPI_Init where it can, so that it is made while MPI starts.
 * start: the GPU is the one the backend picks for `local_rank`; *w is NULL where nothing was
 * started (no CUDA in this build, or no thread could be made: the backend then makes it).
 * finish: joins and frees it (safe with NULL); its error when `needed` (the run uses the GPU: a
 * context that cannot be made stops it), else H5G_OK; *seconds (unless NULL) is how long the
 * making took. */
typedef struct h5g_cuda_warmup h5g_cuda_warmup;
int h5g_cuda_warmup_start(int local_rank, h5g_cuda_warmup **w);
int h5g_cuda_warmup_finish(h5g_cuda_warmup *w, int needed, double *seconds);
/* The local rank a warm-up was started for (its device: that rank modulo the devices); -1 for
 * none. */
int h5g_cuda_warmup_rank(const h5g_cuda_warmup *w);
/* Takes descriptors fds[0..count) of this process (the GPU driver's) and answers 1 when it took
 * them: whatever their last close releases is then released elsewhere, after this process's
 * exit (src/main.c: io/h5io.h, h5g_helper_hand_over). */
typedef int (*h5g_descriptor_taker)(const int *fds, int count);
/* Where `take` is given (before the pipeline, from the main thread), the context is not destroyed
 * by this process but handed over with the driver's descriptors (h5g_cuda_release_context), on a
 * device whose compute mode lets other processes make contexts meanwhile, and not under a tool
 * injected into CUDA (CUDA_INJECTION64_PATH); a backend's retire then leaves it as it is. NULL:
 * destroyed here. */
void h5g_cuda_hand_over_context(h5g_descriptor_taker take);
/* 1 when this process's context is made and will be handed over so (0 without CUDA). */
int h5g_cuda_context_goes_to_taker(void);
/* Releases the CUDA context this process made, as its exit otherwise would: hands it over (above),
 * or destroys it, or waits for the release a backend's retire began. Returns the seconds that
 * took here (0 without one): tear-down made visible. *behind_write (unless NULL): how long the
 * retire's thread took, 0 when there was none; *handed_over (unless NULL): 1 when handed over.
 * Call last, after MPI_Finalize; nothing may use CUDA after it. */
double h5g_cuda_release_context(double *behind_write, int *handed_over);
/* Number of visible CUDA devices (0 without CUDA support or without a GPU). */
int h5g_cuda_device_count(void);
/* Free memory of CUDA device `device` in bytes (0 without CUDA support or without a GPU). */
uint64_t h5g_cuda_free_memory(int device);

#ifdef __cplusplus
}
#endif
#endif
