/* The CUDA backend through its interface (base/backend.h): sort, merge (few and many runs) and
 * transform of host keys, the device-resident path (load in pieces, sort, kept run, merge of
 * received runs, copy back waited for piece by piece), keys alone and with values (the source
 * indices made on the device, against a stable CPU reference), pinning host buffers, capacity
 * under a small mem_budget (calls at capacity succeed, calls above it are refused), the merge
 * streamed in chunks under it, and the device count; keys of 1 to 16 bytes (16: composed keys).
 * The resident sort and merge transform keys inside their kernels (kernels.h, H5G_CUDA_RAW_IN/OUT):
 * signed, float and descending keys of every width there, special values among them
 * (typed_keys.hpp: NaN payloads, -0.0, infinities, extremes), against base/keys.c + std::sort. */
#include "base/backend.h"
#include "kernels/cuda_backend.h"
#include "base/host_memory.h"
#include "kernels/kernels.h"
#include "tests/support/check_cuda.h"
#include "tests/support/keys.hpp"
#include "tests/support/typed_keys.hpp"

/* A pinned host buffer as the pipeline makes one: resident memory the backend pins. */
template <typename K> K *pinned_keys(h5g_backend *be, size_t n) {
  void *p = NULL;
  MUST_OK(h5g_resident_alloc(n * sizeof(K), 1, &p));
  if (p) MUST_OK(be->pin(be, p, n * sizeof(K)));
  return (K *)p;
}

template <typename K> void free_pinned(h5g_backend *be, K *p, size_t n) {
  if (!p) return;
  be->unpin(be, p);
  h5g_resident_free(p, n * sizeof(K));
}

template <typename K> void check_sort_merge(h5g_backend *be, size_t n, Dist dist) {
  const unsigned width = sizeof(K);
  const std::vector<K> input = make_keys<K>(n, dist, 21);
  K *host = pinned_keys<K>(be, n);
  EXPECT((n == 0) == (host == NULL), "pinned buffer of %zu bytes", n * width);
  if (n) memcpy(host, input.data(), n * width);
  MUST_OK(be->sort(be, host, NULL, n, width));
  std::vector<K> got(host, host + n);
  EXPECT(check_sorted(input, got), "backend sort %u-byte n %zu %s", width, n, dist_name[dist]);

  /* 3 and 40 sorted runs (some empty), merged: merge path or a re-sort, by rounds and width. */
  for (size_t nruns : {3, 40}) {
    std::vector<uint64_t> offsets(nruns + 1);
    for (size_t r = 0; r <= nruns; ++r) offsets[r] = r < nruns / 4 ? 0 : n * r / nruns;
    std::vector<K> runs(input);
    for (size_t r = 0; r < nruns; ++r) std::sort(runs.begin() + offsets[r], runs.begin() + offsets[r + 1]);
    if (n) memcpy(host, runs.data(), n * width);
    MUST_OK(be->merge(be, host, NULL, n, width, offsets.data(), nruns));
    got.assign(host, host + n);
    EXPECT(check_sorted(input, got), "backend merge %u-byte n %zu runs %zu %s", width, n, nruns,
           dist_name[dist]);
  }
  free_pinned(be, host, n);
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
template <typename K>
void load_in_pieces(h5g_backend *be, const K *host, size_t n, size_t pieces, int with_values = 0) {
  for (size_t first = 0, i = 0; first < n; ++i) {
    size_t count = i + 1 < pieces ? (n / pieces) * (i % 2 ? 3 : 1) / 2 + 1 : n - first;
    if (count > n - first) count = n - first;
    MUST_OK(be->load(be, host + first, first, count, n, sizeof(K), with_values));
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
  const std::vector<K> input = typed_keys<K>(n, dist, &ks, 33);
  const std::vector<K> other = typed_keys<K>(n, dist, &ks, 34);
  K *host = pinned_keys<K>(be, n);
  if (n) memcpy(host, input.data(), n * width);
  load_in_pieces(be, host, n, 3);
  MUST_OK(be->sort_loaded(be, host, NULL, 0, n, &ks, 1));
  for (size_t upto = 0; upto <= n; upto += n / 5 + 1) MUST_OK(be->wait_copied(be, upto));
  MUST_OK(be->wait_copied(be, n));
  EXPECT(std::vector<K>(host, host + n) == reference(input, ks, false),
         "resident sort, output: %u-byte class %d desc %d n %zu %s", width, cls, descending, n,
         dist_name[dist]);

  if (n) memcpy(host, input.data(), n * width);
  load_in_pieces(be, host, n, 1);
  MUST_OK(be->sort_loaded(be, host, NULL, 0, n, &ks, 0));
  MUST_OK(be->wait_copied(be, n));
  const std::vector<K> sorted_bits = reference(input, ks, true);
  EXPECT(std::vector<K>(host, host + n) == sorted_bits, "resident sort, ordered bits: %u-byte n %zu %s",
         width, n, dist_name[dist]);
  h5g_device_run run;
  MUST_OK(be->run_buffers(be, &run));
  EXPECT(n == 0 || (run.values == NULL && run.spare_values == NULL),
         "device values of a run without values"); /* n == 0 loads nothing: an earlier run */
  std::vector<K> kept(n);
  if (n) MUST_CUDA(cudaMemcpy(kept.data(), run.keys, n * width, cudaMemcpyDeviceToHost));
  EXPECT(kept == sorted_bits, "resident run kept on the device: %u-byte n %zu", width, n);

  /* what an exchange would deliver: 5 sorted runs of ordered bits (two empty) in the spare buffer */
  const size_t nruns = 5;
  std::vector<uint64_t> offsets = {0, 0, n / 3, n / 3, n / 2, n};
  std::vector<K> runs(other);
  h5g_keys_to_ordered(runs.data(), n, &ks);
  for (size_t r = 0; r < nruns; ++r) std::sort(runs.begin() + offsets[r], runs.begin() + offsets[r + 1]);
  if (n) MUST_CUDA(cudaMemcpy(run.spare, runs.data(), n * width, cudaMemcpyHostToDevice));
  /* as below: a small copy from pageable memory may return before its DMA ends (n 1 failed,
   * now and then, under ctest -j4) */
  MUST_CUDA(cudaDeviceSynchronize());
  MUST_OK(be->merge_received(be, host, NULL, n, &ks, offsets.data(), nruns));
  MUST_OK(be->wait_copied(be, n / 2));
  MUST_OK(be->wait_copied(be, n));
  EXPECT(std::vector<K>(host, host + n) == reference(other, ks, false),
         "resident merge of received runs: %u-byte class %d n %zu %s", width, cls, n, dist_name[dist]);
  free_pinned(be, host, n);
}

/* Equal neighbours whose values (here growing with the source position) do not increase. */
template <typename K> size_t unstable_pairs(const K *keys, const uint64_t *values, size_t n) {
  size_t unstable = 0;
  for (size_t i = 1; i < n; ++i) unstable += keys[i - 1] == keys[i] && values[i - 1] >= values[i];
  return unstable;
}

/* Whether host[0, count) and values[0, count) hold the reference's first count records. */
template <typename K>
bool prefix_equal(const K *host, const uint64_t *values, const Records<K> &ref, size_t count) {
  return count == 0 || (memcmp(host, ref.keys.data(), count * sizeof(K)) == 0 &&
                        memcmp(values, ref.values.data(), count * sizeof(uint64_t)) == 0);
}

/* The device-resident path with values: loaded in pieces, the source indices (from first_index,
 * past 32 bits) made on the device, sorted stably (the output, then ordered bits kept on the
 * device), and received runs with values merged (merge rounds and the re-sort: 5 and 200 runs,
 * some empty); every copy back waited for in parts, each waited part checked, keys and values,
 * against std::stable_sort. */
template <typename K>
void check_resident_values(h5g_backend *be, size_t n, Dist dist, h5g_key_class cls, int descending) {
  const unsigned width = sizeof(K);
  const h5g_keyspec ks = {cls, width, descending};
  const uint64_t first_index = ((uint64_t)3 << 33) + 12345;
  const std::vector<K> input = typed_keys<K>(n, dist, &ks, 35);
  const std::vector<K> other = typed_keys<K>(n, dist, &ks, 36);
  std::vector<K> bits(input);
  std::vector<uint64_t> source(n);
  for (size_t i = 0; i < n; ++i) source[i] = first_index + i;
  h5g_keys_to_ordered(bits.data(), n, &ks);
  const Records<K> sorted_bits = stable_sorted(bits, source, 0, n);
  Records<K> sorted = sorted_bits;
  h5g_keys_from_ordered(sorted.keys.data(), n, &ks);
  K *host = pinned_keys<K>(be, n);
  uint64_t *values = pinned_keys<uint64_t>(be, n);

  if (n) memcpy(host, input.data(), n * width);
  if (n) memset(values, 0xa5, n * sizeof(uint64_t)); /* a value never written back shows */
  load_in_pieces(be, host, n, 3, 1);
  MUST_OK(be->sort_loaded(be, host, values, first_index, n, &ks, 1));
  size_t short_parts = 0;
  for (size_t upto = 0; upto <= n; upto += n / 5 + 1) {
    MUST_OK(be->wait_copied(be, upto));
    short_parts += !prefix_equal(host, values, sorted, upto);
  }
  MUST_OK(be->wait_copied(be, n));
  EXPECT(short_parts == 0, "resident sort with values: %zu parts waited for but not all back: "
         "%u-byte n %zu %s", short_parts, width, n, dist_name[dist]);
  EXPECT(std::vector<K>(host, host + n) == sorted.keys && unstable_pairs(host, values, n) == 0 &&
             std::vector<uint64_t>(values, values + n) == sorted.values,
         "resident sort with values, output: %u-byte class %d desc %d n %zu %s", width, cls,
         descending, n, dist_name[dist]);

  if (n) memcpy(host, input.data(), n * width);
  load_in_pieces(be, host, n, 1, 1);
  MUST_OK(be->sort_loaded(be, host, values, first_index, n, &ks, 0));
  MUST_OK(be->wait_copied(be, n));
  EXPECT(prefix_equal(host, values, sorted_bits, n),
         "resident sort with values, ordered bits: %u-byte n %zu %s", width, n, dist_name[dist]);
  if (n == 0) goto done; /* nothing was loaded: the device holds an earlier run */
  {
    h5g_device_run run;
    MUST_OK(be->run_buffers(be, &run));
    EXPECT(run.values && run.spare_values, "no device values in a run with values");
    Records<K> kept{std::vector<K>(n), std::vector<uint64_t>(n)};
    MUST_CUDA(cudaMemcpy(kept.keys.data(), run.keys, n * width, cudaMemcpyDeviceToHost));
    MUST_CUDA(cudaMemcpy(kept.values.data(), run.values, n * 8, cudaMemcpyDeviceToHost));
    EXPECT(kept.keys == sorted_bits.keys && kept.values == sorted_bits.values,
           "resident run with values kept on the device: %u-byte n %zu %s", width, n,
           dist_name[dist]);

    /* what an exchange would deliver: sorted runs of ordered bits with values, in the spare
     * buffers; the values grow with the position, so a stable merge keeps them increasing among
     * equal keys */
    for (size_t nruns : {(size_t)5, (size_t)200}) {
      std::vector<uint64_t> offsets(nruns + 1, 0);
      for (size_t r = 1; r < nruns; ++r) offsets[r] = r % 4 == 1 ? offsets[r - 1] : n * r / nruns;
      offsets[nruns] = n;
      Records<K> runs{std::vector<K>(other), std::vector<uint64_t>(n)};
      h5g_keys_to_ordered(runs.keys.data(), n, &ks);
      for (size_t i = 0; i < n; ++i) runs.values[i] = ((uint64_t)7 << 40) + i;
      for (size_t r = 0; r < nruns; ++r) {
        const Records<K> one = stable_sorted(runs.keys, runs.values, offsets[r], offsets[r + 1]);
        std::copy(one.keys.begin(), one.keys.end(), runs.keys.begin() + offsets[r]);
        std::copy(one.values.begin(), one.values.end(), runs.values.begin() + offsets[r]);
      }
      Records<K> merged = stable_sorted(runs.keys, runs.values, 0, n);
      h5g_keys_from_ordered(merged.keys.data(), n, &ks);
      MUST_CUDA(cudaMemcpy(run.spare, runs.keys.data(), n * width, cudaMemcpyHostToDevice));
      MUST_CUDA(cudaMemcpy(run.spare_values, runs.values.data(), n * 8, cudaMemcpyHostToDevice));
      /* a copy from pageable memory may return before its DMA ends, and the backend's stream
       * does not wait for the default one */
      MUST_CUDA(cudaDeviceSynchronize());
      memset(values, 0xa5, n * sizeof(uint64_t));
      MUST_OK(be->merge_received(be, host, values, n, &ks, offsets.data(), nruns));
      MUST_OK(be->wait_copied(be, n / 2));
      const bool half = prefix_equal(host, values, merged, n / 2);
      MUST_OK(be->wait_copied(be, n));
      EXPECT(half && prefix_equal(host, values, merged, n) && unstable_pairs(host, values, n) == 0,
             "resident merge of %zu received runs with values%s: %u-byte class %d n %zu %s", nruns,
             half ? "" : " (half waited for, not back)", width, cls, n, dist_name[dist]);
    }
  }
done:
  free_pinned(be, values, n);
  free_pinned(be, host, n);
}

/* The streamed merge (merge_stream) of nruns sorted runs (some empty) in chunks of merge_chunk
 * keys, with and without values, against std::stable_sort of the runs one after another; the
 * cuts come from that reference (where its first c * chunk records end in every run). The output
 * is made 0xa5 first, so a chunk never copied back shows. */
template <typename K> void check_merge_stream(h5g_backend *be, size_t n, Dist dist, size_t nruns,
                                              bool with_values) {
  const unsigned width = sizeof(K);
  const size_t chunk = be->merge_chunk(be, width, with_values);
  const size_t nchunks = n ? (n + chunk - 1) / chunk : 1;
  std::vector<uint64_t> offsets(nruns + 1, 0);
  for (size_t r = 1; r < nruns; ++r) offsets[r] = r % 3 == 1 ? offsets[r - 1] : n * r / nruns;
  offsets[nruns] = n;
  Records<K> runs{make_keys<K>(n, dist, 37), std::vector<uint64_t>(n)};
  for (size_t i = 0; i < n; ++i) runs.values[i] = i;
  for (size_t r = 0; r < nruns; ++r)
    std::sort(runs.keys.begin() + offsets[r], runs.keys.begin() + offsets[r + 1]);
  const Records<K> merged = stable_sorted(runs.keys, runs.values, 0, n);
  std::vector<uint64_t> cuts((nchunks + 1) * nruns), taken(offsets.begin(), offsets.end() - 1);
  std::copy(taken.begin(), taken.end(), cuts.begin());
  for (size_t c = 1, i = 0; c <= nchunks; ++c) {
    for (; i < n && i < c * chunk; ++i) { /* the run merged[i] came from */
      const size_t r = std::upper_bound(offsets.begin(), offsets.end(), merged.values[i]) -
                       offsets.begin() - 1;
      taken[r]++;
    }
    std::copy(taken.begin(), taken.end(), cuts.begin() + c * nruns);
  }
  K *host = pinned_keys<K>(be, n), *out = pinned_keys<K>(be, n);
  uint64_t *values = with_values ? pinned_keys<uint64_t>(be, n) : NULL;
  uint64_t *out_values = with_values ? pinned_keys<uint64_t>(be, n) : NULL;
  if (n) {
    memcpy(host, runs.keys.data(), n * width);
    memset(out, 0xa5, n * width);
    if (with_values) memcpy(values, runs.values.data(), n * sizeof(uint64_t));
    if (with_values) memset(out_values, 0xa5, n * sizeof(uint64_t));
  }
  MUST_OK(be->merge_stream(be, host, values, width, cuts.data(), nruns, nchunks, out, out_values));
  EXPECT(std::vector<K>(out, out + n) == merged.keys &&
             (!with_values || std::vector<uint64_t>(out_values, out_values + n) == merged.values),
         "streamed merge of %zu runs in %zu chunks of %zu%s: %u-byte n %zu %s", nruns, nchunks,
         chunk, with_values ? ", values" : "", width, n, dist_name[dist]);
  free_pinned(be, out_values, n);
  free_pinned(be, values, n);
  free_pinned(be, out, n);
  free_pinned(be, host, n);
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
         (unsigned long long)be->mem_budget, be->capacity(be, 4, 0));
  EXPECT(strcmp(be->name, "cuda") == 0 && be->device_name[0], "names");
  /* sizes: the edges, one tile and a little more, and many tiles (150001 keys span 14 onesweep
   * tiles of 32-bit keys, 18 of 64-bit ones); larger sizes add host reference time, not paths
   * (issue 32: the test took 304 s on an H100 with 1000003 and 3000017 here and 3000017 /
   * 9000011 below) */
  for (size_t n : {(size_t)0, (size_t)1, (size_t)2, (size_t)1000, (size_t)4097, (size_t)150001})
    for (int d = 0; d < NDIST; ++d) {
      check_sort_merge<uint8_t>(be, n, (Dist)d);
      check_sort_merge<uint16_t>(be, n, (Dist)d);
      check_sort_merge<uint32_t>(be, n, (Dist)d);
      check_sort_merge<uint64_t>(be, n, (Dist)d);
      check_sort_merge<u128>(be, n, (Dist)d);
    }
  check_transform(be);
  for (size_t n : {(size_t)0, (size_t)1, (size_t)2, (size_t)4097, (size_t)150001})
    for (int d = 0; d < NDIST; ++d) {
      check_resident<uint8_t>(be, n, (Dist)d, H5G_KEY_SIGNED, 0);
      check_resident<uint16_t>(be, n, (Dist)d, H5G_KEY_UNSIGNED, 1);
      check_resident<uint32_t>(be, n, (Dist)d, H5G_KEY_UNSIGNED, 0);
      check_resident<uint32_t>(be, n, (Dist)d, H5G_KEY_FLOAT, 0);
      check_resident<uint64_t>(be, n, (Dist)d, H5G_KEY_FLOAT, 1);
      check_resident<uint64_t>(be, n, (Dist)d, H5G_KEY_SIGNED, 0);
      check_resident<uint32_t>(be, n, (Dist)d, H5G_KEY_FLOAT, 1);
      check_resident<uint32_t>(be, n, (Dist)d, H5G_KEY_SIGNED, 1);
      check_resident<uint64_t>(be, n, (Dist)d, H5G_KEY_FLOAT, 0);
      check_resident_values<uint8_t>(be, n, (Dist)d, H5G_KEY_UNSIGNED, 0);
      check_resident_values<uint16_t>(be, n, (Dist)d, H5G_KEY_SIGNED, 1);
      check_resident_values<uint32_t>(be, n, (Dist)d, H5G_KEY_FLOAT, 0);
      check_resident_values<uint64_t>(be, n, (Dist)d, H5G_KEY_SIGNED, 0);
      check_resident_values<uint32_t>(be, n, (Dist)d, H5G_KEY_FLOAT, 1);
      check_resident_values<uint64_t>(be, n, (Dist)d, H5G_KEY_FLOAT, 0);
      check_resident<u128>(be, n, (Dist)d, H5G_KEY_SIGNED, 1);
      check_resident_values<u128>(be, n, (Dist)d, H5G_KEY_UNSIGNED, 1);
    }
  /* more keys with values than one copy-back piece holds (kernels/backend_ops.cu:
   * COPY_BACK_PIECE_BYTES, 256 MiB of keys and values): each waited part spans pieces */
  check_resident_values<uint64_t>(be, 2 * (((size_t)256 << 20) / 16) + 1001, FEW_UNIQUE,
                                  H5G_KEY_FLOAT, 1);
  EXPECT(be->h2d_seconds > 0 && be->d2h_seconds > 0 && be->kernel_seconds > 0 &&
             be->waited_seconds > 0, "resident path timed: h2d %g d2h %g kernels %g waited %g",
         be->h2d_seconds, be->d2h_seconds, be->kernel_seconds, be->waited_seconds);
  /* a run of more keys than loaded is refused, not sorted from stale memory */
  {
    const h5g_keyspec ks = {H5G_KEY_UNSIGNED, 4, 0};
    std::vector<uint32_t> keys = make_keys<uint32_t>(100, RANDOM, 5);
    std::vector<uint64_t> values(100);
    MUST_OK(be->load(be, keys.data(), 0, 100, 100, 4, 0));
    EXPECT(be->sort_loaded(be, keys.data(), NULL, 0, 101, &ks, 1) != H5G_OK,
           "sort of unloaded keys accepted");
    EXPECT(be->sort_loaded(be, keys.data(), values.data(), 0, 100, &ks, 1) != H5G_OK,
           "values of a run loaded without them accepted");
    EXPECT(be->wait_copied(be, 1) != H5G_OK, "wait for keys never copied back accepted");
    h5g_error_clear();
  }
  be->destroy(be);

  /* A 64 MB budget: capacity keys sort; one more is refused. */
  MUST_OK(h5g_backend_cuda_create(&be, 0, 64u << 20));
  EXPECT(be->merge_chunk(be, 4, 1) < be->capacity(be, 4, 1) / 2 + 1 &&
             be->merge_chunk(be, 4, 1) > be->capacity(be, 4, 1) / 3,
         "merge chunk %zu of capacity %zu", be->merge_chunk(be, 4, 1), be->capacity(be, 4, 1));
  /* the streamed merge under a budget of its own, a quarter of the 64 MB below: runs span as
   * many chunks as 3000017 and 9000011 keys did under 64 MB, for a quarter of the host work */
  {
    h5g_backend *small = NULL;
    MUST_OK(h5g_backend_cuda_create(&small, 0, 16u << 20));
    for (size_t n : {(size_t)0, (size_t)1, (size_t)750019, (size_t)2250011})
      for (int d = 0; d < NDIST; ++d)
        for (size_t nruns : {(size_t)2, (size_t)17, (size_t)300}) {
          check_merge_stream<uint32_t>(small, n, (Dist)d, nruns, d % 2);
          check_merge_stream<uint64_t>(small, n, (Dist)d, nruns, d % 2 == 0);
          /* 750019 16-byte keys already span 3 or more chunks under this budget */
          if (n <= 750019) check_merge_stream<u128>(small, n, (Dist)d, nruns, d % 2);
        }
    EXPECT(small->merge_chunk(small, 16, 0) * 3 <= 750019, "16-byte merge chunk %zu",
           small->merge_chunk(small, 16, 0));
    small->destroy(small);
  }
  for (unsigned width : {4u, 8u, 16u}) {
    const size_t cap = be->capacity(be, width, 0);
    EXPECT(cap > 0 && cap * width * 2 <= (64u << 20) && cap * width * 2 > (48u << 20),
           "capacity %zu of %u-byte keys under 64 MB", cap, width);
    if (width == 4) {
      std::vector<uint32_t> keys = make_keys<uint32_t>(cap + 1, RANDOM, 3);
      const std::vector<uint32_t> input(keys.begin(), keys.begin() + cap);
      MUST_OK(be->sort(be, keys.data(), NULL, cap, 4));
      EXPECT(check_sorted(input, std::vector<uint32_t>(keys.begin(), keys.begin() + cap)),
             "sort at capacity");
      EXPECT(be->sort(be, keys.data(), NULL, cap + 1, 4) != H5G_OK, "sort over capacity accepted");
      h5g_error_clear();
    }
  }
  be->destroy(be);
  return finish("test_gpu_backend");
}
