/* The small interface between the pipeline (src/pipeline.c) and a compute backend.
 *
 * The pipeline keeps keys in host memory (pinned, when the backend allocates it) as ordered bits
 * (src/keys.h) and asks the backend to sort a run or to merge sorted runs. A backend never holds
 * more than `mem_budget` bytes of working memory; `capacity` tells how many keys one call may
 * take within it, and the pipeline cuts its work into calls that fit (the out-of-core path).
 * Nothing here knows of MPI or HDF5. */
#ifndef H5G_BACKEND_H
#define H5G_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "src/keys.h"

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
  void *impl;

  /* Largest n that one sort/merge call accepts for elements of `width` bytes (>= 1). For
   * key+value calls the pipeline asks for width + 8. */
  size_t (*capacity)(h5g_backend *be, unsigned width);
  /* Host buffers for keys: pinned for a GPU backend. `*p` is NULL for 0 bytes. */
  int (*host_alloc)(h5g_backend *be, size_t bytes, void **p);
  void (*host_free)(h5g_backend *be, void *p);
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
