/* splitmix64's finalizer over z + the golden-ratio increment: one step of the splitmix64
 * generator (state z), and a well-spread 64-bit hash of z. The one copy for C and CUDA: the key
 * checksum (base/keys.c on the host, kernels/checksum.cu on the GPU), the generator (tools/),
 * the tests' and benchmarks' data. */
#ifndef H5G_MIX_H
#define H5G_MIX_H

#include <stdint.h>

#ifdef __CUDACC__
#define H5G_MIX_QUALIFIERS __host__ __device__ static inline
#else
#define H5G_MIX_QUALIFIERS static inline
#endif

#define H5G_GOLDEN_GAMMA UINT64_C(0x9e3779b97f4a7c15)

H5G_MIX_QUALIFIERS uint64_t h5g_mix64(uint64_t z) {
  z += H5G_GOLDEN_GAMMA;
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* A key's term of the checksum (h5g_keys_checksum): its 64-bit hash, salted with its width in
 * bits. A 16-byte key's low half (`low`) is mixed with its high half's hash, so that keys
 * differing only in the high half sum differently; narrower keys have high == 0. */
H5G_MIX_QUALIFIERS uint64_t h5g_checksum_salt(unsigned bits) { return h5g_mix64(bits); }
H5G_MIX_QUALIFIERS uint64_t h5g_checksum_term(uint64_t low, uint64_t high, uint64_t salt) {
  return h5g_mix64((low ^ (high ? h5g_mix64(high) : 0)) ^ salt);
}

#endif
