/* h5g_cuda_keys_checksum: h5g_keys_checksum of keys on the device (--verify's checksum of the
 * input, taken where the keys are loaded instead of by a pass of the host over them). */
#include "base/mix.h"
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"

namespace {

constexpr int CHECKSUM_BLOCK = 256;
/* Enough blocks to fill the device for a load-bound loop; each thread strides beyond them. */
constexpr uint64_t CHECKSUM_MAX_BLOCKS = 4096;

/* Each thread sums its keys' terms, each warp its threads', and one atomic add per warp; the sum
 * wraps mod 2^64 as the host's does. */
template <typename T>
__global__ void __launch_bounds__(CHECKSUM_BLOCK)
    checksum_kernel(const T *keys, uint64_t n, uint64_t salt, unsigned long long *sum) {
  const uint64_t stride = (uint64_t)gridDim.x * CHECKSUM_BLOCK;
  uint64_t local = 0;
  for (uint64_t i = (uint64_t)blockIdx.x * CHECKSUM_BLOCK + threadIdx.x; i < n; i += stride) {
    const unsigned __int128 k = keys[i]; /* narrower keys: the high half is 0 */
    local += h5g_checksum_term((uint64_t)k, (uint64_t)(k >> 64), salt);
  }
  for (int offset = 16; offset > 0; offset /= 2) local += __shfl_down_sync(~0u, local, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(sum, (unsigned long long)local);
}

template <typename T>
int launch(const void *keys, uint64_t n, unsigned bits, unsigned long long *sum,
           cudaStream_t stream) {
  int rc = H5G_OK;
  const uint64_t blocks = (n + CHECKSUM_BLOCK - 1) / CHECKSUM_BLOCK;
  checksum_kernel<T><<<(unsigned)(blocks < CHECKSUM_MAX_BLOCKS ? blocks : CHECKSUM_MAX_BLOCKS),
                       CHECKSUM_BLOCK, 0, stream>>>((const T *)keys, n, h5g_checksum_salt(bits),
                                                    sum);
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}

} // namespace

extern "C" int h5g_cuda_keys_checksum(const void *keys, size_t n, unsigned width,
                                      unsigned long long *sum, cudaStream_t stream) {
  if (n == 0) return H5G_OK;
  switch (width) {
  case 1: return launch<uint8_t>(keys, n, 8, sum, stream);
  case 2: return launch<uint16_t>(keys, n, 16, sum, stream);
  case 4: return launch<uint32_t>(keys, n, 32, sum, stream);
  case 16: return launch<unsigned __int128>(keys, n, 128, sum, stream);
  default: return launch<uint64_t>(keys, n, 64, sum, stream);
  }
}
