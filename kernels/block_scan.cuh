/* Block primitive: exclusive prefix sum of one value per thread across a thread block
 * (warp shuffles, then one warp scans the warp totals). */
#ifndef H5G_BLOCK_SCAN_CUH
#define H5G_BLOCK_SCAN_CUH

namespace h5g {

template <typename T> __device__ __forceinline__ T warp_inclusive_sum(T v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    T up = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += up;
  }
  return v;
}

/* Exclusive sum of v over the block; *total receives the block's sum. `warp_sums` is shared
 * memory of BLOCK / 32 entries. Contains barriers: every thread must call it. */
template <int BLOCK, typename T>
__device__ __forceinline__ T block_exclusive_sum(T v, T *warp_sums, T *total) {
  constexpr int WARPS = BLOCK / 32;
  static_assert(WARPS <= 32, "one warp scans the warp totals");
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T inclusive = warp_inclusive_sum(v);
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    T s = lane < WARPS ? warp_sums[lane] : (T)0;
    T s_inclusive = warp_inclusive_sum(s);
    if (lane < WARPS) warp_sums[lane] = s_inclusive - s;
    if (lane == WARPS - 1) warp_sums[WARPS] = s_inclusive;
  }
  __syncthreads();
  T result = warp_sums[warp] + inclusive - v;
  *total = warp_sums[WARPS];
  __syncthreads();
  return result;
}

} // namespace h5g
#endif
