/* Tuning constants of every kernel in kernels/, in one table, each with why it has its value;
 * the measurements that chose them (bench/local_sort.cu) are in bench/RESULTS.md, section
 * "GPU local sort" and the sections named below. */
#ifndef H5G_TUNING_CUH
#define H5G_TUNING_CUH

#include <stddef.h>

namespace h5g {

/* CUDA_DEVICE_MAX_CONNECTIONS, the hardware work queues a context opens (the driver's default:
 * 8), which h5gsort sets before the driver starts where the user set none
 * (h5g_cuda_environment). Opening them is most of the primary context's making; the backend
 * keeps its work on one stream, a streamed (out-of-core) merge on two, whose overlap one queue
 * loses (bench/RESULTS.md, section "Fewer hardware work queues"). */
constexpr int DEVICE_CONNECTIONS = 2;

/* Onesweep radix sort. RADIX_BITS 8: 4 passes for 32-bit keys, 8 for 64-bit (CUB's choice too),
 * 16 for 128-bit.
 * Tile = BLOCK * ITEMS keys per thread block (dynamic shared memory holds the tile);
 * MIN_BLOCKS is __launch_bounds__' blocks per SM, which caps registers: occupancy mattered most
 * (2 blocks per SM rather than 1). 32- and 64-bit keys take the fastest shape that does not
 * spill (the build refuses spills); 128-bit keys the largest tile that neither spills nor keeps
 * 2 blocks off an SM (ptxas -v); 8/16-bit keys (not measured) 256x16/3, which does not spill.
 * One table serves every card measured: no pick by device at run time (bench/RESULTS.md,
 * sections "Onesweep variants" and "Tile shapes"). */
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;

template <int WIDTH> struct OnesweepTuning;
template <> struct OnesweepTuning<1> { static constexpr int BLOCK = 256, ITEMS = 16, MIN_BLOCKS = 3; };
template <> struct OnesweepTuning<2> { static constexpr int BLOCK = 256, ITEMS = 16, MIN_BLOCKS = 3; };
template <> struct OnesweepTuning<4> { static constexpr int BLOCK = 384, ITEMS = 28, MIN_BLOCKS = 2; };
template <> struct OnesweepTuning<8> { static constexpr int BLOCK = 256, ITEMS = 32, MIN_BLOCKS = 2; };
template <> struct OnesweepTuning<16> { static constexpr int BLOCK = 256, ITEMS = 20, MIN_BLOCKS = 2; };

/* How the ranking finds the lanes of a warp that hold the same digit (block_radix_rank.cuh):
 * ATOMIC_OR beat BALLOT and __match_any_sync at both widths, and no other way measured beat it
 * (bench/RESULTS.md, sections "How the figures moved" and "Ranking variants for 32-bit keys").
 * Output indices are 32-bit wherever they fit (n <= 2^32): a little faster for 32-bit keys.
 * The first pass of a sort of keys alone of up to 4 bytes ranks with no match at all; 8- and
 * 16-byte keys, whose passes the ranking does not bound, gain nothing from it and stay stable
 * (bench/RESULTS.md, section "The first pass ranked unstably"). */
enum class WarpMatch { BALLOT, ATOMIC_OR };
constexpr WarpMatch ONESWEEP_MATCH = WarpMatch::ATOMIC_OR;

/* Keys one pass kernel launch covers, rounded up to whole tiles (onesweep_common.cuh:
 * portion_keys): look-back counts fit in 29 bits (the entry's other 3: epoch and status) and the
 * look-back table (tiles x 256 x 4 bytes) stays at most 32 MB for 2^28 keys in tiles of >= 8192
 * keys (52 MB in the 5120-key tiles of 128-bit keys, 64 MB in the 4096-key tiles of key+value
 * sorts). */
constexpr size_t ONESWEEP_PORTION = (size_t)1 << 28;

/* Upfront histogram kernel: threads per block, keys loaded per thread before counting, and the
 * shared memory its counter copies take (onesweep_histogram.cuh: as many copies as fit, at most
 * one per lane; as many blocks per SM as fit). The kernel is bound by the latency of its loads
 * with one in flight, and by shared-memory bank conflicts of its atomics until each lane, or each
 * pair of lanes, counts in a bank of its own: 1024 threads and 128 KB (32 copies for keys up to
 * 32 bits, 16 for 64-bit, 8 for 128-bit) were fastest (bench/RESULTS.md, section "The upfront
 * histogram and whole-tile portions"). A device whose blocks may not have 128 KB of shared
 * memory (before Hopper) takes the 32 KB of the layout before (not measured). */
constexpr int HIST_BLOCK = 1024;
constexpr int HIST_ITEMS = 8;
constexpr size_t HIST_SHARED_BYTES = 128 << 10;
constexpr size_t HIST_SHARED_FALLBACK_BYTES = 32 << 10;

/* sort_short_segments (onesweep_segments.cuh, the top digits first): threads per block and keys
 * per thread at a time; with one key at a time the kernel is bound by its loads' latency
 * (bench/RESULTS.md, section "The top digits first for 64- and 128-bit keys"). Other counts not
 * measured. */
constexpr int SEGMENT_BLOCK = 256;
constexpr int SEGMENT_ITEMS = 4;

/* The top digits first's sample (onesweep_sample.cuh, sample_differences): TOP_SAMPLE keys
 * sorted by one block beside the histogram's, whose neighbours that share the top digits but
 * differ veto the way where long runs of such keys would send it through every pass; taken from
 * TOP_SAMPLE_MIN_KEYS keys on. Below, the chance pairs of spread keys would allow more than 3 and
 * the veto would see little, and the fallback costs little. It runs beside the histogram's
 * blocks: a launch of its own slowed small sorts (bench/RESULTS.md, section "The sample's veto
 * on the top digits first"). Other sample sizes not measured. */
constexpr int TOP_SAMPLE = 1024;
constexpr size_t TOP_SAMPLE_MIN_KEYS = (size_t)1 << 16;
static_assert((TOP_SAMPLE & (TOP_SAMPLE - 1)) == 0 && TOP_SAMPLE_MIN_KEYS >= (size_t)TOP_SAMPLE,
              "a power of two for the bitonic sort, and a key at least per stretch");

/* Bitonic sort: one block of BITONIC_THREADS sorts up to BITONIC_MAX keys in static shared
 * memory, which holds BITONIC_SHARED_BYTES (under the 48 KB of static shared memory): 4096 keys
 * of up to 8 bytes, 2048 of 16 bytes. */
constexpr int BITONIC_THREADS = 1024;
constexpr int BITONIC_MAX = 4096;
constexpr int BITONIC_SHARED_BYTES = 32768;
/* Keys of `width` bytes one bitonic sort takes: a power of two, so the padded size fits too. */
__host__ __device__ constexpr int bitonic_capacity(unsigned width) {
  return BITONIC_SHARED_BYTES / (int)width < BITONIC_MAX ? BITONIC_SHARED_BYTES / (int)width
                                                         : BITONIC_MAX;
}
/* h5g_cuda_sort uses bitonic sort up to this n, radix sort above: bitonic is faster at every n
 * it takes, and its time doubles with n, so the crossover would lie past the shared-memory tile
 * (bench/RESULTS.md, section "Bitonic sort vs radix sort for small n"). 128-bit keys take the
 * bitonic sort up to its 2048 (not measured: bench_local_sort crossover). */
constexpr size_t SORT_BITONIC_CROSSOVER = 4096;

/* Decoupled look-back scan: tile = SCAN_BLOCK * SCAN_ITEMS values. */
constexpr int SCAN_BLOCK = 256;
constexpr int SCAN_ITEMS = 8;

/* Merge path: each block writes MERGE_BLOCK * merge_items(width) keys of the output; its staged
 * input and output tiles are static shared memory, 2 x tile x width bytes, which must stay under
 * 48 KB: 8 items per thread up to 8-byte keys (32 KB for 8-byte keys), 4 for 16-byte keys (32 KB;
 * not measured, chosen by shared memory). */
constexpr int MERGE_BLOCK = 256;
__host__ __device__ constexpr int merge_items(unsigned width) { return width == 16 ? 4 : 8; }

/* The backend merges P sorted runs by merge path while its ceil(log2 P) rounds are at most this,
 * else re-sorts them: the widest P at which the merge still beat the re-sort (bench/RESULTS.md,
 * section "Merge of P sorted runs"). 8/16-bit keys (not measured): one round per radix pass the
 * re-sort needs. 128-bit keys: composed keys often have constant bytes whose passes the re-sort
 * skips, so the bound stays at 8 rounds (P = 256), the most measured (bench/RESULTS.md, section
 * "Keys of 9 to 16 bytes in one pass"). */
constexpr int merge_max_rounds(unsigned width) {
  return width == 16 ? 8 : width == 8 ? 6 : width == 4 ? 4 : width == 2 ? 2 : 1;
}

/* Key+value (stable) radix sort: tile shapes of the onesweep pass with uint64 values (the value
 * tile takes shared memory beside the keys', so fewer blocks fit). The values move with their
 * keys every pass (kernels/radix_sort.cu), which beat moving a 32-bit index and gathering the
 * values afterwards (bench/RESULTS.md, section "GPU record sort"). 128-bit keys take the same
 * 256x16/2, the largest tile that does not spill and keeps 2 blocks per SM (ptxas -v; against
 * CUB: bench/RESULTS.md, section "Keys of 9 to 16 bytes in one pass"). */
template <int WIDTH> struct OnesweepPairsTuning { static constexpr int BLOCK = 256, ITEMS = 16, MIN_BLOCKS = 2; };

} // namespace h5g
#endif
