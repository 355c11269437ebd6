/* kernels/key_map.cuh's map (the transform the sort and merge kernels fuse) against base/keys.c
 * (h5g_keys_to_ordered, h5g_keys_from_ordered), on the host: no GPU needed. Every float32 bit
 * pattern ascending and descending, NaNs at numpy's place, first and last (--na-position); 2^22
 * random patterns and the special keys (typed_keys.hpp) of every other class, width, direction
 * and NaN place. forward must give base/keys.c's ordered bits and inverse must give every raw
 * pattern back. */
#include "kernels/key_map.cuh"
#include "tests/support/check.h"
#include "tests/support/typed_keys.hpp"

/* keys through the map and through base/keys.c (into `ordered`); returns the keys that differ. */
template <typename K>
size_t mismatches(const std::vector<K> &keys, const h5g_keyspec *ks, const h5g::KeyMap<K> &map,
                  std::vector<K> &ordered) {
  ordered = keys;
  h5g_keys_to_ordered(ordered.data(), ordered.size(), ks);
  size_t wrong = 0;
  for (size_t i = 0; i < keys.size(); ++i)
    wrong += map.forward(keys[i]) != ordered[i] || map.inverse(ordered[i]) != keys[i];
  return wrong;
}

template <typename K> void check_sampled(const h5g_keyspec *ks) {
  const h5g::KeyMap<K> map = h5g::key_map<K>(*ks);
  std::vector<K> keys = make_keys<K>((size_t)1 << 22, RANDOM, 7 + ks->cls);
  const std::vector<K> special = special_keys<K>(ks);
  keys.insert(keys.end(), special.begin(), special.end());
  std::vector<K> ordered;
  const size_t wrong = mismatches(keys, ks, map, ordered);
  EXPECT(wrong == 0, "class %d %u-byte desc %d na %d: %zu of %zu keys differ from base/keys.c",
         ks->cls, ks->width, ks->descending, ks->na, wrong, keys.size());
  EXPECT(map.identity() == (ks->cls == H5G_KEY_UNSIGNED && !ks->descending),
         "class %d %u-byte desc %d: identity %d", ks->cls, ks->width, ks->descending,
         (int)map.identity());
}

/* Every float32 bit pattern, in blocks. */
static void check_all_float32(int descending, h5g_na_position na) {
  const h5g_keyspec ks = {H5G_KEY_FLOAT, 4, descending, na};
  const h5g::KeyMap<uint32_t> map = h5g::key_map<uint32_t>(ks);
  const size_t block = (size_t)1 << 24;
  std::vector<uint32_t> keys(block), ordered(block);
  size_t wrong = 0;
  for (uint64_t first = 0; first < ((uint64_t)1 << 32); first += block) {
    for (size_t i = 0; i < block; ++i) keys[i] = (uint32_t)(first + i);
    wrong += mismatches(keys, &ks, map, ordered);
  }
  EXPECT(wrong == 0, "float32 desc %d na %d: %zu of 2^32 patterns differ from base/keys.c",
         descending, na, wrong);
}

int main(void) {
  for (int descending = 0; descending < 2; ++descending)
    for (h5g_na_position na : {H5G_NA_DEFAULT, H5G_NA_FIRST, H5G_NA_LAST}) {
      check_all_float32(descending, na);
      for (h5g_key_class cls : {H5G_KEY_UNSIGNED, H5G_KEY_SIGNED, H5G_KEY_FLOAT})
        for (unsigned width : {1u, 2u, 4u, 8u, 16u}) {
          const h5g_keyspec ks = {cls, width, descending, na};
          if (cls == H5G_KEY_FLOAT && width != 4 && width != 8) continue;
          switch (width) {
          case 1: check_sampled<uint8_t>(&ks); break;
          case 2: check_sampled<uint16_t>(&ks); break;
          case 4: check_sampled<uint32_t>(&ks); break;
          case 8: check_sampled<uint64_t>(&ks); break;
          default: check_sampled<u128>(&ks); break;
          }
        }
    }
  return test_summary("test_key_map");
}
