/* Merge of sorted runs on the GPU: rounds of pairwise merges (run 2k with run 2k+1), each pair
 * merged by merge path (Green, McColl & Bader 2012; Merrill's CUB layout): a block owns
 * MERGE_BLOCK * merge_items(width) output keys (tuning.cuh), finds where its first and last output
 * diagonals cross the two runs by binary search, stages both input ranges in shared memory, and
 * each thread merges merge_items(width) keys from its own diagonal. Ties take the left run first,
 * so the merge is stable. An unpaired last run is copied by the same kernel (its right run is
 * empty).
 * With values (V = uint64_t), each output key records where in the staged tile it came from, and
 * its value is read from the same run position: values follow keys, ties still left first.
 * Runs are ordered bits; the last round maps the merged keys back to raw keys as it writes them
 * when the caller asks for raw keys (key_map.cuh: no pass of its own over the keys). */
#include <stdlib.h>

#include "kernels/check_cuda.cuh"
#include "kernels/kernels.h"
#include "kernels/key_map.cuh"
#include "kernels/tuning.cuh"
#include "kernels/util.cuh"

namespace h5g {
namespace {

/* Output keys per block for keys of type K. */
template <typename K> __host__ __device__ constexpr int merge_tile() {
  return MERGE_BLOCK * merge_items(sizeof(K));
}

/* Number of keys taken from a (the rest from b) among the first `diag` merged keys. */
template <typename K>
__device__ __forceinline__ uint64_t merge_path(const K *a, uint64_t na, const K *b, uint64_t nb,
                                               uint64_t diag) {
  uint64_t lo = diag > nb ? diag - nb : 0, hi = diag < na ? diag : na;
  while (lo < hi) {
    const uint64_t mid = (lo + hi) / 2;
    if (a[mid] <= b[diag - 1 - mid]) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Round descriptor: pairs[k] = first tile of pair k (pairs[npairs] = total tiles); the runs of
 * pair k are [off[2k*s], off[(2k+1)*s]) and [off[(2k+1)*s], off[(2k+2)*s]) with run indices
 * clamped to nruns, s = 2^round. MAPPED: store.inverse maps the keys written. */
template <typename K, typename V, bool MAPPED = false>
__global__ void __launch_bounds__(MERGE_BLOCK)
    merge_round_kernel(const K *__restrict__ src, K *__restrict__ dst, const uint64_t *off,
                       uint64_t nruns, uint64_t stride, const uint64_t *pair_tiles, uint64_t npairs,
                       const V *__restrict__ src_vals, V *__restrict__ dst_vals,
                       KeyMap<K> store) {
  constexpr int MERGE_ITEMS = merge_items(sizeof(K)), MERGE_TILE = merge_tile<K>();
  static_assert(MERGE_TILE <= 65536, "out_from holds staged indices in 16 bits");
  __shared__ K in_keys[MERGE_TILE];
  __shared__ K out_keys[MERGE_TILE];
  __shared__ uint16_t out_from[has_values<V> ? MERGE_TILE : 1]; /* staged index of output o */
  __shared__ uint64_t range[4];
  /* Pair of this block: the last k with pair_tiles[k] <= blockIdx.x. */
  uint64_t lo = 0, hi = npairs;
  while (hi - lo > 1) {
    const uint64_t mid = (lo + hi) / 2;
    if (pair_tiles[mid] <= blockIdx.x) lo = mid;
    else hi = mid;
  }
  const uint64_t pair = lo;
  const uint64_t r0 = 2 * pair * stride, r1 = min(r0 + stride, nruns), r2 = min(r0 + 2 * stride, nruns);
  const uint64_t a_begin = off[r0], b_begin = off[r1], b_end = off[r2];
  const K *a = src + a_begin, *b = src + b_begin;
  const uint64_t na = b_begin - a_begin, nb = b_end - b_begin;
  const uint64_t diag0 = (blockIdx.x - pair_tiles[pair]) * (uint64_t)MERGE_TILE;
  const uint64_t diag1 = min(diag0 + MERGE_TILE, na + nb);
  if (threadIdx.x < 2) range[threadIdx.x] = merge_path(a, na, b, nb, threadIdx.x ? diag1 : diag0);
  __syncthreads();
  const uint64_t a0 = range[0], a1 = range[1];
  const uint32_t la = (uint32_t)(a1 - a0), lb = (uint32_t)((diag1 - a1) - (diag0 - a0));
  for (uint32_t i = threadIdx.x; i < la + lb; i += MERGE_BLOCK)
    in_keys[i] = i < la ? a[a0 + i] : b[diag0 - a0 + (i - la)];
  __syncthreads();

  const K *sa = in_keys, *sb = in_keys + la;
  const uint32_t my_diag = min((uint32_t)threadIdx.x * MERGE_ITEMS, la + lb);
  uint32_t i = (uint32_t)merge_path(sa, la, sb, lb, my_diag), j = my_diag - i;
#pragma unroll
  for (int item = 0; item < MERGE_ITEMS; ++item) {
    const uint32_t o = my_diag + item;
    if (o >= la + lb) break;
    const bool take_a = j >= lb || (i < la && sa[i] <= sb[j]);
    if constexpr (has_values<V>) out_from[o] = (uint16_t)(take_a ? i : la + j);
    out_keys[o] = take_a ? sa[i++] : sb[j++];
  }
  __syncthreads();
  for (uint32_t o = threadIdx.x; o < la + lb; o += MERGE_BLOCK) {
    if constexpr (MAPPED) dst[a_begin + diag0 + o] = store.inverse(out_keys[o]);
    else dst[a_begin + diag0 + o] = out_keys[o];
  }
  if constexpr (has_values<V>) {
    const V *va = src_vals + a_begin, *vb = src_vals + b_begin;
    for (uint32_t o = threadIdx.x; o < la + lb; o += MERGE_BLOCK) {
      const uint32_t f = out_from[o];
      dst_vals[a_begin + diag0 + o] = f < la ? va[a0 + f] : vb[diag0 - a0 + (f - la)];
    }
  }
}

/* io.raw_in is not taken (the runs are ordered bits); io.raw_out: the result is raw keys. */
template <typename K, typename V = NoValue>
int merge_runs(void *temp, size_t *temp_bytes, K *keys, K *alt, size_t n,
               const uint64_t *run_offsets, size_t nruns, const KeyIO<K> &io, cudaStream_t stream,
               V *vals = nullptr, V *alt_vals = nullptr) {
  constexpr int MERGE_TILE = merge_tile<K>();
  int rc = H5G_OK;
  const size_t rounds = h5g_cuda_merge_rounds(nruns);
  size_t entries = 0;
  for (size_t runs = nruns; runs > 1; runs = (runs + 1) / 2) entries += (runs + 1) / 2 + 1;
  ScratchLayout s{(char *)temp, 0};
  uint64_t *off = s.take<uint64_t>(nruns + 1);
  uint64_t *pair_tiles = s.take<uint64_t>(entries);
  uint64_t *host = NULL;
  K *src = keys, *dst = alt;
  V *vsrc = vals, *vdst = alt_vals;
  if (!temp) {
    *temp_bytes = s.used;
    return H5G_OK;
  }
  if (*temp_bytes < s.used)
    H5G_FAIL(H5G_ERR_USAGE, "merge scratch of %zu bytes is smaller than the %zu needed",
             *temp_bytes, s.used);
  if (run_offsets[nruns] != n)
    H5G_FAIL(H5G_ERR_USAGE, "run offsets end at %llu, not at n = %zu",
             (unsigned long long)run_offsets[nruns], n);
  if (rounds == 0 || n < 2) { /* one run, or one key: merged as they are */
    CHECK(io.untouched(keys, n, stream));
    goto done;
  }

  /* Host plan: tiles per pair for every round, uploaded once. */
  host = (uint64_t *)malloc(entries * sizeof(uint64_t));
  CHECK_ALLOC(host, entries * sizeof(uint64_t));
  {
    size_t e = 0, stride = 1;
    for (size_t runs = nruns; runs > 1; runs = (runs + 1) / 2, stride *= 2) {
      uint64_t tiles = 0;
      for (size_t k = 0; 2 * k * stride < nruns; ++k) {
        host[e++] = tiles;
        const size_t r0 = 2 * k * stride, r2 = r0 + 2 * stride < nruns ? r0 + 2 * stride : nruns;
        tiles += (run_offsets[r2] - run_offsets[r0] + MERGE_TILE - 1) / MERGE_TILE;
      }
      host[e++] = tiles;
    }
  }
  CHECK_CUDA(cudaMemcpyAsync(off, run_offsets, (nruns + 1) * sizeof(uint64_t),
                             cudaMemcpyHostToDevice, stream));
  CHECK_CUDA(cudaMemcpyAsync(pair_tiles, host, entries * sizeof(uint64_t), cudaMemcpyHostToDevice,
                             stream));
  /* The copies above read pageable host memory; wait before freeing it. */
  CHECK_CUDA(cudaStreamSynchronize(stream));
  {
    size_t e = 0, stride = 1, round = 0;
    for (size_t runs = nruns; runs > 1; runs = (runs + 1) / 2, stride *= 2, ++round) {
      const size_t npairs = (runs + 1) / 2;
      const uint64_t tiles = host[e + npairs];
      /* every round writes all n keys: the last one leaves them in the form asked for */
      const KeyMap<K> store = io.on_store(round + 1 == rounds);
      const auto kernel = store.identity() ? merge_round_kernel<K, V, false>
                                           : merge_round_kernel<K, V, true>;
      if (tiles > 0) {
        kernel<<<(unsigned)tiles, MERGE_BLOCK, 0, stream>>>(src, dst, off, nruns, stride,
                                                            pair_tiles + e, npairs, vsrc, vdst,
                                                            store);
        CHECK_CUDA(cudaGetLastError());
      }
      e += npairs + 1;
      swap_ping_pong(src, dst, vsrc, vdst);
    }
  }
  CHECK(copy_back_ping_pong(keys, src, vals, vsrc, n, stream));
done:
  free(host);
  return rc;
}

} // namespace
} // namespace h5g

extern "C" size_t h5g_cuda_merge_rounds(size_t nruns) {
  size_t rounds = 0;
  for (size_t runs = nruns; runs > 1; runs = (runs + 1) / 2) ++rounds;
  return rounds;
}

extern "C" int h5g_cuda_merge_runs_typed(void *temp, size_t *temp_bytes, void *keys, void *alt,
                                         uint64_t *vals, uint64_t *alt_vals, size_t n,
                                         const h5g_keyspec *ks, unsigned raw,
                                         const uint64_t *run_offsets, size_t nruns,
                                         cudaStream_t stream) {
  int rc = H5G_OK;
  CHECK(h5g::check_keyspec(ks, "the merge"));
  if (raw & H5G_CUDA_RAW_IN)
    H5G_FAIL(H5G_ERR_USAGE, "the merge takes sorted runs of ordered bits, not raw keys");
  rc = h5g::dispatch_width(ks->width, [&](auto tag) {
    using K = decltype(tag);
    const h5g::KeyIO<K> io{h5g::key_map<K>(*ks), false, (raw & H5G_CUDA_RAW_OUT) != 0};
    /* a host-side choice between two instances: the keys-only kernel holds no value code */
    if (vals)
      return h5g::merge_runs<K, uint64_t>(temp, temp_bytes, (K *)keys, (K *)alt, n, run_offsets,
                                          nruns, io, stream, vals, alt_vals);
    return h5g::merge_runs<K>(temp, temp_bytes, (K *)keys, (K *)alt, n, run_offsets, nruns, io,
                              stream);
  });
done:
  return rc;
}

extern "C" int h5g_cuda_merge_runs(void *temp, size_t *temp_bytes, void *keys, void *alt,
                                   uint64_t *vals, uint64_t *alt_vals, size_t n, unsigned width,
                                   const uint64_t *run_offsets, size_t nruns, cudaStream_t stream) {
  const h5g_keyspec bits = {H5G_KEY_UNSIGNED, width, 0};
  return h5g_cuda_merge_runs_typed(temp, temp_bytes, keys, alt, vals, alt_vals, n, &bits, 0,
                                   run_offsets, nruns, stream);
}
