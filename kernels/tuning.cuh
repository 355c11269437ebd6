/* Tuning constants of every kernel in kernels/, in one table, with the measurement that chose
 * them (bench/local_sort.cu on the GPU machine; numbers in bench/RESULTS.md, "GPU local sort"). */
#ifndef H5G_TUNING_CUH
#define H5G_TUNING_CUH

#include <stddef.h>

namespace h5g {

/* CUDA_DEVICE_MAX_CONNECTIONS, the hardware work queues a context opens (the driver's default:
 * 8), which h5gsort sets before the driver starts where the user set none
 * (h5g_cuda_environment). Opening them is most of the primary context's making: H100,
 * persistence mode on, cuInit 0.10 s with any count, the primary context 0.11-0.17 s with 8, 0.09
 * with 4, 0.08 with 2, 0.064 with 1. The backend keeps its work on one stream, a streamed
 * (out-of-core) merge on two, whose overlap one queue loses. H100, 2026-11-27, README launch,
 * whole process, s (bench/RESULTS.md, "Fewer hardware work queues"), 8 / 2 / 1:
 *   f8 2^28 0.887 / 0.773 / 0.762; u4 2^30 1.246 / 1.162 / 1.131;
 *   u4 2^30 at --device-memory 512M 1.593 / 1.450 / 1.644 (merge phase 0.132 / 0.122 / 0.197);
 *   u4 2^28 on 4 ranks sharing the GPU 1.752 / - / 0.979 -> 2. */
constexpr int DEVICE_CONNECTIONS = 2;

/* Onesweep radix sort. RADIX_BITS 8: 4 passes for 32-bit keys, 8 for 64-bit (CUB's choice too),
 * 16 for 128-bit.
 * Tile = BLOCK * ITEMS keys per thread block (dynamic shared memory holds the tile);
 * MIN_BLOCKS is __launch_bounds__' blocks per SM, which caps registers (occupancy mattered most:
 * 32-bit 512x16 went from 13.1 ms at 1 block/SM to 7.4 ms at 2, 2^28 keys; CUB-like 384x20 at
 * 1 block/SM: 10.1 ms against 7.0 at 2, ballot ranking).
 * Measured on H200, 2^28 random keys, total sort ms (bench_local_sort variants, bench/RESULTS.md;
 * CUB 5.43 ms for 32-bit keys, 16.38 ms for 64-bit), ATOMIC_OR ranking, 32-bit output indices:
 *   32-bit: 512x16/2 5.58, 512x20/2 5.15, 512x24/2 5.23, 384x16/3 5.54, 384x20/2 5.71,
 *           384x24/2 5.30, 384x28/2 5.01, 256x20/3 5.82, 256x24/3 5.33, 256x32/2 5.49;
 *           a second run: 384x28/2 5.01, 256x28/3 5.00 (a tie), 384x32/2 spills 32 bytes
 *           -> 384x28/2
 *   64-bit: 256x12/4 16.37, 256x16/3 15.15, 256x20/2 16.20, 256x24/2 14.99, 256x32/2 13.74,
 *           384x16/2 14.95, 512x12/2 15.30; a second run: 256x32/2 13.75, 256x30/2 13.89,
 *           384x20/2 13.85, 256x40/2 spills 100 bytes -> 256x32/2 (128 registers, no spills)
 *   8/16-bit keys (not measured) take 256x16/3, which does not spill.
 *   128-bit keys: chosen by resource use (sm_90, nvcc 13.0, ptxas -v), the other shapes not
 *           timed; the chosen one against CUB on H100, 2^28 keys: 56.0 ms vs 57.6 (1.03x). The
 *           largest tile that neither spills nor keeps 2 blocks off an SM (228 KB of shared
 *           memory per SM, 1 KB of it reserved per block): 256x16/2 119 registers, 65 KB;
 *           256x20/2 128 registers, 81 KB; 256x24/2 spills 52 bytes; 384x12/2 80 registers,
 *           73 KB; 384x16/2 spills 144 bytes; 512x8/2 64 registers, 65 KB; 512x12/2 spills
 *           96 bytes; 256x12/3 80 registers, 49 KB -> 256x20/2 (no spills).
 * Measured again on H100 (2026-11-26, `bench_local_sort 28 variants`, 2^28 random keys, ms,
 * CUB 5.55 / 16.84 / 57.46 ms for 32 / 64 / 128-bit keys):
 *   32-bit: 384x28/2 5.22, 512x24/2 5.31, 512x20/2 5.37, 256x28/3 5.43, 384x24/2 5.51,
 *           256x24/3 5.73, 512x16/2 5.76, 768x12/2 5.84, 384x20/2 5.93, 256x20/4 6.00,
 *           1024x12/1 6.79 (ballot 512x16/2 6.83)
 *   64-bit: 512x16/2 15.75, 256x32/2 15.77 (a tie), 384x20/2 16.04, 256x28/2 16.34,
 *           384x16/2 16.76, 512x12/2 16.81, 256x24/2 16.82, 256x20/3 17.32, 256x16/3 17.94
 *   128-bit: 256x20/2 56.09, 384x12/2 57.12, 256x16/2 57.74, 512x8/2 57.96, 256x12/3 60.07
 * The H200's shapes win on the H100 as well, so one table serves both cards (no pick by device
 * at run time). */
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;

template <int WIDTH> struct OnesweepTuning;
template <> struct OnesweepTuning<1> { static constexpr int BLOCK = 256, ITEMS = 16, MIN_BLOCKS = 3; };
template <> struct OnesweepTuning<2> { static constexpr int BLOCK = 256, ITEMS = 16, MIN_BLOCKS = 3; };
template <> struct OnesweepTuning<4> { static constexpr int BLOCK = 384, ITEMS = 28, MIN_BLOCKS = 2; };
template <> struct OnesweepTuning<8> { static constexpr int BLOCK = 256, ITEMS = 32, MIN_BLOCKS = 2; };
template <> struct OnesweepTuning<16> { static constexpr int BLOCK = 256, ITEMS = 20, MIN_BLOCKS = 2; };

/* How the ranking finds the lanes of a warp that hold the same digit (block_radix_rank.cuh).
 * H200, 2^28 random keys, early-counts ranking, 64-bit output indices, total sort ms:
 *   32-bit 512x16/2: BALLOT 6.74, ATOMIC_OR 5.64 (__match_any_sync: 10.95);
 *   64-bit 256x16/3: BALLOT 16.78, ATOMIC_OR 15.24 (__match_any_sync: 23.42).
 * Output indices: 32-bit ones (n <= 2^32) against 64-bit, ATOMIC_OR: 0.3-1.1% faster for 32-bit
 * keys, within noise for 64-bit keys (radix_sort.cuh picks them whenever they fit). */
/* H100, 2^28 uint32 384x28/2 (bench/RESULTS.md, "Ranking variants for 32-bit keys"): ATOMIC_OR
 * 5.10-5.12 ms; one item in 2/3/4/7 by ballots 5.35/5.21/5.20/5.13, two mask buffers (one
 * __syncwarp fewer) 5.13, 2 or 4 items ranked at once 5.18/5.30: not kept. */
/* The first pass of a sort of keys alone of up to 4 bytes ranks with no match at all
 * (block_radix_rank.cuh). H100, 2026-11-27, `bench_local_sort 28 first`, 2^28 keys, ms, unstable
 * / stable first pass, three calls: uint32 4.905-4.916 / 5.006-5.019 (CUB 5.565-5.585); uint64
 * 10.150 / 10.158, uint128 19.412 / 19.379 (their passes are not bound by the ranking: they keep
 * it stable). Threads of fewer registers for that pass, the same tile placed in shared memory as
 * it is ranked (768x14/2, 512x21/2 against 384x28/2): 4.930-4.949 against 4.921-4.923, not
 * kept. */
enum class WarpMatch { BALLOT, ATOMIC_OR };
constexpr WarpMatch ONESWEEP_MATCH = WarpMatch::ATOMIC_OR;

/* Keys one pass kernel launch covers, rounded up to whole tiles (radix_sort.cuh: portion_keys):
 * look-back counts fit in 29 bits (the entry's other 3: epoch and status) and the look-back
 * table (tiles x 256 x 4 bytes) stays at most 32 MB for 2^28 keys in tiles of >= 8192 keys (52 MB
 * in the 5120-key tiles of 128-bit keys, 64 MB in the 4096-key tiles of key+value sorts). */
constexpr size_t ONESWEEP_PORTION = (size_t)1 << 28;

/* Upfront histogram kernel: threads per block, keys loaded per thread before counting, and the
 * shared memory its counter copies take (radix_sort.cuh: as many copies as fit, at most one per
 * lane; as many blocks per SM as fit). The kernel is bound by shared-memory bank conflicts of
 * its atomics until each lane, or each pair of lanes, counts in a bank of its own.
 * H200, 2^28 32-bit keys: 0.82 ms with one load in flight and one counter copy, 0.37 ms with
 * 8 loads and 8 interleaved copies (radix_sort.cuh).
 * 2026-11-26, `bench_local_sort 28 histogram`, 2^28 random keys, ms, block x copies
 * (256 x 8/4/2 in 32 KB of static shared memory was the kernel before):
 *          H200: 32-bit 256x8 0.463, 1024x32 0.310, 512x32 0.422, 1024x16 0.329, 512x16 0.355
 *                64-bit 256x4 0.966, 1024x16 0.635, 512x16 0.730, 1024x8 0.846
 *                128-bit 256x2 1.890, 1024x8 1.664, 512x8 1.677, 1024x4 1.833
 *          H100: 32-bit 256x8 0.472, 1024x32 0.386, 512x32 0.468, 1024x16 0.380, 512x16 0.383
 *                64-bit 256x4 0.978, 1024x16 0.715, 512x16 0.833, 1024x8 0.851
 *                128-bit 256x2 1.900, 1024x8 1.676, 512x8 1.698, 1024x4 1.842
 * -> 1024 threads, 128 KB (32 copies for keys up to 32 bits, 16 for 64-bit, 8 for 128-bit).
 * "256x8/4/2" is the layout before, launched as the kernel is now (as many blocks per SM as
 * fit, about 6, where it had 4): the kernel before is not in the build. A device whose blocks
 * may not have 128 KB of shared memory (before Hopper) takes the 32 KB of before (not measured). */
constexpr int HIST_BLOCK = 1024;
constexpr int HIST_ITEMS = 8;
constexpr size_t HIST_SHARED_BYTES = 128 << 10;
constexpr size_t HIST_SHARED_FALLBACK_BYTES = 32 << 10;

/* sort_short_segments (radix_sort.cuh, the top digits first): threads per block and keys per
 * thread at a time. H100, 2^28 random keys (4 of 8 passes for 64-bit, 4 of 16 for 128-bit),
 * whole sort ms (`bench_local_sort 28 main`): one key per thread at a time 10.90 (64-bit) and
 * 19.48 (128-bit), 4 keys 10.17 and 19.37, where the 4 passes and the histogram take about 8.1
 * and 15.1 (ncu's pass times, bench/RESULTS.md). Other counts not measured. */
constexpr int SEGMENT_BLOCK = 256;
constexpr int SEGMENT_ITEMS = 4;

/* The top digits first's sample (radix_sort.cuh, sample_differences): TOP_SAMPLE keys sorted by
 * one block beside the histogram's, whose neighbours that share the top digits but differ veto
 * the way where long runs of such keys would send it through every pass; taken from
 * TOP_SAMPLE_MIN_KEYS keys on. Below, the chance pairs of spread keys would allow more than 3 and
 * the veto would see little; the fallback there costs up to about 0.1 ms (H100, 2^16 uint64
 * keys of two values among random ones, which the sample lets pass: 0.196 ms against 0.099 for
 * random keys). H100, `bench_local_sort 28 dists,main` beside the build before it, random keys
 * of 8 and 16 bytes at 2^20 to 2^28: -2.4% to +4.9% (-69 to +23 us), where a launch of its own
 * after the histogram cost 10-25 us (+17% at 2^20); uint64 keys with tied tops 0.68x -> 1.07x
 * CUB's speed at 2^28 (1.03x at 2^20), bench/RESULTS.md. Other sample sizes not measured. */
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
/* h5g_cuda_sort uses bitonic sort up to this n, radix sort above. H200: bitonic is faster at
 * every n it takes (32-bit 4096 keys: 0.037 ms vs radix 0.069 ms; 64-bit 0.046 vs 0.093); its
 * time doubles with n, so the crossover would lie near 8192, past the shared-memory tile.
 * 128-bit keys take the bitonic sort up to its 2048 (not measured: bench_local_sort crossover). */
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
 * else re-sorts them. H200, 2^26 keys: 32-bit merge 1.65 ms at P = 16 vs re-sort 1.84 ms, but
 * 2.41 ms at P = 64; 64-bit 3.88 ms at P = 64 vs re-sort 4.59 ms, but 5.09 ms at P = 256.
 * 8/16-bit keys (not measured): one round per radix pass the re-sort needs.
 * 128-bit keys, H100, 2^26 random keys (all 16 passes): merge 5.38 ms at P = 16, 7.78 at P = 64,
 * 10.12 at P = 256 vs re-sort 14.2 ms; composed keys often have constant bytes whose passes are
 * skipped, so the bound stays at 8 rounds (P = 256) rather than beyond what was measured. */
constexpr int merge_max_rounds(unsigned width) {
  return width == 16 ? 8 : width == 8 ? 6 : width == 4 ? 4 : width == 2 ? 2 : 1;
}

/* Key+value (stable) radix sort: tile shapes of the onesweep pass with uint64 values (the value
 * tile takes shared memory beside the keys', so fewer blocks fit). The values move with their
 * keys every pass (kernels/radix_sort.cu): measured faster than moving a 32-bit index and
 * gathering the values afterwards (bench/local_sort.cu's "pairs" section; H200, 2^28 pairs:
 * uint32 keys 13.1 ms vs 20.7, uint64 keys 29.2 ms vs 35.6; bench/RESULTS.md, "GPU record
 * sort"). 128-bit keys take the same 256x16/2 (chosen by resource use, sm_90, ptxas -v: 128
 * registers, no spills, 97 KB of dynamic shared memory, so 2 blocks per SM; 256x20/2 spills 4
 * bytes and takes 121 KB); against CUB's SortPairs on H100, 2^28 pairs: 89.5 ms vs 93.3. */
template <int WIDTH> struct OnesweepPairsTuning { static constexpr int BLOCK = 256, ITEMS = 16, MIN_BLOCKS = 2; };

} // namespace h5g
#endif
