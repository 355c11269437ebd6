/* Onesweep LSD radix sort (Adinets & Merrill, "Onesweep: a faster least significant digit radix
 * sort for GPUs", 2022), 8-bit digits.
 *
 * 1. histogram_kernel: one read of the keys counts the digits of every pass at once.
 * 2. bins_kernel: per pass, the exclusive scan of the counts (where each digit's keys start in
 *    the output) and whether the pass is trivial (one digit holds every key: the pass is skipped).
 * 3. onesweep_pass_kernel, once per pass (and per portion of at most ONESWEEP_PORTION keys):
 *    a block takes the next tile (atomic counter, so tiles start in order), ranks it by the digit
 *    in shared memory (BlockRadixRank), publishes its digit counts to the look-back table, adds
 *    up its predecessors' counts (decoupled look-back: a tile's inclusive prefix, once published,
 *    ends the walk), and scatters the digit-sorted tile to the output with coalesced runs.
 * Passes ping-pong between keys and alt; an odd count of passes ends with one copy back. */
#include "kernels/block_radix_rank.cuh"
#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "kernels/tuning.cuh"
#include "kernels/util.cuh"

namespace h5g {
namespace {

constexpr int MAX_PASSES = 8;
/* Look-back entry: 2 status bits over a 30-bit digit count. */
constexpr uint32_t LOOKBACK_AGGREGATE = 1u << 30;
constexpr uint32_t LOOKBACK_INCLUSIVE = 2u << 30;
constexpr uint32_t LOOKBACK_VALUE = (1u << 30) - 1;

template <typename K>
__global__ void __launch_bounds__(HIST_BLOCK)
    histogram_kernel(const K *__restrict__ keys, uint64_t n, unsigned long long *counts) {
  constexpr int PASSES = sizeof(K);
  __shared__ uint32_t hist[PASSES][RADIX];
  for (int i = threadIdx.x; i < PASSES * RADIX; i += HIST_BLOCK) (&hist[0][0])[i] = 0;
  __syncthreads();
  const uint64_t stride = (uint64_t)gridDim.x * HIST_BLOCK;
  for (uint64_t i = (uint64_t)blockIdx.x * HIST_BLOCK + threadIdx.x; i < n; i += stride) {
    const K k = keys[i];
#pragma unroll
    for (int p = 0; p < PASSES; ++p) atomicAdd(&hist[p][digit_of(k, p * RADIX_BITS)], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < PASSES * RADIX; i += HIST_BLOCK) {
    const uint32_t c = (&hist[0][0])[i];
    if (c) atomicAdd(&counts[i], (unsigned long long)c);
  }
}

/* One block of RADIX threads per pass. */
__global__ void bins_kernel(const unsigned long long *counts, uint64_t n, uint64_t *bins,
                            uint32_t *trivial) {
  __shared__ uint64_t warp_sums[RADIX / 32 + 1];
  const int pass = blockIdx.x, d = threadIdx.x;
  const uint64_t c = counts[pass * RADIX + d];
  uint64_t total;
  bins[pass * RADIX + d] = block_exclusive_sum<RADIX>((uint64_t)c, warp_sums, &total);
  const int all_one_digit = __syncthreads_or(c == n);
  if (d == 0) trivial[pass] = (uint32_t)all_one_digit;
}

template <typename K, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK)
    onesweep_pass_kernel(const K *__restrict__ in, K *__restrict__ out, uint64_t portion_begin,
                         uint64_t portion_end, uint32_t *tile_counter, uint32_t *lookback,
                         const uint64_t *bins_in, uint64_t *bins_out, int shift) {
  using Rank = BlockRadixRank<BLOCK, ITEMS>;
  constexpr int TILE = BLOCK * ITEMS;
  __shared__ typename Rank::Storage rank_storage;
  __shared__ K tile_keys[TILE];
  __shared__ uint64_t out_base[RADIX]; /* output index of tile position 0 for each digit */
  __shared__ uint32_t tile_id;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) tile_id = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const uint32_t tile = tile_id;
  const uint32_t ntiles = (uint32_t)((portion_end - portion_begin + TILE - 1) / TILE);
  const uint64_t tile_begin = portion_begin + (uint64_t)tile * TILE;
  const uint32_t valid = (uint32_t)min((uint64_t)TILE, portion_end - tile_begin);

  /* Warp-striped load; keys past the end read as all ones, so they rank last in digit 255 and
   * land at tile positions >= valid, which are never written out. */
  K keys[ITEMS];
  const uint32_t first = warp * ITEMS * 32 + lane;
  const K *src = in + tile_begin + first;
  if (valid == TILE) {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) keys[i] = src[i * 32];
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) keys[i] = first + i * 32 < valid ? src[i * 32] : (K)~(K)0;
  }

  uint32_t ranks[ITEMS];
  uint32_t digit_start;
  const uint32_t count = Rank::rank(rank_storage, keys, shift, ranks, &digit_start);

  if (tid < RADIX) {
    const uint32_t mine = count - (tid == RADIX - 1 ? TILE - valid : 0);
    volatile uint32_t *table = lookback;
    uint32_t exclusive = 0;
    if (tile == 0) {
      table[tid] = LOOKBACK_INCLUSIVE | mine;
    } else {
      table[(uint64_t)tile * RADIX + tid] = LOOKBACK_AGGREGATE | mine;
      for (int64_t pred = (int64_t)tile - 1;;) {
        const uint32_t v = table[(uint64_t)pred * RADIX + tid];
        if (!(v & ~LOOKBACK_VALUE)) continue; /* predecessor not published yet */
        exclusive += v & LOOKBACK_VALUE;
        if (v & LOOKBACK_INCLUSIVE) break;
        --pred;
      }
      table[(uint64_t)tile * RADIX + tid] = LOOKBACK_INCLUSIVE | (exclusive + mine);
    }
    out_base[tid] = bins_in[tid] + exclusive - digit_start;
    if (tile == ntiles - 1) bins_out[tid] = bins_in[tid] + exclusive + mine;
  }

#pragma unroll
  for (int i = 0; i < ITEMS; ++i) tile_keys[ranks[i]] = keys[i];
  __syncthreads();
  for (uint32_t j = tid; j < valid; j += BLOCK) {
    const K k = tile_keys[j];
    out[out_base[digit_of(k, shift)] + j] = k;
  }
}

/* Scratch layout; the same code sizes it (base == NULL) and carves it. */
template <typename K> struct SortScratch {
  unsigned long long *counts;
  uint64_t *bins, *portion_bins;
  uint32_t *trivial, *tile_counter, *lookback;
  size_t lookback_words;

  size_t layout(void *base, size_t n) {
    using T = OnesweepTuning<sizeof(K)>;
    constexpr size_t TILE = (size_t)T::BLOCK * T::ITEMS;
    const size_t portion = n < ONESWEEP_PORTION ? n : ONESWEEP_PORTION / TILE * TILE;
    ScratchLayout s{(char *)base, 0};
    counts = s.take<unsigned long long>(MAX_PASSES * RADIX);
    bins = s.take<uint64_t>(MAX_PASSES * RADIX);
    portion_bins = s.take<uint64_t>(2 * RADIX);
    trivial = s.take<uint32_t>(MAX_PASSES);
    /* The tile counter sits right before the look-back table: one memset clears both. */
    lookback_words = 1 + (portion + TILE - 1) / TILE * RADIX;
    tile_counter = s.take<uint32_t>(lookback_words);
    lookback = tile_counter ? tile_counter + 1 : nullptr;
    return s.used;
  }
};

template <typename K>
int radix_sort(void *temp, size_t *temp_bytes, K *keys, K *alt, size_t n, cudaStream_t stream) {
  using T = OnesweepTuning<sizeof(K)>;
  constexpr size_t TILE = (size_t)T::BLOCK * T::ITEMS;
  constexpr int PASSES = sizeof(K);
  int rc = H5G_OK;
  SortScratch<K> s;
  const size_t bytes = s.layout(temp, n);
  uint32_t trivial[MAX_PASSES];
  int device = 0, sms = 0;
  K *src = keys, *dst = alt;
  if (!temp) {
    *temp_bytes = bytes;
    return H5G_OK;
  }
  if (*temp_bytes < bytes)
    H5G_FAIL(H5G_ERR_USAGE, "radix sort scratch of %zu bytes is smaller than the %zu needed",
             *temp_bytes, bytes);
  if (n < 2) goto done;

  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHECK_CUDA(cudaMemsetAsync(s.counts, 0, MAX_PASSES * RADIX * sizeof(*s.counts), stream));
  {
    const uint64_t blocks_needed = (n + HIST_BLOCK - 1) / HIST_BLOCK;
    const uint64_t most = (uint64_t)sms * HIST_BLOCKS_PER_SM;
    histogram_kernel<K><<<(unsigned)(blocks_needed < most ? blocks_needed : most), HIST_BLOCK, 0,
                          stream>>>(keys, n, s.counts);
  }
  CHECK_CUDA(cudaGetLastError());
  bins_kernel<<<PASSES, RADIX, 0, stream>>>(s.counts, n, s.bins, s.trivial);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpyAsync(trivial, s.trivial, PASSES * sizeof(uint32_t), cudaMemcpyDeviceToHost,
                             stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));

  for (int pass = 0; pass < PASSES; ++pass) {
    if (trivial[pass]) continue;
    const size_t portion = n < ONESWEEP_PORTION ? n : ONESWEEP_PORTION / TILE * TILE;
    const uint64_t *bins_in = s.bins + pass * RADIX;
    int p = 0;
    for (size_t begin = 0; begin < n; begin += portion, ++p) {
      const size_t end = n - begin < portion ? n : begin + portion;
      uint64_t *bins_out = s.portion_bins + (p & 1) * RADIX;
      CHECK_CUDA(cudaMemsetAsync(s.tile_counter, 0, s.lookback_words * sizeof(uint32_t), stream));
      onesweep_pass_kernel<K, T::BLOCK, T::ITEMS>
          <<<(unsigned)((end - begin + TILE - 1) / TILE), T::BLOCK, 0, stream>>>(
              src, dst, begin, end, s.tile_counter, s.lookback, bins_in, bins_out,
              pass * RADIX_BITS);
      CHECK_CUDA(cudaGetLastError());
      bins_in = bins_out;
    }
    K *t = src;
    src = dst;
    dst = t;
  }
  if (src != keys)
    CHECK_CUDA(cudaMemcpyAsync(keys, src, n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
done:
  return rc;
}

} // namespace
} // namespace h5g

extern "C" int h5g_cuda_radix_sort(void *temp, size_t *temp_bytes, void *keys, void *alt, size_t n,
                                   unsigned width, cudaStream_t stream) {
  const int rc = h5g::dispatch_width(width, [&](auto tag) {
    using K = decltype(tag);
    return h5g::radix_sort<K>(temp, temp_bytes, (K *)keys, (K *)alt, n, stream);
  });
  if (rc < 0)
    return h5g_error_set(H5G_ERR_USAGE, __FILE__, __LINE__, "unsupported key width %u", width);
  return rc;
}
