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
  char device_name[128];  /* the CUDA device's name, or "host CPU" */
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
   *   copy back into `dst` (pinned), and their values into `dst_values` unless NULL (pinned; a
   *   run with values); the pieces in order of `first`.
   * checksum_loaded: adds h5g_keys_checksum of keys [first, first + count) of the run being
   *   loaded, as loaded (before the sort transforms them), to the backend's sum, on the device
   *   once their load is done (--verify's checksum of the input, where the keys are).
   * loaded_checksum: that sum, of every checksum_loaded since the backend was made (waits for
   *   the device work started before it). */
  int (*load)(h5g_backend *be, const void *piece, size_t first, size_t count, size_t n,
              unsigned width, int with_values);
  int (*sort_loaded)(h5g_backend *be, void *keys, uint64_t *values, uint64_t first_index,
                     size_t n, const h5g_keyspec *ks, int final);
  int (*run_buffers)(h5g_backend *be, h5g_device_run *run);
  int (*merge_received)(h5g_backend *be, void *keys, uint64_t *values, size_t n,
                        const h5g_keyspec *ks, const uint64_t *run_offsets, size_t nruns);
  int (*wait_copied)(h5g_backend *be, size_t count);
  int (*wait_loaded)(h5g_backend *be, size_t count);
  int (*copy_out)(h5g_backend *be, void *dst, uint64_t *dst_values, size_t first, size_t count);
  int (*checksum_loaded)(h5g_backend *be, size_t first, size_t count);
  int (*loaded_checksum)(h5g_backend *be, uint64_t *sum);
  /* Rows that follow the resident run's sort (NULL in a backend without one): carried datasets
   * put in the order of the sorted keys where that order is, without a copy by source index on
   * the host.
   * gather_fits: true when the last sort_loaded (or merge_received) left the source indices of
   *   n keys on the device and gather_rows of rows of row_bytes fits beside them in the budget.
   * gather_rows: out row i = rows row (value i - first_index), i < n, for those values; rows and
   *   out are host buffers of n rows of row_bytes, pinned (pin). Returns once out is filled; an
   *   index outside the n rows is an internal error. */
  int (*gather_fits)(h5g_backend *be, size_t n, size_t row_bytes);
  int (*gather_rows)(h5g_backend *be, const void *rows, size_t n, size_t row_bytes,
                     uint64_t first_index, void *out);
  void (*destroy)(h5g_backend *be);
};

/* CPU backend: our LSD radix sort and a merge tree, working memory capped by `mem_budget`
 * (0 means no cap). */
int h5g_backend_cpu_create(h5g_backend **out, uint64_t mem_budget);

/* The CUDA backend and its context: kernels/cuda_backend.h. */

#ifdef __cplusplus
}
#endif
#endif
