/* Single-pass exclusive prefix sum of 64-bit values with decoupled look-back (Merrill & Garland,
 * "Single-pass parallel prefix scan with decoupled look-back", 2016).
 * A block takes the next tile (atomic counter), sums it, publishes the tile's aggregate, walks
 * back over its predecessors until one has published an inclusive prefix, publishes its own
 * inclusive prefix, and writes the tile's exclusive sums. Values and flags are separate words:
 * a value is written, then fenced, then its flag. */
#include "kernels/block_scan.cuh"
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "kernels/tuning.cuh"
#include "kernels/util.cuh"

namespace h5g {
namespace {

enum : uint32_t { TILE_EMPTY = 0, TILE_AGGREGATE = 1, TILE_INCLUSIVE = 2 };

__global__ void __launch_bounds__(SCAN_BLOCK)
    scan_kernel(const uint64_t *in, uint64_t *out, uint64_t n, uint32_t *tile_counter,
                uint32_t *flags, uint64_t *aggregates, uint64_t *inclusives) {
  constexpr int TILE = SCAN_BLOCK * SCAN_ITEMS;
  __shared__ uint64_t values[TILE];
  __shared__ uint64_t warp_sums[SCAN_BLOCK / 32 + 1];
  __shared__ uint64_t tile_prefix;
  __shared__ uint32_t tile_id;
  if (threadIdx.x == 0) tile_id = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const uint32_t tile = tile_id;
  const uint64_t begin = (uint64_t)tile * TILE;
  const uint32_t valid = (uint32_t)min((uint64_t)TILE, n - begin);

  for (uint32_t i = threadIdx.x; i < TILE; i += SCAN_BLOCK) values[i] = i < valid ? in[begin + i] : 0;
  __syncthreads();
  uint64_t mine[SCAN_ITEMS], sum = 0;
#pragma unroll
  for (int i = 0; i < SCAN_ITEMS; ++i) {
    mine[i] = values[threadIdx.x * SCAN_ITEMS + i];
    sum += mine[i];
  }
  uint64_t tile_total;
  uint64_t prefix = block_exclusive_sum<SCAN_BLOCK>(sum, warp_sums, &tile_total);

  if (threadIdx.x == 0) {
    volatile uint32_t *vflags = flags;
    volatile uint64_t *vagg = aggregates, *vinc = inclusives;
    uint64_t exclusive = 0;
    if (tile > 0) {
      vagg[tile] = tile_total;
      __threadfence();
      vflags[tile] = TILE_AGGREGATE;
      for (int64_t pred = (int64_t)tile - 1;;) {
        const uint32_t f = vflags[pred];
        if (f == TILE_EMPTY) continue;
        __threadfence();
        if (f == TILE_INCLUSIVE) {
          exclusive += vinc[pred];
          break;
        }
        exclusive += vagg[pred];
        --pred;
      }
    }
    vinc[tile] = exclusive + tile_total;
    __threadfence();
    vflags[tile] = TILE_INCLUSIVE;
    tile_prefix = exclusive;
  }
  __syncthreads();
  prefix += tile_prefix;
#pragma unroll
  for (int i = 0; i < SCAN_ITEMS; ++i) {
    values[threadIdx.x * SCAN_ITEMS + i] = prefix;
    prefix += mine[i];
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < valid; i += SCAN_BLOCK) out[begin + i] = values[i];
}

} // namespace
} // namespace h5g

extern "C" int h5g_cuda_exclusive_scan(void *temp, size_t *temp_bytes, const uint64_t *in,
                                       uint64_t *out, size_t n, cudaStream_t stream) {
  constexpr size_t TILE = (size_t)h5g::SCAN_BLOCK * h5g::SCAN_ITEMS;
  int rc = H5G_OK;
  const size_t ntiles = (n + TILE - 1) / TILE;
  h5g::ScratchLayout s{(char *)temp, 0};
  uint32_t *counter_and_flags = s.take<uint32_t>(1 + ntiles);
  uint64_t *aggregates = s.take<uint64_t>(ntiles);
  uint64_t *inclusives = s.take<uint64_t>(ntiles);
  if (!temp) {
    *temp_bytes = s.used;
    return H5G_OK;
  }
  if (*temp_bytes < s.used)
    H5G_FAIL(H5G_ERR_USAGE, "scan scratch of %zu bytes is smaller than the %zu needed", *temp_bytes,
             s.used);
  if (n == 0) goto done;
  CHECK_CUDA(cudaMemsetAsync(counter_and_flags, 0, (1 + ntiles) * sizeof(uint32_t), stream));
  h5g::scan_kernel<<<(unsigned)ntiles, h5g::SCAN_BLOCK, 0, stream>>>(
      in, out, n, counter_and_flags, counter_and_flags + 1, aggregates, inclusives);
  CHECK_CUDA(cudaGetLastError());
done:
  return rc;
}
