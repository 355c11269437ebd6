/* Device buffers of the GPU key+value tests (C++): keys with their uint64 values, and the device
 * keys, values, ping-pong buffers and scratch of one test, with guards past the end. */
#ifndef H5G_TESTS_SUPPORT_DEVICE_PAIRS_HPP
#define H5G_TESTS_SUPPORT_DEVICE_PAIRS_HPP

#include <string.h>
#include <vector>

#include "tests/support/check_cuda.h"

template <typename K> struct Pairs {
  std::vector<K> keys;
  std::vector<uint64_t> vals;
};

/* Device buffers of one test: keys, values, their ping-pong buffers and scratch (allocated
 * after the size queries, which take the value buffer to say that values move). The spare
 * byte/word past n catches a kernel that writes one element too many. */
template <typename K> struct Device {
  K *keys = NULL, *alt = NULL;
  uint64_t *vals = NULL, *alt_vals = NULL;
  void *temp = NULL;
  size_t temp_bytes = 0, n = 0;

  explicit Device(size_t count) : n(count) {
    MUST_CUDA(cudaMalloc(&keys, (n + 1) * sizeof(K)));
    MUST_CUDA(cudaMalloc(&alt, (n + 1) * sizeof(K)));
    MUST_CUDA(cudaMalloc(&vals, (n + 1) * 8));
    MUST_CUDA(cudaMalloc(&alt_vals, (n + 1) * 8));
  }
  void reserve(size_t scratch) {
    temp_bytes = scratch;
    MUST_CUDA(cudaMalloc(&temp, scratch + 1));
  }
  ~Device() {
    cudaFree(temp);
    cudaFree(alt_vals);
    cudaFree(vals);
    cudaFree(alt);
    cudaFree(keys);
  }
  /* p to keys and vals, the guards past n set, the ping-pong buffers poisoned (a key or value
   * never written shows) */
  void upload(const Pairs<K> &p, cudaStream_t stream) {
    MUST_CUDA(cudaMemcpyAsync(keys, p.keys.data(), n * sizeof(K), cudaMemcpyHostToDevice,
                              stream));
    MUST_CUDA(cudaMemcpyAsync(vals, p.vals.data(), n * 8, cudaMemcpyHostToDevice, stream));
    MUST_CUDA(cudaMemsetAsync(keys + n, 0x5a, sizeof(K), stream)); /* guards */
    MUST_CUDA(cudaMemsetAsync(vals + n, 0x5a, 8, stream));
    MUST_CUDA(cudaMemsetAsync(alt, 0xa5, (n + 1) * sizeof(K), stream));
    MUST_CUDA(cudaMemsetAsync(alt_vals, 0xa5, (n + 1) * 8, stream));
  }
  Pairs<K> download(cudaStream_t stream) {
    Pairs<K> p{std::vector<K>(n), std::vector<uint64_t>(n)};
    K key_guard = 0;
    uint64_t val_guard = 0;
    MUST_CUDA(cudaMemcpyAsync(p.keys.data(), keys, n * sizeof(K), cudaMemcpyDeviceToHost,
                              stream));
    MUST_CUDA(cudaMemcpyAsync(p.vals.data(), vals, n * 8, cudaMemcpyDeviceToHost, stream));
    MUST_CUDA(cudaMemcpyAsync(&key_guard, keys + n, sizeof(K), cudaMemcpyDeviceToHost,
                              stream));
    MUST_CUDA(cudaMemcpyAsync(&val_guard, vals + n, 8, cudaMemcpyDeviceToHost, stream));
    MUST_CUDA(cudaStreamSynchronize(stream));
    K want_key;
    memset(&want_key, 0x5a, sizeof want_key);
    EXPECT(key_guard == want_key && val_guard == 0x5a5a5a5a5a5a5a5aull,
           "%zu-byte n %zu: written past the end", sizeof(K), n);
    return p;
  }
};

#endif
