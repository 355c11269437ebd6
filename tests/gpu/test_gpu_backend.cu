/* The CUDA backend through its interface (base/backend.h): sort, merge (few and many runs) and
 * transform of host keys, the device-resident path (load in pieces, sort, kept run, merge of
 * received runs, copy back waited for piece by piece), pinning host buffers, capacity under a small mem_budget (calls at capacity succeed, calls
 * above it are refused), and the device count. */
#include "base/backend.h"
#include "base/host_memory.h"
#include "tests/gpu/gpu_test.cuh"

/* A pinned host buffer as the pipeline makes one: resident memory the backend pins. */
template <typename K> K *pinned_keys(h5g_backend *be, size_t n) {
  void *p = NULL;
  MUST_OK(h5g_resident_alloc(n * sizeof(K), 1, &p));
  if (p) MUST_OK(be->pin(be, p, n * sizeof(K)));
  return (K *)p;
}

static void free_pinned(h5g_backend *be, void *p) {
  if (!p) return;
  be->unpin(be, p);
  h5g_resident_free(p);
}

template <typename K> void check_sort_merge(h5g_backend *be, size_t n, Dist dist) {
  const unsigned width = sizeof(K);
  const std::vector<K> input = make_keys<K>(n, dist, 21);
  K *host = pinned_keys<K>(be, n);
  EXPECT((n == 0) == (host == NULL), "pinned buffer of %zu bytes", n * width);
  if (n) memcpy(host, input.data(), n * width);
  MUST_OK(be->sort(be, host, n, width));
  std::vector<K> got(host, host + n);
  EXPECT(check_sorted(input, got), "backend sort %u-byte n %zu %s", width, n, dist_name[dist]);

  /* 3 and 40 sorted runs (some empty), merged: merge path or a re-sort, by rounds and width. */
  for (size_t nruns : {3, 40}) {
    std::vector<uint64_t> offsets(nruns + 1);
    for (size_t r = 0; r <= nruns; ++r) offsets[r] = r < nruns / 4 ? 0 : n * r / nruns;
    std::vector<K> runs(input);
    for (size_t r = 0; r < nruns; ++r) std::sort(runs.begin() + offsets[r], runs.begin() + offsets[r + 1]);
    if (n) memcpy(host, runs.data(), n * width);
    MUST_OK(be->merge(be, host, n, width, offsets.data(), nruns));
    got.assign(host, host + n);
    EXPECT(check_sorted(input, got), "backend merge %u-byte n %zu runs %zu %s", width, n, nruns,
           dist_name[dist]);
  }
  free_pinned(be, host);
}

/* The CPU reference: keys of class ks sorted by their ordered bits, as ordered bits (ordered) or
 * as the keys themselves. */
template <typename K> std::vector<K> reference(std::vector<K> keys, const h5g_keyspec &ks, bool ordered) {
  h5g_keys_to_ordered(keys.data(), keys.size(), &ks);
  std::sort(keys.begin(), keys.end());
  if (!ordered) h5g_keys_from_ordered(keys.data(), keys.size(), &ks);
  return keys;
}

/* Loads n host keys to the device in `pieces` uneven pieces, as the pipeline does while reading. */
template <typename K> void load_in_pieces(h5g_backend *be, const K *host, size_t n, size_t pieces) {
  for (size_t first = 0, i = 0; first < n; ++i) {
    size_t count = i + 1 < pieces ? (n / pieces) * (i % 2 ? 3 : 1) / 2 + 1 : n - first;
    if (count > n - first) count = n - first;
    MUST_OK(be->load(be, host + first, first, count, n, sizeof(K)));
    first += count;
  }
}

/* The device-resident path: load in pieces, sort (the output, or ordered bits kept on the
 * device), receive runs into the spare buffer and merge them, each copy back waited for piece by
 * piece; every result against the CPU reference. */
template <typename K> void check_resident(h5g_backend *be, size_t n, Dist dist, h5g_key_class cls,
                                          int descending) {
  const unsigned width = sizeof(K);
  const h5g_keyspec ks = {cls, width, descending};
  const std::vector<K> input = make_keys<K>(n, dist, 33), other = make_keys<K>(n, dist, 34);
  K *host = pinned_keys<K>(be, n);
  if (n) memcpy(host, input.data(), n * width);
  load_in_pieces(be, host, n, 3);
  MUST_OK(be->sort_loaded(be, host, n, &ks, 1));
  for (size_t upto = 0; upto <= n; upto += n / 5 + 1) MUST_OK(be->wait_copied(be, upto));
  MUST_OK(be->wait_copied(be, n));
  EXPECT(std::vector<K>(host, host + n) == reference(input, ks, false),
         "resident sort, output: %u-byte class %d desc %d n %zu %s", width, cls, descending, n,
         dist_name[dist]);

  if (n) memcpy(host, input.data(), n * width);
  load_in_pieces(be, host, n, 1);
  MUST_OK(be->sort_loaded(be, host, n, &ks, 0));
  MUST_OK(be->wait_copied(be, n));
  const std::vector<K> sorted_bits = reference(input, ks, true);
  EXPECT(std::vector<K>(host, host + n) == sorted_bits, "resident sort, ordered bits: %u-byte n %zu %s",
         width, n, dist_name[dist]);
  void *run = NULL, *spare = NULL;
  MUST_OK(be->run_buffers(be, &run, &spare));
  std::vector<K> kept(n);
  if (n) MUST_CUDA(cudaMemcpy(kept.data(), run, n * width, cudaMemcpyDeviceToHost));
  EXPECT(kept == sorted_bits, "resident run kept on the device: %u-byte n %zu", width, n);

  /* what an exchange would deliver: 5 sorted runs of ordered bits (two empty) in the spare buffer */
  const size_t nruns = 5;
  std::vector<uint64_t> offsets = {0, 0, n / 3, n / 3, n / 2, n};
  std::vector<K> runs(other);
  h5g_keys_to_ordered(runs.data(), n, &ks);
  for (size_t r = 0; r < nruns; ++r) std::sort(runs.begin() + offsets[r], runs.begin() + offsets[r + 1]);
  if (n) MUST_CUDA(cudaMemcpy(spare, runs.data(), n * width, cudaMemcpyHostToDevice));
  MUST_OK(be->merge_received(be, host, n, &ks, offsets.data(), nruns));
  MUST_OK(be->wait_copied(be, n / 2));
  MUST_OK(be->wait_copied(be, n));
  EXPECT(std::vector<K>(host, host + n) == reference(other, ks, false),
         "resident merge of received runs: %u-byte class %d n %zu %s", width, cls, n, dist_name[dist]);
  free_pinned(be, host);
}

static void check_transform(h5g_backend *be) {
  const h5g_keyspec ks = {H5G_KEY_FLOAT, 8, 0};
  const double values[6] = {NAN, 1.5, -0.0, 0.0, -INFINITY, -2.0};
  double keys[6];
  memcpy(keys, values, sizeof keys);
  MUST_OK(be->transform(be, keys, 6, &ks, 0));
  uint64_t bits[6];
  memcpy(bits, keys, sizeof bits);
  /* -inf < -2 < -0.0 < 0.0 < 1.5 < NaN */
  EXPECT(bits[4] < bits[5] && bits[5] < bits[2] && bits[2] < bits[3] && bits[3] < bits[1] &&
             bits[1] < bits[0], "backend transform order");
  MUST_OK(be->transform(be, keys, 6, &ks, 1));
  EXPECT(memcmp(keys, values, sizeof keys) == 0, "backend transform round trip");
}

int main(void) {
  require_gpu();
  EXPECT(h5g_cuda_device_count() > 0, "device count");
  h5g_backend *be = NULL;
  MUST_OK(h5g_backend_cuda_create(&be, 5, 0));
  printf("device %s, budget %llu bytes, capacity u32 %zu keys\n", be->device_name,
         (unsigned long long)be->mem_budget, be->capacity(be, 4));
  EXPECT(strcmp(be->name, "cuda") == 0 && be->device_name[0], "names");
  for (size_t n : {(size_t)0, (size_t)1, (size_t)2, (size_t)1000, (size_t)4097, (size_t)1000003})
    for (int d = 0; d < NDIST; ++d) {
      check_sort_merge<uint8_t>(be, n, (Dist)d);
      check_sort_merge<uint16_t>(be, n, (Dist)d);
      check_sort_merge<uint32_t>(be, n, (Dist)d);
      check_sort_merge<uint64_t>(be, n, (Dist)d);
    }
  check_transform(be);
  for (size_t n : {(size_t)0, (size_t)1, (size_t)2, (size_t)4097, (size_t)3000017})
    for (int d = 0; d < NDIST; ++d) {
      check_resident<uint8_t>(be, n, (Dist)d, H5G_KEY_SIGNED, 0);
      check_resident<uint16_t>(be, n, (Dist)d, H5G_KEY_UNSIGNED, 1);
      check_resident<uint32_t>(be, n, (Dist)d, H5G_KEY_UNSIGNED, 0);
      check_resident<uint32_t>(be, n, (Dist)d, H5G_KEY_FLOAT, 0);
      check_resident<uint64_t>(be, n, (Dist)d, H5G_KEY_FLOAT, 1);
      check_resident<uint64_t>(be, n, (Dist)d, H5G_KEY_SIGNED, 0);
    }
  EXPECT(be->h2d_seconds > 0 && be->d2h_seconds > 0 && be->kernel_seconds > 0 &&
             be->waited_seconds > 0, "resident path timed: h2d %g d2h %g kernels %g waited %g",
         be->h2d_seconds, be->d2h_seconds, be->kernel_seconds, be->waited_seconds);
  /* a run of more keys than loaded is refused, not sorted from stale memory */
  {
    const h5g_keyspec ks = {H5G_KEY_UNSIGNED, 4, 0};
    std::vector<uint32_t> keys = make_keys<uint32_t>(100, RANDOM, 5);
    MUST_OK(be->load(be, keys.data(), 0, 100, 100, 4));
    EXPECT(be->sort_loaded(be, keys.data(), 101, &ks, 1) != H5G_OK, "sort of unloaded keys accepted");
    EXPECT(be->wait_copied(be, 1) != H5G_OK, "wait for keys never copied back accepted");
    h5g_error_clear();
  }
  be->destroy(be);

  /* A 64 MB budget: capacity keys sort; one more is refused. */
  MUST_OK(h5g_backend_cuda_create(&be, 0, 64u << 20));
  for (unsigned width : {4u, 8u}) {
    const size_t cap = be->capacity(be, width);
    EXPECT(cap > 0 && cap * width * 2 <= (64u << 20) && cap * width * 2 > (48u << 20),
           "capacity %zu of %u-byte keys under 64 MB", cap, width);
    if (width == 4) {
      std::vector<uint32_t> keys = make_keys<uint32_t>(cap + 1, RANDOM, 3);
      const std::vector<uint32_t> input(keys.begin(), keys.begin() + cap);
      MUST_OK(be->sort(be, keys.data(), cap, 4));
      EXPECT(check_sorted(input, std::vector<uint32_t>(keys.begin(), keys.begin() + cap)),
             "sort at capacity");
      EXPECT(be->sort(be, keys.data(), cap + 1, 4) != H5G_OK, "sort over capacity accepted");
      h5g_error_clear();
    }
  }
  be->destroy(be);
  return finish("test_gpu_backend");
}
