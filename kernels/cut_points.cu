/* Cut points: binary search of many splitter values in sorted keys, one thread per value. */
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "kernels/util.cuh"

namespace h5g {
namespace {

constexpr int CUT_BLOCK = 256;

template <typename K>
__global__ void __launch_bounds__(CUT_BLOCK)
    cut_points_kernel(const K *keys, uint64_t n, const uint64_t *values, uint64_t m, bool upper,
                      uint64_t *pos) {
  const uint64_t i = (uint64_t)blockIdx.x * CUT_BLOCK + threadIdx.x;
  if (i >= m) return;
  const uint64_t x = values[i];
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    const uint64_t k = keys[mid];
    if (upper ? k <= x : k < x) lo = mid + 1;
    else hi = mid;
  }
  pos[i] = lo;
}

} // namespace
} // namespace h5g

extern "C" int h5g_cuda_cut_points(const void *keys, size_t n, unsigned width,
                                   const uint64_t *values, size_t m, int upper, uint64_t *pos,
                                   cudaStream_t stream) {
  int rc = H5G_OK;
  if (width != 1 && width != 2 && width != 4 && width != 8)
    H5G_FAIL(H5G_ERR_USAGE, "unsupported key width %u", width);
  if (m == 0) goto done;
  h5g::dispatch_width(width, [&](auto tag) {
    using K = decltype(tag);
    h5g::cut_points_kernel<K><<<(unsigned)((m + h5g::CUT_BLOCK - 1) / h5g::CUT_BLOCK), h5g::CUT_BLOCK,
                                0, stream>>>((const K *)keys, n, values, m, upper != 0, pos);
    return 0;
  });
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}
