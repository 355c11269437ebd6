/* Block primitive: bitonic sorting network over a power-of-two count of keys in shared memory,
 * by every thread of a block (bitonic_sort.cu's small sorts, onesweep_sample.cuh's sample). */
#ifndef H5G_BLOCK_BITONIC_CUH
#define H5G_BLOCK_BITONIC_CUH

#include <stdint.h>

namespace h5g {

/* Sorts s[0..padded) ascending; padded is a power of two. The keys must be stored and a barrier
 * passed before the call; the network's last barrier lets every thread read the result. */
template <typename K, int THREADS> __device__ void block_bitonic_sort(K *s, uint32_t padded) {
  for (uint32_t k = 2; k <= padded; k <<= 1) {
    for (uint32_t j = k >> 1; j > 0; j >>= 1) {
      for (uint32_t i = threadIdx.x; i < padded; i += THREADS) {
        const uint32_t partner = i ^ j;
        if (partner > i) {
          const K a = s[i], b = s[partner];
          if ((a > b) == ((i & k) == 0)) {
            s[i] = b;
            s[partner] = a;
          }
        }
      }
      __syncthreads();
    }
  }
}

} // namespace h5g
#endif
