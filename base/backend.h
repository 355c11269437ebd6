/* The small interface between the pipeline (src/pipeline.c) and a compute backend.
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

struct h5g_backend {
  const char *name;       /* "cpu" or "cuda" */
  char device_name[128];  /* e.g. "NVIDIA H200" or "host CPU" */
  uint64_t mem_budget;    /* bytes of working memory the backend may use */
  double h2d_seconds;     /* host->device and device->host copy time so far (GPU backends), */
  double d2h_seconds;     /* part of the transform, sort and merge phases of the report */
  double kernel_seconds;  /* device time of the resident path's kernels (below) */
  double waited_seconds;  /* host time spent blocked on the resident path's device work */
  void *impl;

  /* Largest n that one sort/merge call accepts for elements of `width` bytes (>= 1). For
   * key+value calls the pipeline asks for width + 8. */
  size_t (*capacity)(h5g_backend *be, unsigned width);
  /* Pins (page-locks for fast copies) resident host memory [p, p + bytes) and releases it:
   * NULL where host memory needs no pinning (the CPU backend). Host buffers come from
   * base/host_memory.h. */
  int (*pin)(h5g_backend *be, void *p, size_t bytes);
  void (*unpin)(h5g_backend *be, void *p);
  /* Forward (inverse == 0) or inverse key transform of n host keys, in place. */
  int (*transform)(h5g_backend *be, void *keys, size_t n, const h5g_keyspec *ks, int inverse);
  /* Sorts n <= capacity ordered-bit keys in host memory ascending, in place. */
  int (*sort)(h5g_backend *be, void *keys, size_t n, unsigned width);
  /* keys[run_offsets[i] .. run_offsets[i+1]) sorted for i < nruns; n == run_offsets[nruns]
   * <= capacity. Leaves keys[0..n) sorted. */
  int (*merge)(h5g_backend *be, void *keys, size_t n, unsigned width, const uint64_t *run_offsets,
               size_t nruns);
  /* Like sort and merge, moving values[i] (a uint64: the key's source index) with keys[i], and
   * stable: equal keys keep their order (in merge: earlier runs first). NULL when the backend
   * cannot move values. */
  int (*sort_pairs)(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width);
  int (*merge_pairs)(h5g_backend *be, void *keys, uint64_t *values, size_t n, unsigned width,
                     const uint64_t *run_offsets, size_t nruns);
  /* The device-resident path, keys only (all NULL in a backend without device memory of its
   * own, as the CPU one). The calls are stream-ordered and return before the device is done, so
   * the host reads the next piece of the file while the device copies and sorts the last one,
   * and writes one piece while the next comes back:
   * load: starts copying `count` host keys to position `first` of a device run of n keys.
   * sort_loaded: forward transform and sort of the loaded run on the device, then starts
   *   copying it back into `keys` (n host keys): ordered bits, or with `final` inverse
   *   transformed (the output). The device keeps the sorted ordered bits.
   * run_buffers: the device addresses of the kept run and of a spare run of as many keys that
   *   an exchange between devices can receive into.
   * merge_received: merges the nruns sorted runs in the spare buffer on the device, inverse
   *   transform, then starts copying the result into `keys`.
   * wait_copied: blocks until the first `count` keys of the last copy back are in host memory. */
  int (*load)(h5g_backend *be, const void *piece, size_t first, size_t count, size_t n,
              unsigned width);
  int (*sort_loaded)(h5g_backend *be, void *keys, size_t n, const h5g_keyspec *ks, int final);
  int (*run_buffers)(h5g_backend *be, void **run, void **spare);
  int (*merge_received)(h5g_backend *be, void *keys, size_t n, const h5g_keyspec *ks,
                        const uint64_t *run_offsets, size_t nruns);
  int (*wait_copied)(h5g_backend *be, size_t count);
  void (*destroy)(h5g_backend *be);
};

/* CPU backend: our LSD radix sort and a merge tree, working memory capped by `mem_budget`
 * (0 means no cap). */
int h5g_backend_cpu_create(h5g_backend **out, uint64_t mem_budget);

/* CUDA backend (kernels/). `local_rank` picks the GPU (local rank modulo device count);
 * mem_budget 0 means "most of the free device memory". Returns H5G_ERR_RUNTIME with a message
 * when the build has no CUDA or no GPU is visible. */
int h5g_backend_cuda_create(h5g_backend **out, int local_rank, uint64_t mem_budget);
/* Number of visible CUDA devices (0 without CUDA support or without a GPU). */
int h5g_cuda_device_count(void);
/* Free memory of CUDA device `device` in bytes (0 without CUDA support or without a GPU). */
uint64_t h5g_cuda_free_memory(int device);

#ifdef __cplusplus
}
#endif
#endif
