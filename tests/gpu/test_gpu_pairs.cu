/* Key+value (record) sorts and merges on the GPU against a CPU reference: std::stable_sort of
 * (key, value) by key, which shares no code with the kernels.
 * - sort: h5g_cuda_radix_sort and h5g_cuda_sort with values (the dispatcher must take the stable
 *   radix sort at sizes where keys alone take the bitonic sort), every width (1 to 16 bytes),
 *   every size of the brief (0 .. 10^7), every distribution (keys.hpp's too: few varying
 *   bytes, so most of a 16-byte key's passes are skipped; all-ones keys, the tiles' padding
 *   value); values are not the positions (~i), so a sort that writes the index instead of the
 *   value fails (the 32-bit index variant is bench/local_sort.cu's, checked there against CUB);
 * - merge: 2, 5 and 64 runs of unequal lengths (empty runs included), each stable-sorted on the
 *   CPU first; equal keys must come out earlier runs first;
 * - stability is also checked on its own: among equal keys, the source positions increase;
 * - the CUDA backend's sort / merge with values (base/backend.h), merge rounds and the re-sort
 *   beyond merge_max_rounds, and its capacity with values under a small budget.
 * "small" on the command line: sizes up to 8193 and two distributions only (compute-sanitizer
 * runs). */
#include "base/backend.h"
#include "kernels/cuda_backend.h"
#include "kernels/kernels.h"
#include "tests/support/check_cuda.h"
#include "tests/support/device_pairs.hpp"
#include "tests/support/keys.hpp"

/* The value of source position i: not i itself, and all 64 bits in use. */
static uint64_t value_of(size_t i) { return ~(uint64_t)i; }
static size_t position_of(uint64_t value) { return (size_t)~value; }

template <typename K> Pairs<K> make_pairs(size_t n, int dist, uint64_t seed) {
  Pairs<K> p{gpu_keys<K>(n, dist, seed), std::vector<uint64_t>(n)};
  for (size_t i = 0; i < n; ++i) p.vals[i] = value_of(i);
  return p;
}

/* Stable sort by key of p[begin, end). */
template <typename K> void stable_sort_range(Pairs<K> &p, size_t begin, size_t end) {
  std::vector<size_t> order(end - begin);
  for (size_t i = 0; i < order.size(); ++i) order[i] = begin + i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p.keys[a] < p.keys[b]; });
  std::vector<K> k(order.size());
  std::vector<uint64_t> v(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    k[i] = p.keys[order[i]];
    v[i] = p.vals[order[i]];
  }
  std::copy(k.begin(), k.end(), p.keys.begin() + begin);
  std::copy(v.begin(), v.end(), p.vals.begin() + begin);
}

/* Runs [off[r], off[r+1]) of the input, each stable-sorted: the reference's pairs whose source
 * position lies in run r, in reference order (the reference is sorted by key, then position). */
template <typename K> Pairs<K> sorted_runs(const Pairs<K> &ref, const std::vector<uint64_t> &off) {
  Pairs<K> runs = ref;
  std::vector<uint64_t> next(off.begin(), off.end() - 1);
  for (size_t i = 0; i < ref.keys.size(); ++i) {
    const size_t r = std::upper_bound(off.begin(), off.end(), position_of(ref.vals[i])) - off.begin() - 1;
    runs.keys[next[r]] = ref.keys[i];
    runs.vals[next[r]++] = ref.vals[i];
  }
  return runs;
}

/* got must equal the reference exactly; stability is also checked on its own (equal keys: source
 * positions increase), so a failure says which property broke. */
template <typename K>
void expect_equal(const Pairs<K> &got, const Pairs<K> &ref, const char *what, size_t n, int dist) {
  size_t unstable = 0;
  for (size_t i = 1; i < got.keys.size(); ++i)
    if (got.keys[i - 1] == got.keys[i] && position_of(got.vals[i - 1]) >= position_of(got.vals[i]))
      ++unstable;
  EXPECT(unstable == 0, "%s %zu-byte n %zu %s: %zu equal-key neighbours out of input order", what,
         sizeof(K), n, gpu_dist_name(dist), unstable);
  EXPECT(got.keys == ref.keys, "%s %zu-byte n %zu %s: keys differ from the reference", what,
         sizeof(K), n, gpu_dist_name(dist));
  EXPECT(got.vals == ref.vals, "%s %zu-byte n %zu %s: values differ from the reference", what,
         sizeof(K), n, gpu_dist_name(dist));
}

enum Way { RADIX, DISPATCH, NWAYS };
static const char *way_name[NWAYS] = {"h5g_cuda_radix_sort", "h5g_cuda_sort"};

template <typename K> int sort_way(Way way, Device<K> &d, cudaStream_t stream) {
  const auto sort = way == RADIX ? h5g_cuda_radix_sort : h5g_cuda_sort;
  size_t bytes = 0;
  /* Each way sizes its own scratch first (NULL temp), as callers do. */
  MUST_OK(sort(NULL, &bytes, d.keys, d.alt, d.vals, d.alt_vals, d.n, sizeof(K), stream));
  EXPECT(bytes <= d.temp_bytes, "%s scratch %zu over the %zu allocated", way_name[way], bytes, d.temp_bytes);
  return sort(d.temp, &bytes, d.keys, d.alt, d.vals, d.alt_vals, d.n, sizeof(K), stream);
}

/* P run offsets of unequal lengths over n (some runs empty when P is large against n). */
static std::vector<uint64_t> run_offsets(size_t n, size_t p, uint64_t seed) {
  std::vector<uint64_t> off(p + 1, 0);
  uint64_t s = seed;
  for (size_t r = 1; r < p; ++r) off[r] = n ? splitmix64(&s) % (n + 1) : 0;
  std::sort(off.begin() + 1, off.end() - 1);
  off[p] = n;
  return off;
}

template <typename K> void check_width(size_t n, int dist, cudaStream_t stream) {
  const Pairs<K> input = make_pairs<K>(n, dist, 17);
  Pairs<K> ref = input;
  stable_sort_range(ref, 0, n);
  Device<K> d(n);
  size_t scratch = 0, bytes = 0;
  MUST_OK(h5g_cuda_sort(NULL, &bytes, d.keys, d.alt, d.vals, d.alt_vals, n, sizeof(K), stream));
  scratch = std::max(scratch, bytes);
  const size_t run_counts[3] = {2, 5, 64};
  for (size_t p : run_counts) {
    std::vector<uint64_t> off = run_offsets(n, p, p);
    MUST_OK(h5g_cuda_merge_runs(NULL, &bytes, d.keys, d.alt, d.vals, d.alt_vals, n, sizeof(K),
                                off.data(), p, stream));
    scratch = std::max(scratch, bytes);
  }
  d.reserve(scratch);
  for (int w = 0; w < NWAYS; ++w) {
    d.upload(input, stream);
    MUST_OK(sort_way((Way)w, d, stream));
    expect_equal(d.download(stream), ref, way_name[w], n, dist);
  }
  for (size_t p : run_counts) {
    const std::vector<uint64_t> off = run_offsets(n, p, p);
    d.upload(sorted_runs(ref, off), stream);
    bytes = scratch;
    MUST_OK(h5g_cuda_merge_runs(d.temp, &bytes, d.keys, d.alt, d.vals, d.alt_vals, n, sizeof(K),
                                off.data(), p, stream));
    char what[32];
    snprintf(what, sizeof what, "merge of %zu runs", p);
    expect_equal(d.download(stream), ref, what, n, dist);
  }
}

/* The backend: pairs sorted and merged in host memory, merge rounds and the re-sort path. */
template <typename K> void check_backend(h5g_backend *be, size_t n, int dist) {
  const Pairs<K> input = make_pairs<K>(n, dist, 29);
  Pairs<K> ref = input, got = input;
  stable_sort_range(ref, 0, n);
  MUST_OK(be->sort(be, got.keys.data(), got.vals.data(), n, sizeof(K)));
  expect_equal(got, ref, "backend sort with values", n, dist);
  /* 3 runs merge in 2 rounds; 300 runs (9 rounds) exceed merge_max_rounds: re-sort. */
  for (size_t p : {(size_t)3, (size_t)300}) {
    const std::vector<uint64_t> off = run_offsets(n, p, 7 * p);
    got = sorted_runs(ref, off);
    MUST_OK(be->merge(be, got.keys.data(), got.vals.data(), n, sizeof(K), off.data(), p));
    char what[48];
    snprintf(what, sizeof what, "backend merge with values of %zu runs", p);
    expect_equal(got, ref, what, n, dist);
  }
}

int main(int argc, char **argv) {
  parse_args(argc, argv);
  require_gpu();
  cudaStream_t stream;
  MUST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<size_t> sizes = {0, 1, 2, 31, 32, 33, 1000, 4095, 4096, 4097, ((size_t)1 << 20) + 1, 10000000};
  std::vector<int> dists = {RANDOM,     SORTED,   REVERSED,  ALL_EQUAL,
                            FEW_UNIQUE, LOW_BITS, FEW_BYTES, ALL_ONES};
  if (g_small) { /* few launches: the sanitizer tools are slow */
    sizes = {0, 1, 2, 33, 4097, 8193};
    dists = {RANDOM, FEW_UNIQUE};
  }
  for (size_t n : sizes)
    for (int dist : dists) {
      check_width<uint8_t>(n, dist, stream);
      check_width<uint16_t>(n, dist, stream);
      check_width<uint32_t>(n, dist, stream);
      check_width<uint64_t>(n, dist, stream);
      check_width<u128>(n, dist, stream);
    }

  /* A size query says whether values move by a NULL or non-NULL vals (kernels.h): values take
   * more scratch (a smaller tile, so a larger look-back table), and a call with values is refused
   * the keys-only size. */
  {
    size_t keys_bytes = 0, pair_bytes = 0;
    void *temp = NULL;
    MUST_OK(h5g_cuda_sort(NULL, &keys_bytes, NULL, NULL, NULL, NULL, 1 << 20, 4, stream));
    MUST_OK(h5g_cuda_sort(NULL, &pair_bytes, NULL, NULL, H5G_CUDA_QUERY_VALUES, NULL, 1 << 20, 4,
                          stream));
    EXPECT(pair_bytes > keys_bytes, "scratch with values %zu, keys only %zu", pair_bytes,
           keys_bytes);
    MUST_CUDA(cudaMalloc(&temp, keys_bytes));
    EXPECT(h5g_cuda_sort(temp, &keys_bytes, temp, temp, (uint64_t *)temp, (uint64_t *)temp, 1 << 20,
                         4, stream) == H5G_ERR_USAGE, "values sorted in keys-only scratch");
    h5g_error_clear();
    cudaFree(temp);
  }

  h5g_backend *be = NULL;
  MUST_OK(h5g_backend_cuda_create(&be, 0, 0));
  for (size_t n : {(size_t)0, (size_t)1, (size_t)2, (size_t)4097, g_small ? (size_t)8193 : (size_t)1000003})
    for (int dist : dists) {
      check_backend<uint8_t>(be, n, dist);
      check_backend<uint32_t>(be, n, dist);
      check_backend<uint64_t>(be, n, dist);
      check_backend<u128>(be, n, dist);
    }
  be->destroy(be);

  /* A 64 MB budget: calls with values count keys, values, both ping-pong buffers and scratch;
   * capacity pairs sort, one more is refused. */
  MUST_OK(h5g_backend_cuda_create(&be, 0, 64u << 20));
  for (unsigned width : {4u, 8u, 16u}) {
    const size_t cap = be->capacity(be, width, 1), keys_cap = be->capacity(be, width, 0);
    EXPECT(cap > 0 && cap * (width + 8) * 2 <= (64u << 20) && cap < keys_cap,
           "pair capacity %zu of %u-byte keys under 64 MB (keys only: %zu)", cap, width, keys_cap);
    if (width == 8 && !g_small) {
      Pairs<uint64_t> p = make_pairs<uint64_t>(cap + 1, FEW_UNIQUE, 3);
      Pairs<uint64_t> input{std::vector<uint64_t>(p.keys.begin(), p.keys.begin() + cap),
                            std::vector<uint64_t>(p.vals.begin(), p.vals.begin() + cap)};
      Pairs<uint64_t> ref = input;
      stable_sort_range(ref, 0, cap);
      MUST_OK(be->sort(be, p.keys.data(), p.vals.data(), cap, 8));
      p.keys.resize(cap);
      p.vals.resize(cap);
      expect_equal(p, ref, "backend sort with values at capacity", cap, FEW_UNIQUE);
      p = make_pairs<uint64_t>(cap + 1, RANDOM, 3);
      EXPECT(be->sort(be, p.keys.data(), p.vals.data(), cap + 1, 8) != H5G_OK,
             "sort with values over capacity accepted");
      h5g_error_clear();
    }
  }
  be->destroy(be);
  cudaStreamDestroy(stream);
  return finish("test_gpu_pairs");
}
