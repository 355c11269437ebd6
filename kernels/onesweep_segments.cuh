/* The top digits first of keys-only 64- and 128-bit sorts (radix_sort.cuh): where the top digits
 * could tell the keys apart (top_digits_pass), the sort runs their passes alone, then
 * sort_short_segments sorts each run of keys with equal top digits in place (random keys: few
 * runs, of a few keys) and reports whether a longer run is out of order, which sends the sort
 * through every pass from there (LSD passes sort any order). */
#ifndef H5G_ONESWEEP_SEGMENTS_CUH
#define H5G_ONESWEEP_SEGMENTS_CUH

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/check_cuda.cuh"
#include "kernels/key_map.cuh"
#include "kernels/tuning.cuh"

namespace h5g {
namespace onesweep {

/* Keys-only 64- and 128-bit sorts: the lowest pass of the top digits that could tell n keys
 * apart with room to spare (at most prod(digits holding keys) values; at least 16 per key, so
 * that uniform keys share their top digits in runs of about one in 16), or `first` when that
 * takes every pass. digits[pass] from bins_kernel; passes first..last are the nontrivial span. */
inline int top_digits_pass(const uint32_t *digits, int first, int last, size_t n) {
  const double enough = log2((double)n) + 4;
  double log2_values = 0;
  for (int pass = last; pass > first; --pass) {
    log2_values += log2((double)digits[pass]);
    if (log2_values >= enough) return pass;
  }
  return first;
}

/* Keys in a run of equal top digits that one thread sorts in sort_short_segments. */
constexpr int TIE_SEGMENT_MAX = 16;

/* Sorts the segment (run of keys with equal top bits) that starts at keys[i] with key and next,
 * its first two keys as ordered bits, in place when it holds at most TIE_SEGMENT_MAX keys.
 * Returns false when it is longer and out of order within its first TIE_SEGMENT_MAX + 1 keys. */
template <typename K>
__device__ __noinline__ bool sort_segment(K *keys, uint64_t i, uint64_t n, int shift,
                                          const KeyMap<K> &map, K key, K next) {
  K seg[TIE_SEGMENT_MAX];
  const K top = key >> shift;
  int len = 0;
  bool sorted = true;
  seg[len++] = key;
  for (uint64_t j = i + 1; j < n; ++j) {
    const K k = j == i + 1 ? next : map.forward(keys[j]);
    if (k >> shift != top) break;
    if (k < seg[len - 1]) sorted = false;
    if (len == TIE_SEGMENT_MAX) return sorted;
    seg[len++] = k;
  }
  if (sorted) return true;
  for (int a = 1; a < len; ++a) { /* insertion sort: a few keys */
    const K k = seg[a];
    int b = a;
    for (; b > 0 && seg[b - 1] > k; --b) seg[b] = seg[b - 1];
    seg[b] = k;
  }
  for (int a = 0; a < len; ++a) keys[i + a] = map.inverse(seg[a]);
  return true;
}

/* keys[] are in order of their top bits (those from `shift` up), in the form that map.forward turns
 * into ordered bits. Sorts each segment (run of keys with equal top bits) of at most
 * TIE_SEGMENT_MAX keys in place, by its first key's thread (sort_segment); sets *unsorted when a
 * longer segment is out of order. Only short segments are written, each by one thread, so the keys
 * of long ones read whole; and top bits, equal across a segment, read the same however far its sort
 * has come (a 16-byte key read torn between two keys of a segment too: 16-byte maps are XORs, so
 * its halves keep their segment's top bits). A long segment's first TIE_SEGMENT_MAX + 1 keys are
 * checked by its first key's thread, every later pair by the thread of its second key. Each thread
 * takes SEGMENT_ITEMS keys at a time with the keys either side (loads in flight: the kernel is
 * bound by their latency with one). */
template <typename K>
__global__ void __launch_bounds__(SEGMENT_BLOCK)
    sort_short_segments(K *keys, uint64_t n, int shift, KeyMap<K> map, uint32_t *unsorted) {
  bool out_of_order = false;
  const uint64_t stride = (uint64_t)gridDim.x * SEGMENT_BLOCK * SEGMENT_ITEMS;
  for (uint64_t base = ((uint64_t)blockIdx.x * SEGMENT_BLOCK + threadIdx.x) * SEGMENT_ITEMS;
       base < n; base += stride) {
    K k[SEGMENT_ITEMS + 2]; /* keys base - 1 .. base + SEGMENT_ITEMS */
#pragma unroll
    for (int p = 0; p < SEGMENT_ITEMS + 2; ++p)
      k[p] = base + p >= 1 && base + p - 1 < n ? map.forward(keys[base + p - 1]) : (K)0;
#pragma unroll
    for (int p = 1; p <= SEGMENT_ITEMS; ++p) {
      const uint64_t i = base + p - 1;
      if (i >= n) break;
      const K top = k[p] >> shift;
      if (i > 0 && k[p - 1] >> shift == top) { /* not a segment's first key */
        if (i >= (uint64_t)TIE_SEGMENT_MAX && k[p - 1] > k[p] &&
            map.forward(keys[i - TIE_SEGMENT_MAX]) >> shift == top)
          out_of_order = true;
        continue;
      }
      if (i + 1 == n || k[p + 1] >> shift != top) continue; /* a segment of one key: most */
      if (!sort_segment(keys, i, n, shift, map, k[p], k[p + 1])) out_of_order = true;
    }
  }
  if (out_of_order) atomicOr(unsorted, 1u);
}

/* Launches sort_short_segments on keys[0..n), in order of their bits from `shift` up and in the
 * form that map.forward turns into ordered bits, and waits for it: *unsorted says whether a
 * segment longer than TIE_SEGMENT_MAX is out of order. flag: one word of device scratch. */
template <typename K>
int launch_short_segments(K *keys, size_t n, int shift, const KeyMap<K> &map, uint32_t *flag,
                          bool *unsorted, cudaStream_t stream) {
  int rc = H5G_OK;
  uint32_t out_of_order = 0;
  const size_t chunk = (size_t)SEGMENT_BLOCK * SEGMENT_ITEMS,
               blocks = (n + chunk - 1) / chunk < 2048 ? (n + chunk - 1) / chunk : 2048;
  CHECK_CUDA(cudaMemsetAsync(flag, 0, sizeof out_of_order, stream));
  sort_short_segments<K><<<(unsigned)blocks, SEGMENT_BLOCK, 0, stream>>>(keys, n, shift, map,
                                                                         flag);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(
      cudaMemcpyAsync(&out_of_order, flag, sizeof out_of_order, cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  *unsorted = out_of_order != 0;
done:
  return rc;
}

} // namespace onesweep
} // namespace h5g
#endif
