/* Host API of the project's CUDA kernels (kernels/), in CUB's manner:
 * - every routine is stream-ordered on `stream` and returns an h5g status (base/error.h); a CUDA
 *   failure is recorded with the CUDA error name and the failing call;
 * - routines that need device scratch take (temp, temp_bytes): with temp == NULL they only store
 *   the scratch size in *temp_bytes, so a caller can budget memory before allocating;
 * - all pointers other than the documented host ones are device pointers; sizes are 64-bit.
 * Keys are unsigned "ordered bits" of `width` bytes (1, 2, 4, 8 or 16), see base/keys.h (the
 * _typed sorts and merge also take and give raw keys of any class, transformed inside); a
 * 16-byte key is an unsigned __int128 in host byte order (several keys composed, base/compose.h),
 * and its device arrays must be 16-byte aligned (cudaMalloc's are; offsets of whole keys keep it).
 * Nothing here knows of MPI or HDF5. */
#ifndef H5G_KERNELS_H
#define H5G_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "base/keys.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Forward (inverse == 0) or inverse ordered-bits transform of n device keys, in place; the
 * same bits as h5g_keys_to_ordered / h5g_keys_from_ordered. Integer keys of any width above,
 * floats of 4 or 8 bytes. No scratch. */
int h5g_cuda_keys_transform(void *keys, size_t n, const h5g_keyspec *ks, int inverse,
                            cudaStream_t stream);

/* Onesweep LSD radix sort of n keys ascending. `keys` holds the input and receives the result;
 * `alt` is scratch of n keys (the ping-pong buffer). With vals == NULL keys only; otherwise
 * vals[i] (uint64) moves with keys[i], alt_vals is scratch of n values, and the sort is stable
 * (equal keys keep their order). Passes (one per key byte) whose digit is the same for every key
 * are skipped; the routine waits once on the stream to learn which (a copy of 4 bytes per pass).
 * The scratch size depends on n, width and whether values move (their tile is smaller, so the
 * look-back table larger): a size query reads no buffer, only whether vals is NULL
 * (H5G_CUDA_QUERY_VALUES below). */
int h5g_cuda_radix_sort(void *temp, size_t *temp_bytes, void *keys, void *alt, uint64_t *vals,
                        uint64_t *alt_vals, size_t n, unsigned width, cudaStream_t stream);

/* The value buffer a size query of a key+value sort passes before its buffers exist: a query
 * never reads it (as CUDA's cudaStreamPerThread, a marker, not an address). */
#define H5G_CUDA_QUERY_VALUES ((uint64_t *)sizeof(uint64_t))

/* The `raw` flags of the _typed sorts and merge: keys of class ks (signed, float, descending)
 * come in as raw keys (H5G_CUDA_RAW_IN; else as their ordered bits) and leave as raw keys
 * (H5G_CUDA_RAW_OUT; else as ordered bits), in the order of their ordered bits either way. The
 * transforms happen inside the kernels that load and store the keys anyway, not in passes of
 * their own (kernels/key_map.cuh); flags without effect for unsigned ascending keys. */
#define H5G_CUDA_RAW_IN 1u
#define H5G_CUDA_RAW_OUT 2u

/* h5g_cuda_radix_sort of keys of class ks (width: ks->width), raw or not as `raw` says. */
int h5g_cuda_radix_sort_typed(void *temp, size_t *temp_bytes, void *keys, void *alt,
                              uint64_t *vals, uint64_t *alt_vals, size_t n,
                              const h5g_keyspec *ks, unsigned raw, cudaStream_t stream);

/* Largest n that h5g_cuda_bitonic_sort accepts (one thread block, keys in shared memory): 4096,
 * 2048 for 16-byte keys; 0 for an unsupported width. */
size_t h5g_cuda_bitonic_max(unsigned width);
/* Sorts n <= h5g_cuda_bitonic_max(width) keys ascending in place. No scratch. */
int h5g_cuda_bitonic_sort(void *keys, size_t n, unsigned width, cudaStream_t stream);

/* The local sort, same arguments as h5g_cuda_radix_sort: keys only, the bitonic sort up to the
 * measured crossover and the radix sort above it; with values always the radix sort (the bitonic
 * sort is not stable). */
int h5g_cuda_sort(void *temp, size_t *temp_bytes, void *keys, void *alt, uint64_t *vals,
                  uint64_t *alt_vals, size_t n, unsigned width, cudaStream_t stream);
/* h5g_cuda_sort of keys of class ks, raw or not as `raw` says (h5g_cuda_radix_sort_typed). */
int h5g_cuda_sort_typed(void *temp, size_t *temp_bytes, void *keys, void *alt, uint64_t *vals,
                        uint64_t *alt_vals, size_t n, const h5g_keyspec *ks, unsigned raw,
                        cudaStream_t stream);

/* values[i] = first + i for i < n (the source indices of a run's keys). No scratch. */
int h5g_cuda_iota(uint64_t *values, size_t n, uint64_t first, cudaStream_t stream);

/* out row i = rows row (index[i] - first_index) for i < n, rows of row_bytes bytes (any width;
 * rows and out hold whole rows from cudaMalloc'd addresses), rows holding n_rows of them. An index
 * outside them sets *outside (a device word) to 1 and leaves that row of out as it was. No
 * scratch. */
int h5g_cuda_gather_rows(const void *rows, size_t n_rows, size_t row_bytes,
                         const uint64_t *index, uint64_t first_index, size_t n, void *out,
                         unsigned *outside, cudaStream_t stream);

/* Adds h5g_keys_checksum of n device keys of `width` bytes (as they are: raw or ordered bits) to
 * *sum (a device word), mod 2^64. No scratch. */
int h5g_cuda_keys_checksum(const void *keys, size_t n, unsigned width, unsigned long long *sum,
                           cudaStream_t stream);

/* Exclusive prefix sum of n 64-bit values (single pass, decoupled look-back); out may equal in. */
int h5g_cuda_exclusive_scan(void *temp, size_t *temp_bytes, const uint64_t *in, uint64_t *out,
                            size_t n, cudaStream_t stream);

/* Cut points: for each of m values, the number of the n sorted keys that are < value
 * (upper == 0, lower bound) or <= value (upper != 0). values (m keys of `width` bytes, compared
 * as keys) and pos are device arrays. */
int h5g_cuda_cut_points(const void *keys, size_t n, unsigned width, const void *values, size_t m,
                        int upper, uint64_t *pos, cudaStream_t stream);

/* Merges sorted runs keys[run_offsets[i] .. run_offsets[i+1]), i < nruns, into sorted keys[0..n)
 * by rounds of pairwise merge-path merges; alt is scratch of n keys. With vals != NULL, vals[i]
 * (uint64) moves with keys[i] (alt_vals: scratch of n values) and the merge is stable: equal keys
 * keep their order, those of an earlier run first. run_offsets is a HOST array of nruns + 1
 * entries with run_offsets[nruns] == n. The scratch size does not depend on values. */
int h5g_cuda_merge_runs(void *temp, size_t *temp_bytes, void *keys, void *alt, uint64_t *vals,
                        uint64_t *alt_vals, size_t n, unsigned width, const uint64_t *run_offsets,
                        size_t nruns, cudaStream_t stream);

/* h5g_cuda_merge_runs of runs of ordered bits of class ks, the result raw keys with
 * H5G_CUDA_RAW_OUT (H5G_CUDA_RAW_IN is refused: a usage error). */
int h5g_cuda_merge_runs_typed(void *temp, size_t *temp_bytes, void *keys, void *alt,
                              uint64_t *vals, uint64_t *alt_vals, size_t n, const h5g_keyspec *ks,
                              unsigned raw, const uint64_t *run_offsets, size_t nruns,
                              cudaStream_t stream);

/* Pairwise merge rounds h5g_cuda_merge_runs makes for nruns runs: ceil(log2 nruns). */
size_t h5g_cuda_merge_rounds(size_t nruns);

#ifdef __cplusplus
}
#endif
#endif
