/* h5g_cuda_iota: the source indices first, first + 1, ... of a run's keys, made on the device
 * (the resident path's values: they never cross the bus inward). */
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"

namespace {

constexpr int IOTA_BLOCK = 256;
/* Enough blocks to fill the device for a store-bound loop; each thread strides beyond them. */
constexpr uint64_t IOTA_MAX_BLOCKS = 4096;

__global__ void __launch_bounds__(IOTA_BLOCK)
    iota_kernel(uint64_t *values, uint64_t n, uint64_t first) {
  const uint64_t stride = (uint64_t)gridDim.x * IOTA_BLOCK;
  for (uint64_t i = (uint64_t)blockIdx.x * IOTA_BLOCK + threadIdx.x; i < n; i += stride)
    values[i] = first + i;
}

} // namespace

extern "C" int h5g_cuda_iota(uint64_t *values, size_t n, uint64_t first, cudaStream_t stream) {
  int rc = H5G_OK;
  const uint64_t blocks = (n + IOTA_BLOCK - 1) / IOTA_BLOCK;
  if (n == 0) goto done;
  iota_kernel<<<(unsigned)(blocks < IOTA_MAX_BLOCKS ? blocks : IOTA_MAX_BLOCKS), IOTA_BLOCK, 0,
                stream>>>(values, n, first);
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}
