/* h5g_cuda_gather_rows: rows put in the order of the keys' sort by their source indices, on the
 * device (carried datasets and a table's rows following the keys, src/carry.c). */
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"

namespace {

constexpr int GATHER_BLOCK = 256;
/* Enough blocks to fill the device for a load-bound loop; each thread strides beyond them. */
constexpr uint64_t GATHER_MAX_BLOCKS = 8192;

/* Thread i copies word i % words of row i / words: the words of a row are neighbours, so a
 * warp's stores are coalesced and each source row is read in whole sectors. */
template <typename W>
__global__ void __launch_bounds__(GATHER_BLOCK)
    gather_kernel(const W *rows, uint64_t n_rows, uint64_t words, const uint64_t *index,
                  uint64_t first_index, uint64_t n, W *out, unsigned *outside) {
  const uint64_t stride = (uint64_t)gridDim.x * GATHER_BLOCK, total = n * words;
  for (uint64_t i = (uint64_t)blockIdx.x * GATHER_BLOCK + threadIdx.x; i < total; i += stride) {
    const uint64_t row = i / words, word = i - row * words;
    const uint64_t src = index[row] - first_index; /* below first_index: wraps, so outside */
    if (src < n_rows) out[i] = rows[src * words + word];
    else *outside = 1;
  }
}

template <typename W>
int launch(const void *rows, uint64_t n_rows, size_t row_bytes, const uint64_t *index,
           uint64_t first_index, uint64_t n, void *out, unsigned *outside, cudaStream_t stream) {
  int rc = H5G_OK;
  const uint64_t words = row_bytes / sizeof(W);
  const uint64_t blocks = (n * words + GATHER_BLOCK - 1) / GATHER_BLOCK;
  gather_kernel<W><<<(unsigned)(blocks < GATHER_MAX_BLOCKS ? blocks : GATHER_MAX_BLOCKS),
                     GATHER_BLOCK, 0, stream>>>((const W *)rows, n_rows, words, index,
                                                first_index, n, (W *)out, outside);
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}

} // namespace

extern "C" int h5g_cuda_gather_rows(const void *rows, size_t n_rows, size_t row_bytes,
                                    const uint64_t *index, uint64_t first_index, size_t n,
                                    void *out, unsigned *outside, cudaStream_t stream) {
  if (n == 0 || row_bytes == 0) return H5G_OK;
  /* the widest word that divides the row (the buffers are cudaMalloc's, 256-byte aligned) */
  if (row_bytes % 16 == 0)
    return launch<uint4>(rows, n_rows, row_bytes, index, first_index, n, out, outside, stream);
  if (row_bytes % 8 == 0)
    return launch<uint64_t>(rows, n_rows, row_bytes, index, first_index, n, out, outside, stream);
  if (row_bytes % 4 == 0)
    return launch<uint32_t>(rows, n_rows, row_bytes, index, first_index, n, out, outside, stream);
  if (row_bytes % 2 == 0)
    return launch<uint16_t>(rows, n_rows, row_bytes, index, first_index, n, out, outside, stream);
  return launch<uint8_t>(rows, n_rows, row_bytes, index, first_index, n, out, outside, stream);
}
