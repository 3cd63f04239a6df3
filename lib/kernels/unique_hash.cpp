// The hash method: an open-addressing table finds the distinct keys in order of first
// appearance; only those U keys are radix sorted (with their first-appearance ids), and
// every input's id is renumbered to its sorted position.
#include <algorithm>

#include "kernels/radix_sort.hpp"
#include "kernels/unique_methods.hpp"

namespace zfc {
namespace kernels {
namespace hash_unique {
namespace {

// The table's largest size: a power of two at least 2n, so it is at most half full.
size_t max_capacity(size_t n) {
  size_t c = 16;
  while (c < 2 * n) c <<= 1;
  return c;
}

inline size_t slot_of(uint64_t key, int bits) {
  return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

// The key and its id side by side, so that a probe touches one cache line.
template <class K>
struct Slot {
  K key;
  uint32_t id;  // 0: empty; else first-appearance id + 1
};

template <class K>
struct Layout {
  Slot<K>* table;
  K* tmp_keys;
  uint32_t* order;
  uint32_t* tmp_order;
  uint32_t* remap;

  Layout(size_t n, void* scratch) {
    char* s = static_cast<char*>(scratch);
    table = reinterpret_cast<Slot<K>*>(s);
    s += align64(max_capacity(n) * sizeof(Slot<K>));
    tmp_keys = reinterpret_cast<K*>(s);
    s += align64(n * sizeof(K));
    order = reinterpret_cast<uint32_t*>(s);
    tmp_order = reinterpret_cast<uint32_t*>(s + align64(n * sizeof(uint32_t)));
    remap = reinterpret_cast<uint32_t*>(s + 2 * align64(n * sizeof(uint32_t)));
  }
};

template <class K>
void insert(Slot<K>* table, int bits, K key, uint32_t id) {
  const size_t mask = (size_t{1} << bits) - 1;
  size_t h = slot_of(key, bits);
  while (table[h].id != 0) h = (h + 1) & mask;
  table[h].key = key;
  table[h].id = id;
}

// Distinct keys in order of first appearance into `first`, and (if local_id != nullptr)
// each input's index among them. Returns their number. The table starts small and doubles
// when half full, so that for Zipfian input (U << n) it stays in cache.
template <class K>
size_t distinct(const K* keys, size_t n, Slot<K>* table, K* first, uint32_t* local_id) {
  constexpr size_t kStartSlots = 4096;
  const size_t limit = max_capacity(n);
  size_t capacity = std::min(limit, kStartSlots);
  int bits = __builtin_ctzll(capacity);
  size_t mask = capacity - 1;
  for (size_t c = 0; c < capacity; ++c) table[c].id = 0;
  uint32_t u = 0;
  for (size_t i = 0; i < n; ++i) {
    const K k = keys[i];
    size_t h = slot_of(k, bits);
    uint32_t id;
    for (;;) {
      id = table[h].id;
      if (id == 0) {
        table[h].key = k;
        table[h].id = id = ++u;
        first[u - 1] = k;
        break;
      }
      if (table[h].key == k) break;
      h = (h + 1) & mask;
    }
    if (local_id != nullptr) local_id[i] = id - 1;
    if (2 * static_cast<size_t>(u) > capacity && capacity < limit) {
      capacity *= 2;
      ++bits;
      mask = capacity - 1;
      for (size_t c = 0; c < capacity; ++c) table[c].id = 0;
      for (uint32_t j = 0; j < u; ++j) insert(table, bits, first[j], j + 1);
    }
  }
  return u;
}

}  // namespace

template <class K>
size_t scratch_bytes(size_t n, bool with_inverse) {
  return align64(max_capacity(n) * sizeof(Slot<K>)) + align64(n * sizeof(K)) +
         (with_inverse ? 3 * align64(n * sizeof(uint32_t)) : 0);
}

template <class K>
size_t with_inverse(const K* keys, size_t n, uint64_t key_bound, K* uniq, int32_t* inverse,
                    void* scratch) {
  Layout<K> l(n, scratch);
  uint32_t* local = reinterpret_cast<uint32_t*>(inverse);
  const size_t u = distinct(keys, n, l.table, uniq, local);
  for (size_t j = 0; j < u; ++j) l.order[j] = static_cast<uint32_t>(j);
  radix_sort(uniq, l.order, u, key_bits_for_bound(key_bound), l.tmp_keys, l.tmp_order);
  for (size_t j = 0; j < u; ++j) l.remap[l.order[j]] = static_cast<uint32_t>(j);
  for (size_t i = 0; i < n; ++i) inverse[i] = static_cast<int32_t>(l.remap[local[i]]);
  return u;
}

template <class K>
size_t sorted(const K* keys, size_t n, uint64_t key_bound, K* uniq, void* scratch) {
  Layout<K> l(n, scratch);
  const size_t u = distinct<K>(keys, n, l.table, uniq, nullptr);
  radix_sort<K>(uniq, nullptr, u, key_bits_for_bound(key_bound), l.tmp_keys, nullptr);
  return u;
}

#define ZFC_INSTANTIATE_HASH_UNIQUE(K)                                                \
  template size_t scratch_bytes<K>(size_t, bool);                                     \
  template size_t with_inverse<K>(const K*, size_t, uint64_t, K*, int32_t*, void*);   \
  template size_t sorted<K>(const K*, size_t, uint64_t, K*, void*);
ZFC_INSTANTIATE_HASH_UNIQUE(uint32_t)
ZFC_INSTANTIATE_HASH_UNIQUE(uint64_t)
#undef ZFC_INSTANTIATE_HASH_UNIQUE

}  // namespace hash_unique
}  // namespace kernels
}  // namespace zfc
