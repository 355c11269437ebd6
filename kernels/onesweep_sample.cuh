/* The top digits first's sample (radix_sort.cuh): one block beside the histogram's sorts
 * TOP_SAMPLE keys and counts, per byte, its neighbours that differ first there; the host then
 * vetoes the top digits first where more neighbours share the top digits yet differ than chance
 * gives (long runs of such keys would send the sort through every pass on top). */
#ifndef H5G_ONESWEEP_SAMPLE_CUH
#define H5G_ONESWEEP_SAMPLE_CUH

#include <math.h>
#include <stdint.h>

#include "kernels/block_bitonic.cuh"
#include "kernels/key_map.cuh"
#include "kernels/onesweep_common.cuh"
#include "kernels/tuning.cuh"

namespace h5g {
namespace onesweep {

/* The byte of the highest bit set in x != 0. */
template <typename K> __device__ __forceinline__ int highest_byte(K x) {
  if constexpr (sizeof(K) > 8) {
    const uint64_t high = (uint64_t)(x >> 64);
    if (high) return 8 + (63 - __clzll((long long)high)) / 8;
  }
  return (63 - __clzll((long long)(uint64_t)x)) / 8;
}

/* The top digits first's sample, taken by one block of BLOCK threads in `smem` (room for
 * TOP_SAMPLE keys and MAX_PASSES counters): TOP_SAMPLE keys of keys[0..n) (n >= TOP_SAMPLE, a
 * power of two: tuning.cuh), one from a hashed place in each of TOP_SAMPLE equal stretches,
 * mapped to ordered bits by `load` and sorted; differ[b] counts its neighbours whose highest
 * differing byte is b (they share every digit above b). */
template <typename K, int BLOCK>
__device__ void sample_differences(const K *keys, uint64_t n, const KeyMap<K> &load,
                                   uint32_t *differ, char *smem) {
  K *sample = reinterpret_cast<K *>(smem);
  uint32_t *by_byte = reinterpret_cast<uint32_t *>(sample + TOP_SAMPLE);
  static_assert(BLOCK >= MAX_PASSES, "a thread per byte clears and writes by_byte");
  if (threadIdx.x < MAX_PASSES) by_byte[threadIdx.x] = 0;
  for (int t = threadIdx.x; t < TOP_SAMPLE; t += BLOCK) {
    const uint64_t begin = t * n / TOP_SAMPLE, stretch = (t + 1) * n / TOP_SAMPLE - begin;
    sample[t] = load.forward(keys[begin + ((t + 1) * 0x9e3779b97f4a7c15ull >> 40) % stretch]);
  }
  __syncthreads();
  block_bitonic_sort<K, BLOCK>(sample, TOP_SAMPLE);
  for (int t = threadIdx.x + 1; t < TOP_SAMPLE; t += BLOCK)
    if (sample[t - 1] != sample[t])
      atomicAdd(&by_byte[highest_byte<K>(sample[t - 1] ^ sample[t])], 1u);
  __syncthreads();
  if (threadIdx.x < MAX_PASSES) differ[threadIdx.x] = by_byte[threadIdx.x];
}

/* Whether the sample lets the top digits first start at pass `top` (n >= TOP_SAMPLE_MIN_KEYS):
 * no more of its neighbours share the top digits yet differ (differ[b] for b below `top`) than
 * chance gives keys spread over the top digits' values. Such keys, 16 or more values per key
 * (top_digits_pass), give at most m^2 / (32 n) such pairs on average among m = TOP_SAMPLE sorted
 * keys (Poisson); allowed is what that mean exceeds with probability under 1% (3 pairs at
 * n = 2^16, 2 at 2^17, 1 from 2^18, none from about 3.3 M keys). Long runs of keys that share
 * the top digits give more: tied tops about one neighbour in 10, vetoed from 2^16 on; k values
 * repeated among random keys k - 1 (two values: vetoed where none is allowed). Those runs,
 * unless in order, send the sort through every pass after the top ones. The veto counts pairs,
 * not runs or their order: keys whose shared top digits hold many short runs, or long runs in
 * order, may be vetoed too, and then cost what every pass costs. Equal neighbours do not count:
 * one long run of one value is in order. */
inline bool sample_allows_top(const uint32_t *differ, int top, size_t n) {
  const double mean = (double)TOP_SAMPLE * TOP_SAMPLE / (32.0 * (double)n);
  double term = exp(-mean), below = term; /* P(X = allowed), P(X <= allowed) */
  uint64_t sharing = 0, allowed = 0;
  for (int b = 0; b < top; ++b) sharing += differ[b];
  while (1 - below > 0.01) {
    ++allowed;
    term *= mean / (double)allowed;
    below += term;
  }
  return sharing <= allowed;
}

} // namespace onesweep
} // namespace h5g
#endif
