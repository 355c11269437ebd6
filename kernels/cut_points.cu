/* Cut points: binary search of many splitter values in sorted keys, one thread per value. The
 * values are keys of the same width, compared as such (a 16-byte key does not fit a uint64). */
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "kernels/util.cuh"

namespace h5g {
namespace {

constexpr int CUT_BLOCK = 256;

template <typename K>
__global__ void __launch_bounds__(CUT_BLOCK)
    cut_points_kernel(const K *keys, uint64_t n, const K *values, uint64_t m, bool upper,
                      uint64_t *pos) {
  const uint64_t i = (uint64_t)blockIdx.x * CUT_BLOCK + threadIdx.x;
  if (i >= m) return;
  const K x = values[i];
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    const K k = keys[mid];
    if (upper ? k <= x : k < x) lo = mid + 1;
    else hi = mid;
  }
  pos[i] = lo;
}

} // namespace
} // namespace h5g

extern "C" int h5g_cuda_cut_points(const void *keys, size_t n, unsigned width, const void *values,
                                   size_t m, int upper, uint64_t *pos, cudaStream_t stream) {
  int rc = H5G_OK;
  CHECK(h5g::check_width(width, "the cut points"));
  if (m == 0) goto done;
  h5g::dispatch_width(width, [&](auto tag) {
    using K = decltype(tag);
    h5g::cut_points_kernel<K><<<(unsigned)((m + h5g::CUT_BLOCK - 1) / h5g::CUT_BLOCK), h5g::CUT_BLOCK,
                                0, stream>>>((const K *)keys, n, (const K *)values, m, upper != 0,
                                             pos);
    return 0;
  });
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}
