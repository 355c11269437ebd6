/* The CUDA backend through its interface (src/backend.h): sort, merge (few and many runs) and
 * transform of host keys, pinned host buffers, capacity under a small mem_budget (calls at capacity succeed, calls
 * above it are refused), and the device count. */
#include "src/backend.h"
#include "tests/gpu/gpu_test.cuh"

template <typename K> void check_sort_merge(h5g_backend *be, size_t n, Dist dist) {
  const unsigned width = sizeof(K);
  const std::vector<K> input = make_keys<K>(n, dist, 21);
  K *host = NULL;
  MUST_OK(be->host_alloc(be, n * width, (void **)&host));
  EXPECT((n == 0) == (host == NULL), "host_alloc of %zu bytes", n * width);
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
  be->host_free(be, host);
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
