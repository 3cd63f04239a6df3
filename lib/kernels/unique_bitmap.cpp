// The bitmap method: mark every key's bit, read the set bits back in order.
#include <cstring>

#include "kernels/unique_methods.hpp"

namespace zfc {
namespace kernels {
namespace bitmap_unique {
namespace {

size_t bitmap_words(uint64_t key_bound) {
  return static_cast<size_t>(key_bound / 64 + (key_bound % 64 != 0));
}

template <class K>
uint64_t* mark(const K* keys, size_t n, size_t words, void* scratch) {
  uint64_t* bits = static_cast<uint64_t*>(scratch);
  std::memset(bits, 0, words * sizeof(uint64_t));
  for (size_t i = 0; i < n; ++i) bits[keys[i] >> 6] |= uint64_t{1} << (keys[i] & 63);
  return bits;
}

// Writes the set bits' keys in order; with `rank`, also each word's first position.
template <class K>
size_t read(const uint64_t* bits, size_t words, K* uniq, uint32_t* rank) {
  size_t u = 0;
  for (size_t w = 0; w < words; ++w) {
    if (rank != nullptr) rank[w] = static_cast<uint32_t>(u);
    for (uint64_t b = bits[w]; b != 0; b &= b - 1) {
      uniq[u++] = static_cast<K>(w * 64 + static_cast<size_t>(__builtin_ctzll(b)));
    }
  }
  return u;
}

}  // namespace

size_t scratch_bytes(size_t n, uint64_t key_bound, bool with_inverse) {
  const size_t words = bitmap_words(key_bound);
  return align64(words * sizeof(uint64_t)) + (with_inverse ? words * sizeof(uint32_t) : 0);
}

template <class K>
size_t with_inverse(const K* keys, size_t n, uint64_t key_bound, K* uniq, int32_t* inverse,
                    void* scratch) {
  const size_t words = bitmap_words(key_bound);
  const uint64_t* bits = mark(keys, n, words, scratch);
  uint32_t* rank = reinterpret_cast<uint32_t*>(static_cast<char*>(scratch) +
                                               align64(words * sizeof(uint64_t)));
  const size_t u = read(bits, words, uniq, rank);
  for (size_t i = 0; i < n; ++i) {
    const size_t w = static_cast<size_t>(keys[i] >> 6);
    const uint64_t below = (uint64_t{1} << (keys[i] & 63)) - 1;
    inverse[i] = static_cast<int32_t>(
        rank[w] + static_cast<uint32_t>(__builtin_popcountll(bits[w] & below)));
  }
  return u;
}

template <class K>
size_t sorted(const K* keys, size_t n, uint64_t key_bound, K* uniq, void* scratch) {
  const size_t words = bitmap_words(key_bound);
  return read(mark(keys, n, words, scratch), words, uniq, static_cast<uint32_t*>(nullptr));
}

template size_t with_inverse<uint32_t>(const uint32_t*, size_t, uint64_t, uint32_t*, int32_t*,
                                       void*);
template size_t with_inverse<uint64_t>(const uint64_t*, size_t, uint64_t, uint64_t*, int32_t*,
                                       void*);
template size_t sorted<uint32_t>(const uint32_t*, size_t, uint64_t, uint32_t*, void*);
template size_t sorted<uint64_t>(const uint64_t*, size_t, uint64_t, uint64_t*, void*);

}  // namespace bitmap_unique
}  // namespace kernels
}  // namespace zfc
