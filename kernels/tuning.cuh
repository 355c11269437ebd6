/* Tuning constants of every kernel in kernels/, in one table, with the measurement that chose
 * them (bench/local_sort.cu on the GPU machine; numbers in bench/RESULTS.md, "GPU local sort"). */
#ifndef H5G_TUNING_CUH
#define H5G_TUNING_CUH

#include <stddef.h>

namespace h5g {

/* Onesweep radix sort. RADIX_BITS 8: 4 passes for 32-bit keys, 8 for 64-bit (CUB's choice too).
 * Tile = BLOCK * ITEMS keys per thread block; shared memory holds the tile (<= 48 KB static).
 * Chosen on H100 from {256, 384, 512} x {8 .. 24} items (bench/RESULTS.md). */
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;

template <int WIDTH> struct OnesweepTuning;
template <> struct OnesweepTuning<1> { static constexpr int BLOCK = 256, ITEMS = 16, MIN_BLOCKS = 3; };
template <> struct OnesweepTuning<2> { static constexpr int BLOCK = 256, ITEMS = 16, MIN_BLOCKS = 3; };
template <> struct OnesweepTuning<4> { static constexpr int BLOCK = 512, ITEMS = 16, MIN_BLOCKS = 2; };
template <> struct OnesweepTuning<8> { static constexpr int BLOCK = 256, ITEMS = 16, MIN_BLOCKS = 3; };

/* Keys one pass kernel launch covers at most: look-back counts fit in 30 bits and the look-back
 * table (tiles x 256 x 4 bytes) stays at 64 MB for 2^28 keys in 4096-key tiles. */
constexpr size_t ONESWEEP_PORTION = (size_t)1 << 28;

/* Upfront histogram kernel: threads per block, keys loaded per thread before counting, blocks
 * per SM. */
constexpr int HIST_BLOCK = 256;
constexpr int HIST_ITEMS = 8;
constexpr int HIST_BLOCKS_PER_SM = 4;

/* Bitonic sort: one block of BITONIC_THREADS sorts up to BITONIC_MAX keys in shared memory. */
constexpr int BITONIC_THREADS = 1024;
constexpr int BITONIC_MAX = 4096;
/* h5g_cuda_sort uses bitonic sort up to this n, radix sort above (measured crossover). */
constexpr size_t SORT_BITONIC_CROSSOVER = 4096;

/* Decoupled look-back scan: tile = SCAN_BLOCK * SCAN_ITEMS values. */
constexpr int SCAN_BLOCK = 256;
constexpr int SCAN_ITEMS = 8;

/* Merge path: each block writes MERGE_BLOCK * MERGE_ITEMS keys of the output. */
constexpr int MERGE_BLOCK = 256;
constexpr int MERGE_ITEMS = 8;

} // namespace h5g
#endif
