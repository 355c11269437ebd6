/* Exclusive scan, cut points and merge of sorted runs against CPU loops:
 * - scan: 64-bit sums (values that overflow 32 bits), every size of test_sizes(), in place too;
 * - cut points: lower and upper bounds of present, absent, extreme values (keys of the keys'
 *   width: 16-byte values that differ from keys only in their high half included);
 * - merge: 1 .. 64 runs of unequal lengths (empty runs included), every width (1 to 16 bytes)
 *   and distribution. */
#include "kernels/kernels.h"
#include "tests/support/check_cuda.h"
#include "tests/support/keys.hpp"

static void check_scan(size_t n, bool in_place, cudaStream_t stream) {
  std::vector<uint64_t> in(n), out(n), ref(n);
  uint64_t s = n, sum = 0;
  for (size_t i = 0; i < n; ++i) in[i] = test_rand(&s) >> (i % 3 == 0 ? 20 : 40);
  for (size_t i = 0; i < n; ++i) {
    ref[i] = sum;
    sum += in[i];
  }
  uint64_t *d_in = NULL, *d_out = NULL;
  void *temp = NULL;
  size_t temp_bytes = 0;
  MUST_CUDA(cudaMalloc(&d_in, n * 8 + 8));
  MUST_CUDA(cudaMalloc(&d_out, n * 8 + 8));
  MUST_CUDA(cudaMemset(d_out, 0xa5, n * 8 + 8));
  MUST_CUDA(cudaMemcpy(d_in, in.data(), n * 8, cudaMemcpyHostToDevice));
  uint64_t *target = in_place ? d_in : d_out;
  MUST_OK(h5g_cuda_exclusive_scan(NULL, &temp_bytes, d_in, target, n, stream));
  MUST_CUDA(cudaMalloc(&temp, temp_bytes));
  MUST_OK(h5g_cuda_exclusive_scan(temp, &temp_bytes, d_in, target, n, stream));
  MUST_CUDA(cudaMemcpyAsync(out.data(), target, n * 8, cudaMemcpyDeviceToHost, stream));
  MUST_CUDA(cudaStreamSynchronize(stream));
  EXPECT(out == ref, "scan n = %zu in_place %d", n, in_place);
  cudaFree(temp);
  cudaFree(d_out);
  cudaFree(d_in);
}

template <typename K> void check_cut_points(size_t n, Dist dist, cudaStream_t stream) {
  std::vector<K> keys = make_keys<K>(n, dist, 11);
  std::sort(keys.begin(), keys.end());
  const K max = (K)~(K)0;
  std::vector<K> values = {0, 1, max, (K)(max - 1)};
  uint64_t s = 5;
  for (int i = 0; i < 100; ++i) {
    const K present = n ? keys[test_rand(&s) % n] : 0;
    values.push_back(present);
    /* beside a present key: the same low 64 bits, a high half one above (none below 128 bits) */
    if constexpr (sizeof(K) > 8) values.push_back(present + ((K)1 << 64));
  }
  for (K random : make_keys<K>(100, RANDOM, 6)) values.push_back(random);
  const size_t m = values.size();
  K *d_keys = NULL, *d_values = NULL;
  uint64_t *d_pos = NULL;
  std::vector<uint64_t> pos(m);
  MUST_CUDA(cudaMalloc(&d_keys, n * sizeof(K) + 1));
  MUST_CUDA(cudaMalloc(&d_values, m * sizeof(K)));
  MUST_CUDA(cudaMalloc(&d_pos, m * 8));
  MUST_CUDA(cudaMemcpy(d_keys, keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
  MUST_CUDA(cudaMemcpy(d_values, values.data(), m * sizeof(K), cudaMemcpyHostToDevice));
  for (int upper = 0; upper < 2; ++upper) {
    MUST_OK(h5g_cuda_cut_points(d_keys, n, sizeof(K), d_values, m, upper, d_pos, stream));
    MUST_CUDA(cudaMemcpyAsync(pos.data(), d_pos, m * 8, cudaMemcpyDeviceToHost, stream));
    MUST_CUDA(cudaStreamSynchronize(stream));
    for (size_t i = 0; i < m; ++i) {
      size_t ref = 0; /* the plain count */
      for (size_t j = 0; j < n; ++j) ref += upper ? keys[j] <= values[i] : keys[j] < values[i];
      char text[40];
      EXPECT(pos[i] == ref, "cut point %zu-byte n %zu %s upper %d value %s: %llu, want %zu",
             sizeof(K), n, dist_name[dist], upper, key_text(values[i], text),
             (unsigned long long)pos[i], ref);
    }
  }
  cudaFree(d_pos);
  cudaFree(d_values);
  cudaFree(d_keys);
}

/* nruns sorted runs of pseudo-random lengths (some empty) summing to n, merged on the GPU. */
template <typename K> void check_merge(size_t n, size_t nruns, Dist dist, cudaStream_t stream) {
  std::vector<K> keys = make_keys<K>(n, dist, 13 + nruns);
  std::vector<uint64_t> offsets(nruns + 1, 0);
  uint64_t s = n * 31 + nruns;
  for (size_t r = 1; r < nruns; ++r) offsets[r] = (test_rand(&s) % 4 == 0) ? 0 : test_rand(&s) % (n + 1);
  offsets[nruns] = n;
  std::sort(offsets.begin(), offsets.end());
  for (size_t r = 0; r < nruns; ++r) std::sort(keys.begin() + offsets[r], keys.begin() + offsets[r + 1]);
  const unsigned width = sizeof(K);
  K *d_keys = NULL, *d_alt = NULL;
  void *temp = NULL;
  size_t temp_bytes = 0;
  std::vector<K> got(n);
  MUST_CUDA(cudaMalloc(&d_keys, n * width + 1));
  MUST_CUDA(cudaMalloc(&d_alt, n * width + 1));
  MUST_CUDA(cudaMemset(d_alt, 0xa5, n * width + 1));
  MUST_CUDA(cudaMemcpy(d_keys, keys.data(), n * width, cudaMemcpyHostToDevice));
  MUST_OK(h5g_cuda_merge_runs(NULL, &temp_bytes, d_keys, d_alt, NULL, NULL, n, width, offsets.data(),
                              nruns, stream));
  MUST_CUDA(cudaMalloc(&temp, temp_bytes));
  MUST_OK(h5g_cuda_merge_runs(temp, &temp_bytes, d_keys, d_alt, NULL, NULL, n, width, offsets.data(),
                              nruns, stream));
  MUST_CUDA(cudaMemcpyAsync(got.data(), d_keys, n * width, cudaMemcpyDeviceToHost, stream));
  MUST_CUDA(cudaStreamSynchronize(stream));
  EXPECT(check_sorted(keys, got), "merge %u-byte n %zu runs %zu %s", width, n, nruns, dist_name[dist]);
  cudaFree(temp);
  cudaFree(d_alt);
  cudaFree(d_keys);
}

template <typename K> void check_width(cudaStream_t stream) {
  for (size_t n : {(size_t)0, (size_t)1, (size_t)2, (size_t)33, (size_t)1000, (size_t)65537})
    for (int d = 0; d < NDIST; ++d) check_cut_points<K>(n, (Dist)d, stream);
  for (size_t n : test_sizes())
    for (size_t nruns : {1, 2, 3, 8, 64})
      for (int d = 0; d < NDIST; ++d)
        if (n < 2000000 || d == RANDOM || d == FEW_UNIQUE) check_merge<K>(n, nruns, (Dist)d, stream);
  printf("%zu-byte keys done\n", sizeof(K));
}

int main(int argc, char **argv) {
  require_gpu();
  parse_args(argc, argv);
  cudaStream_t stream;
  MUST_CUDA(cudaStreamCreate(&stream));
  for (size_t n : test_sizes()) {
    check_scan(n, false, stream);
    check_scan(n, true, stream);
  }
  printf("scan done\n");
  check_width<uint8_t>(stream);
  check_width<uint16_t>(stream);
  check_width<uint32_t>(stream);
  check_width<uint64_t>(stream);
  check_width<u128>(stream);
  return test_summary("test_gpu_scan_merge");
}
