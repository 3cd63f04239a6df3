#include "kernels/unique.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/radix_sort.hpp"

namespace zfc {
namespace kernels {
namespace {

uint64_t bitmap_words(uint64_t key_bound) { return key_bound / 64 + (key_bound % 64 != 0); }

inline size_t align64(size_t bytes) { return (bytes + 63) & ~size_t{63}; }

// Marks every key; returns the bitmap (words zeroed first).
template <class K>
uint64_t* mark_bitmap(const K* keys, size_t n, size_t words, void* scratch) {
  uint64_t* bits = static_cast<uint64_t*>(scratch);
  std::memset(bits, 0, words * sizeof(uint64_t));
  for (size_t i = 0; i < n; ++i) bits[keys[i] >> 6] |= uint64_t{1} << (keys[i] & 63);
  return bits;
}

template <class K>
size_t read_bitmap(const uint64_t* bits, size_t words, K* uniq) {
  size_t u = 0;
  for (size_t w = 0; w < words; ++w) {
    uint64_t b = bits[w];
    while (b != 0) {
      uniq[u++] = static_cast<K>(w * 64 + static_cast<size_t>(__builtin_ctzll(b)));
      b &= b - 1;
    }
  }
  return u;
}

}  // namespace

bool unique_uses_bitmap(size_t n, uint64_t key_bound) {
  return bitmap_words(key_bound) <= 2 * n + 2048;
}

template <class K>
size_t unique_scratch_bytes(size_t n, uint64_t key_bound, bool with_inverse) {
  if (unique_uses_bitmap(n, key_bound)) {
    const size_t words = bitmap_words(key_bound);
    return align64(words * sizeof(uint64_t)) + (with_inverse ? words * sizeof(uint32_t) : 0);
  }
  size_t bytes = 2 * align64(n * sizeof(K));
  if (with_inverse) bytes += 2 * align64(n * sizeof(uint32_t));
  return bytes;
}

template <class K>
size_t unique_with_inverse(const K* keys, size_t n, uint64_t key_bound, K* uniq,
                           int32_t* inverse, void* scratch) {
  if (n == 0) return 0;
  if (unique_uses_bitmap(n, key_bound)) {
    const size_t words = bitmap_words(key_bound);
    const uint64_t* bits = mark_bitmap(keys, n, words, scratch);
    uint32_t* rank = reinterpret_cast<uint32_t*>(static_cast<char*>(scratch) +
                                                 align64(words * sizeof(uint64_t)));
    uint32_t run = 0;
    for (size_t w = 0; w < words; ++w) {
      rank[w] = run;
      run += static_cast<uint32_t>(__builtin_popcountll(bits[w]));
    }
    for (size_t i = 0; i < n; ++i) {
      const uint64_t below = (uint64_t{1} << (keys[i] & 63)) - 1;
      inverse[i] = static_cast<int32_t>(rank[keys[i] >> 6] +
                                        static_cast<uint32_t>(__builtin_popcountll(bits[keys[i] >> 6] & below)));
    }
    return read_bitmap(bits, words, uniq);
  }
  char* s = static_cast<char*>(scratch);
  K* sorted = reinterpret_cast<K*>(s);
  K* tmp = reinterpret_cast<K*>(s + align64(n * sizeof(K)));
  uint32_t* order = reinterpret_cast<uint32_t*>(s + 2 * align64(n * sizeof(K)));
  uint32_t* tmp_order = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(order) +
                                                    align64(n * sizeof(uint32_t)));
  std::memcpy(sorted, keys, n * sizeof(K));
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  radix_sort(sorted, order, n, key_bits_for_bound(key_bound), tmp, tmp_order);
  size_t u = 0;
  for (size_t j = 0; j < n; ++j) {
    if (j == 0 || sorted[j] != sorted[j - 1]) uniq[u++] = sorted[j];
    inverse[order[j]] = static_cast<int32_t>(u - 1);
  }
  return u;
}

template <class K>
size_t sorted_unique(const K* keys, size_t n, uint64_t key_bound, K* uniq, void* scratch) {
  if (n == 0) return 0;
  if (unique_uses_bitmap(n, key_bound)) {
    const size_t words = bitmap_words(key_bound);
    return read_bitmap(mark_bitmap(keys, n, words, scratch), words, uniq);
  }
  char* s = static_cast<char*>(scratch);
  K* sorted = reinterpret_cast<K*>(s);
  K* tmp = reinterpret_cast<K*>(s + align64(n * sizeof(K)));
  std::memcpy(sorted, keys, n * sizeof(K));
  radix_sort<K>(sorted, nullptr, n, key_bits_for_bound(key_bound), tmp, nullptr);
  size_t u = 0;
  for (size_t j = 0; j < n; ++j) {
    if (j == 0 || sorted[j] != sorted[j - 1]) uniq[u++] = sorted[j];
  }
  return u;
}

template <class K>
void locate_sorted(const K* sub, size_t n_sub, const K* full, size_t n_full, int32_t* pos) {
  if (n_sub * 16 < n_full) {
    for (size_t i = 0; i < n_sub; ++i) {
      pos[i] = static_cast<int32_t>(std::lower_bound(full, full + n_full, sub[i]) - full);
    }
    return;
  }
  size_t j = 0;
  for (size_t i = 0; i < n_sub; ++i) {
    while (full[j] < sub[i]) ++j;
    pos[i] = static_cast<int32_t>(j);
  }
}

#define ZFC_INSTANTIATE_UNIQUE(K)                                                          \
  template size_t unique_scratch_bytes<K>(size_t, uint64_t, bool);                         \
  template size_t unique_with_inverse<K>(const K*, size_t, uint64_t, K*, int32_t*, void*); \
  template size_t sorted_unique<K>(const K*, size_t, uint64_t, K*, void*);                 \
  template void locate_sorted<K>(const K*, size_t, const K*, size_t, int32_t*);
ZFC_INSTANTIATE_UNIQUE(uint32_t)
ZFC_INSTANTIATE_UNIQUE(uint64_t)
#undef ZFC_INSTANTIATE_UNIQUE

}  // namespace kernels
}  // namespace zfc
