/* GPU key transform: for every key class and width (integers of 1 to 16 bytes, floats of 4 and
 * 8), ascending and descending (floats: NaNs at numpy's place, first and last: --na-position),
 * - the ordered bits equal the CPU reference written from the spec (base/keys.h) and the bits
 *   of base/keys.c (h5g_keys_to_ordered),
 * - sorting the ordered bits and transforming back gives numpy.sort's order (NaNs last,
 *   -0.0 before +0.0) or its exact reverse, the NaNs at the end asked for,
 * - the inverse gives back every input bit pattern (NaN payloads, -0.0);
 * - the device checksum (h5g_cuda_keys_checksum) of the raw keys, whole and as two pieces added
 *   up, equals base/keys.c's h5g_keys_checksum. */
#include "kernels/kernels.h"
#include "tests/support/check_cuda.h"
#include "tests/support/keys.hpp"
#include "tests/support/typed_keys.hpp"

/* Ordered bits as the spec defines them, in the key's own width; bits is the raw key. */
template <typename K> static K reference_ordered(K bits, const h5g_keyspec *ks) {
  const K sign = (K)((K)1 << (8 * sizeof(K) - 1));
  if (ks->cls == H5G_KEY_SIGNED) bits ^= sign;
  if (ks->cls == H5G_KEY_FLOAT) {
    const K neg_nans = (K)(ks->width == 4 ? (1ull << 23) - 1 : (1ull << 52) - 1);
    bits = (bits & sign) ? (K)~bits : (K)(bits ^ sign);
    /* NaNs last ascending: the negative NaNs above +NaN; first (or last descending): every NaN
     * below -inf, the negative ones above +NaN still */
    const bool nan_below = ks->na == (ks->descending ? H5G_NA_LAST : H5G_NA_FIRST);
    bits = nan_below ? (K)(bits + neg_nans) : (K)(bits - neg_nans);
  }
  return ks->descending ? (K)~bits : bits;
}

/* Sorts the ordered bits on the CPU and transforms them back on the GPU: the values must come
 * out in numpy order (or its exact reverse) with every input bit pattern present. */
template <typename K>
void check_order(const std::vector<K> &input, const std::vector<K> &ordered, const h5g_keyspec *ks,
                   K *d, cudaStream_t stream) {
  const size_t n = input.size();
  std::vector<K> back(n);
  std::vector<K> sorted(ordered);
  std::sort(sorted.begin(), sorted.end());
  MUST_CUDA(cudaMemcpyAsync(d, sorted.data(), n * sizeof(K), cudaMemcpyHostToDevice, stream));
  MUST_OK(h5g_cuda_keys_transform(d, n, ks, 1, stream));
  MUST_CUDA(cudaMemcpyAsync(back.data(), d, n * sizeof(K), cudaMemcpyDeviceToHost, stream));
  MUST_CUDA(cudaStreamSynchronize(stream));
  const size_t wrong = out_of_order(back.data(), n, ks);
  EXPECT(wrong == 0, "class %d width %u desc %d na %d n %zu: %zu pairs out of order", ks->cls,
         ks->width, ks->descending, ks->na, n, wrong);
  EXPECT(multiset_checksum(back.data(), n) == multiset_checksum(input.data(), n),
         "class %d width %u desc %d n %zu: inverse lost bit patterns", ks->cls, ks->width,
         ks->descending, n);
}

/* The device checksum of the keys in d (a copy of input) against the host's, once whole and once
 * as two pieces cut at an odd place, added into the same word. */
template <typename K>
void check_checksum(const std::vector<K> &input, const K *d, cudaStream_t stream) {
  const size_t n = input.size(), cut = n / 3 | 1;
  unsigned long long *sum = NULL, got[2] = {0, 0};
  MUST_CUDA(cudaMalloc(&sum, 2 * sizeof *sum));
  MUST_CUDA(cudaMemsetAsync(sum, 0, 2 * sizeof *sum, stream));
  MUST_OK(h5g_cuda_keys_checksum(d, n, sizeof(K), &sum[0], stream));
  if (n > cut) {
    MUST_OK(h5g_cuda_keys_checksum(d, cut, sizeof(K), &sum[1], stream));
    MUST_OK(h5g_cuda_keys_checksum(d + cut, n - cut, sizeof(K), &sum[1], stream));
  } else {
    MUST_OK(h5g_cuda_keys_checksum(d, n, sizeof(K), &sum[1], stream));
  }
  MUST_CUDA(cudaMemcpyAsync(got, sum, sizeof got, cudaMemcpyDeviceToHost, stream));
  MUST_CUDA(cudaStreamSynchronize(stream));
  const uint64_t want = h5g_keys_checksum(input.data(), n, sizeof(K));
  EXPECT(got[0] == want && got[1] == want,
         "width %zu n %zu: device checksum %llx (in two pieces %llx), the host's %llx", sizeof(K),
         n, got[0], got[1], (unsigned long long)want);
  cudaFree(sum);
}

template <typename K> void check_spec(const h5g_keyspec *ks, size_t n, cudaStream_t stream) {
  const std::vector<K> input = typed_keys<K>(n, RANDOM, ks, n + 3 * ks->cls + ks->descending);
  std::vector<K> ordered(n), back(n);
  K *d = NULL;
  MUST_CUDA(cudaMalloc(&d, n * sizeof(K) + 1));
  MUST_CUDA(cudaMemcpyAsync(d, input.data(), n * sizeof(K), cudaMemcpyHostToDevice, stream));
  check_checksum(input, d, stream);
  MUST_OK(h5g_cuda_keys_transform(d, n, ks, 0, stream));
  MUST_CUDA(cudaMemcpyAsync(ordered.data(), d, n * sizeof(K), cudaMemcpyDeviceToHost, stream));
  MUST_CUDA(cudaStreamSynchronize(stream));
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += ordered[i] != reference_ordered(input[i], ks);
  EXPECT(wrong == 0, "class %d width %u desc %d na %d n %zu: %zu keys differ from the reference",
         ks->cls, ks->width, ks->descending, ks->na, n, wrong);
  std::vector<K> host_ordered(input);
  h5g_keys_to_ordered(host_ordered.data(), n, ks);
  EXPECT(host_ordered == ordered, "class %d width %u desc %d n %zu: GPU bits differ from base/keys.c",
         ks->cls, ks->width, ks->descending, n);

  /* The CPU sort would dominate the test's time above 2^20 keys. */
  if (n <= (1u << 20)) check_order(input, ordered, ks, d, stream);

  /* Round trip in place keeps every bit. */
  MUST_CUDA(cudaMemcpyAsync(d, input.data(), n * sizeof(K), cudaMemcpyHostToDevice, stream));
  MUST_OK(h5g_cuda_keys_transform(d, n, ks, 0, stream));
  MUST_OK(h5g_cuda_keys_transform(d, n, ks, 1, stream));
  MUST_CUDA(cudaMemcpyAsync(back.data(), d, n * sizeof(K), cudaMemcpyDeviceToHost, stream));
  MUST_CUDA(cudaStreamSynchronize(stream));
  EXPECT(n == 0 || memcmp(back.data(), input.data(), n * sizeof(K)) == 0,
         "class %d width %u desc %d n %zu: round trip changed bits", ks->cls, ks->width,
         ks->descending, n);
  cudaFree(d);
}

int main(void) {
  require_gpu();
  cudaStream_t stream;
  MUST_CUDA(cudaStreamCreate(&stream));
  const h5g_key_class classes[] = {H5G_KEY_UNSIGNED, H5G_KEY_SIGNED, H5G_KEY_FLOAT};
  for (h5g_key_class cls : classes) {
    for (unsigned width : {1u, 2u, 4u, 8u, 16u}) {
      if (cls == H5G_KEY_FLOAT && (width < 4 || width > 8)) continue;
      for (int o = 0; o < 6; ++o) { /* each direction, NaNs at numpy's place, first, last */
        const int descending = o / 3;
        const h5g_na_position na = (h5g_na_position)(o % 3);
        if (cls != H5G_KEY_FLOAT && na != H5G_NA_DEFAULT) continue; /* integers: no NaN */
        const h5g_keyspec ks = {cls, width, descending, na};
        for (size_t n : {(size_t)0, (size_t)1, (size_t)2, (size_t)33, (size_t)1000, (size_t)65537, (size_t)10000000}) {
          switch (width) {
          case 1: check_spec<uint8_t>(&ks, n, stream); break;
          case 2: check_spec<uint16_t>(&ks, n, stream); break;
          case 4: check_spec<uint32_t>(&ks, n, stream); break;
          case 8: check_spec<uint64_t>(&ks, n, stream); break;
          default: check_spec<u128>(&ks, n, stream); break;
          }
        }
      }
    }
  }
  const h5g_keyspec half = {H5G_KEY_FLOAT, 2, 0};
  EXPECT(h5g_cuda_keys_transform(NULL, 1, &half, 0, stream) == H5G_ERR_USAGE, "16-bit floats accepted");
  const h5g_keyspec quad = {H5G_KEY_FLOAT, 16, 0};
  EXPECT(h5g_cuda_keys_transform(NULL, 1, &quad, 0, stream) == H5G_ERR_USAGE,
         "128-bit floats accepted");
  h5g_error_clear();
  return test_summary("test_gpu_transform");
}
