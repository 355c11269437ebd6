/* Stable key+value sort on the GPU, two ways, both measured by bench/local_sort.cu's "pairs"
 * section against cub::DeviceRadixSort::SortPairs (bench/RESULTS.md, "GPU record sort"):
 * - direct (the product's, h5g_cuda_sort_pairs): the onesweep radix sort (radix_sort.cuh) moves
 *   the uint64 values with the keys, every pass (8 + 8 bytes of value traffic per pass);
 * - via index (kept for the measurement): it moves a 32-bit position instead (4 + 4 bytes per
 *   pass), then one gather puts each uint64 value where its position went and a copy brings
 *   them back; needs n < 2^32 and 2 x 4 bytes per pair of scratch. Slower at every width on H200
 *   (2^28 pairs, uint64 keys: 35.6 ms vs 29.2): the random 8-byte gather, the index
 *   initialisation and the copy back cost more than the 4 bytes a pass saves.
 * Both are stable: the onesweep passes are. The bitonic sort is not, so pairs always take the
 * radix sort. */
#ifndef H5G_SORT_PAIRS_CUH
#define H5G_SORT_PAIRS_CUH

#include "kernels/radix_sort.cuh"

namespace h5g {
namespace pairs {

template <typename K> using Shape = OnesweepPairsTuning<sizeof(K)>;

template <typename K>
int sort_direct(void *temp, size_t *temp_bytes, K *keys, K *alt, uint64_t *vals,
                uint64_t *alt_vals, size_t n, cudaStream_t stream) {
  using T = Shape<K>;
  return onesweep::sort<K, T::BLOCK, T::ITEMS, T::MIN_BLOCKS, uint64_t>(temp, temp_bytes, keys, alt,
                                                                         n, stream, vals, alt_vals);
}

/* Templates (like bins_kernel) so that every file that includes this header may define them. */
template <int UNUSED = 0> __global__ void iota_kernel(uint32_t *idx, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    idx[i] = (uint32_t)i;
}

template <int UNUSED = 0>
__global__ void gather_kernel(const uint64_t *__restrict__ vals, const uint32_t *__restrict__ idx,
                              uint64_t *__restrict__ out, uint64_t n) {
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    out[i] = vals[idx[i]];
}

template <typename K>
int sort_via_index(void *temp, size_t *temp_bytes, K *keys, K *alt, uint64_t *vals,
                   uint64_t *alt_vals, size_t n, cudaStream_t stream) {
  using T = Shape<K>;
  int rc = H5G_OK;
  size_t sort_bytes = 0;
  CHECK((onesweep::sort<K, T::BLOCK, T::ITEMS, T::MIN_BLOCKS, uint32_t>(NULL, &sort_bytes, keys, alt,
                                                                        n, stream)));
  {
    ScratchLayout s{(char *)temp, 0};
    void *sort_temp = s.take<char>(sort_bytes);
    uint32_t *idx = s.take<uint32_t>(n), *alt_idx = s.take<uint32_t>(n);
    const unsigned blocks = (unsigned)((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
    if (!temp) {
      *temp_bytes = s.used;
      return H5G_OK;
    }
    if (*temp_bytes < s.used)
      H5G_FAIL(H5G_ERR_USAGE, "pair sort scratch of %zu bytes is smaller than the %zu needed",
               *temp_bytes, s.used);
    if (n >> 32) H5G_FAIL(H5G_ERR_USAGE, "a 32-bit index sorts fewer than 2^32 pairs, not %zu", n);
    if (n < 2) goto done;
    iota_kernel<><<<blocks, 256, 0, stream>>>(idx, n);
    CHECK_CUDA(cudaGetLastError());
    CHECK((onesweep::sort<K, T::BLOCK, T::ITEMS, T::MIN_BLOCKS, uint32_t>(sort_temp, &sort_bytes, keys,
                                                                          alt, n, stream, idx, alt_idx)));
    gather_kernel<><<<blocks, 256, 0, stream>>>(vals, idx, alt_vals, n);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpyAsync(vals, alt_vals, n * sizeof(uint64_t), cudaMemcpyDeviceToDevice, stream));
  }
done:
  return rc;
}

} // namespace pairs
} // namespace h5g
#endif
