/* The onesweep radix sort's upfront histogram (radix_sort.cuh, steps 1 and 2): one read of the
 * keys counts the digits of every pass at once (histogram_kernel, as CUB's
 * AgentRadixSortHistogram: clear the block's counters, count, add them to the grid's), then per
 * pass the exclusive scan of the counts and how many digits hold keys (bins_kernel). With the
 * top digits first's sample, one more block of the histogram kernel takes it (onesweep_sample). */
#ifndef H5G_ONESWEEP_HISTOGRAM_CUH
#define H5G_ONESWEEP_HISTOGRAM_CUH

#include <stdint.h>

#include "kernels/block_radix_rank.cuh"
#include "kernels/block_scan.cuh"
#include "kernels/check_cuda.cuh"
#include "kernels/key_map.cuh"
#include "kernels/onesweep_common.cuh"
#include "kernels/onesweep_sample.cuh"
#include "kernels/tuning.cuh"

namespace h5g {
namespace onesweep {

/* Shared counters are spread over COPIES copies, copy = lane % COPIES, interleaved (counter of
 * digit d in copy c at d * COPIES + c): with 32 copies every lane of a warp counts in its own
 * bank, with 16 two lanes share one. As many copies as `bytes` of shared memory hold, at most
 * 32. */
/* Shared memory of the counters of all passes in `copies` copies. */
template <typename K> __host__ __device__ constexpr size_t hist_bytes(int copies) {
  return sizeof(K) * RADIX * (size_t)copies * sizeof(uint32_t);
}

template <typename K> __host__ __device__ constexpr int hist_copies(size_t bytes) {
  return bytes / hist_bytes<K>(1) < 32 ? (int)(bytes / hist_bytes<K>(1)) : 32;
}

/* Counts the digits of every pass of the keys this block takes (of `blocks` counting blocks)
 * into hist[PASSES][RADIX][COPIES], which is cleared. HIST_ITEMS loads in flight per thread
 * before their atomics: the loop is latency-bound with one. */
template <typename K, bool MAPPED, int BLOCK, int COPIES>
__device__ __forceinline__ void count_block_keys(const K *keys, uint64_t n, const KeyMap<K> &load,
                                                 uint32_t blocks, uint32_t *hist) {
  constexpr int PASSES = sizeof(K);
  const uint32_t copy = threadIdx.x % COPIES;
  const uint64_t chunk = (uint64_t)BLOCK * HIST_ITEMS;
  for (uint64_t base = blockIdx.x * chunk + threadIdx.x; base < n; base += blocks * chunk) {
    K k[HIST_ITEMS];
#pragma unroll
    for (int j = 0; j < HIST_ITEMS; ++j) {
      const uint64_t i = base + (uint64_t)j * BLOCK;
      k[j] = i < n ? keys[i] : (K)0;
      if constexpr (MAPPED) k[j] = load.forward(k[j]);
    }
#pragma unroll
    for (int j = 0; j < HIST_ITEMS; ++j) {
      if (base + (uint64_t)j * BLOCK >= n) break;
#pragma unroll
      for (int p = 0; p < PASSES; ++p)
        atomicAdd(&hist[(p * RADIX + digit_of(k[j], p * RADIX_BITS)) * COPIES + copy], 1u);
    }
  }
}

/* MAPPED: the keys are raw, load.forward gives their ordered bits. Dynamic shared memory:
 * sizeof(K) * RADIX * COPIES counters. With `differ`, the grid's last block takes the top digits
 * first's sample instead (sample_differences), beside the others rather than after them. */
template <typename K, bool MAPPED, int BLOCK, int COPIES>
__global__ void __launch_bounds__(BLOCK)
    histogram_kernel(const K *__restrict__ keys, uint64_t n, unsigned long long *counts,
                     KeyMap<K> load, uint32_t *differ) {
  constexpr int PASSES = sizeof(K), COUNTERS = PASSES * RADIX * COPIES;
  extern __shared__ __align__(16) char smem_raw[];
  const uint32_t blocks = gridDim.x - (differ ? 1 : 0); /* those that count */
  if constexpr (sizeof(K) >= 8) { /* the keys that may take the top digits first */
    static_assert(hist_bytes<K>(COPIES) >= TOP_SAMPLE * sizeof(K) + MAX_PASSES * sizeof(uint32_t),
                  "the sample fits the counters' shared memory");
    if (blockIdx.x == blocks) {
      sample_differences<K, BLOCK>(keys, n, load, differ, smem_raw);
      return;
    }
  }
  uint32_t *hist = reinterpret_cast<uint32_t *>(smem_raw); /* [PASSES][RADIX][COPIES] */
  for (int i = threadIdx.x; i < COUNTERS; i += BLOCK) hist[i] = 0;
  __syncthreads();
  count_block_keys<K, MAPPED, BLOCK, COPIES>(keys, n, load, blocks, hist);
  __syncthreads();
  /* The block's counters, summed over their copies, to the grid's counts. Each thread sums one
   * counter's copies starting at a copy of its own, so that a warp's lanes read 32 different
   * banks (32 / COPIES lanes share a start, in different banks). (In a function of its own this
   * loop takes other registers.) */
  static_assert(32 % COPIES == 0, "copies divide the banks");
  for (int i = threadIdx.x; i < PASSES * RADIX; i += BLOCK) {
    uint32_t c = 0;
#pragma unroll 8
    for (int j = 0; j < COPIES; ++j) c += hist[i * COPIES + (j + i / (32 / COPIES)) % COPIES];
    if (c) atomicAdd(&counts[i], (unsigned long long)c);
  }
}

/* One block of RADIX threads per pass; digits[pass]: how many digits hold keys (1: the pass is
 * trivial, every key in one digit, and is skipped). */
template <int UNUSED = 0>
__global__ void bins_kernel(const unsigned long long *counts, uint64_t *bins, uint32_t *digits) {
  __shared__ uint64_t warp_sums[RADIX / 32 + 1];
  const int pass = blockIdx.x, d = threadIdx.x;
  const uint64_t c = counts[pass * RADIX + d];
  uint64_t total;
  bins[pass * RADIX + d] = block_exclusive_sum<RADIX>((uint64_t)c, warp_sums, &total);
  const int nonempty = __syncthreads_count(c != 0);
  if (d == 0) digits[pass] = (uint32_t)nonempty;
}

/* Launches histogram_kernel on `device` (the current one) into s.counts, which must be zero, in
 * blocks of BLOCK threads with COPIES counter copies (other shapes than launch_histogram's are
 * for bench_local_sort); with `differ` one block more (or one of the most that fit the device)
 * takes the sample. */
template <typename K, int BLOCK, int COPIES>
int launch_histogram_shape(const K *keys, size_t n, const KeyMap<K> &load, Scratch &s,
                           int device, cudaStream_t stream, uint32_t *differ = nullptr) {
  int rc = H5G_OK;
  int sms = 0, per_sm = 0;
  const size_t smem = hist_bytes<K>(COPIES);
  const auto kernel = load.identity() ? histogram_kernel<K, false, BLOCK, COPIES>
                                      : histogram_kernel<K, true, BLOCK, COPIES>;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK, smem));
  {
    const uint64_t blocks_needed = (n + BLOCK * HIST_ITEMS - 1) / (BLOCK * HIST_ITEMS);
    const unsigned sampling = differ ? 1 : 0;
    const uint64_t fit = (uint64_t)sms * (per_sm > 0 ? per_sm : 1);
    const uint64_t most = fit > sampling ? fit - sampling : 1;
    const uint64_t counting = blocks_needed < most ? blocks_needed : most;
    kernel<<<(unsigned)counting + sampling, BLOCK, smem, stream>>>(keys, n, s.counts, load,
                                                                   differ);
  }
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}

/* Launches the upfront histogram of all passes into s.counts, of ordered bits: load maps the
 * keys read to them. In HIST_SHARED_BYTES of shared memory, or HIST_SHARED_FALLBACK_BYTES on a
 * device whose blocks may not have that much (before Hopper: 96-99 KB). With `differ`, the top
 * digits first's sample too (sample_differences). */
template <typename K>
int launch_histogram(const K *keys, size_t n, const KeyMap<K> &load, Scratch &s,
                     cudaStream_t stream, uint32_t *differ) {
  constexpr int COPIES = hist_copies<K>(HIST_SHARED_BYTES);
  int rc = H5G_OK, device = 0, most = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if ((size_t)most >= hist_bytes<K>(COPIES))
    CHECK((launch_histogram_shape<K, HIST_BLOCK, COPIES>(keys, n, load, s, device, stream,
                                                         differ)));
  else
    CHECK((launch_histogram_shape<K, HIST_BLOCK, hist_copies<K>(HIST_SHARED_FALLBACK_BYTES)>(
        keys, n, load, s, device, stream, differ)));
done:
  return rc;
}

} // namespace onesweep
} // namespace h5g
#endif
