// The sort method: radix sort every key (with its input position), then one pass writes
// the distinct keys and every input's position among them.
#include <cstring>

#include "kernels/radix_sort.hpp"
#include "kernels/unique_methods.hpp"

namespace zfc {
namespace kernels {
namespace sort_unique {

template <class K>
size_t scratch_bytes(size_t n, bool with_inverse) {
  return 2 * align64(n * sizeof(K)) + (with_inverse ? 2 * align64(n * sizeof(uint32_t)) : 0);
}

template <class K>
size_t with_inverse(const K* keys, size_t n, uint64_t key_bound, K* uniq, int32_t* inverse,
                    void* scratch) {
  char* s = static_cast<char*>(scratch);
  K* sorted_keys = reinterpret_cast<K*>(s);
  K* tmp = reinterpret_cast<K*>(s + align64(n * sizeof(K)));
  uint32_t* order = reinterpret_cast<uint32_t*>(s + 2 * align64(n * sizeof(K)));
  uint32_t* tmp_order =
      reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(order) + align64(n * sizeof(uint32_t)));
  std::memcpy(sorted_keys, keys, n * sizeof(K));
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  radix_sort(sorted_keys, order, n, key_bits_for_bound(key_bound), tmp, tmp_order);
  size_t u = 0;
  for (size_t j = 0; j < n; ++j) {
    if (j == 0 || sorted_keys[j] != sorted_keys[j - 1]) uniq[u++] = sorted_keys[j];
    inverse[order[j]] = static_cast<int32_t>(u - 1);
  }
  return u;
}

template <class K>
size_t sorted(const K* keys, size_t n, uint64_t key_bound, K* uniq, void* scratch) {
  char* s = static_cast<char*>(scratch);
  K* sorted_keys = reinterpret_cast<K*>(s);
  K* tmp = reinterpret_cast<K*>(s + align64(n * sizeof(K)));
  std::memcpy(sorted_keys, keys, n * sizeof(K));
  radix_sort<K>(sorted_keys, nullptr, n, key_bits_for_bound(key_bound), tmp, nullptr);
  size_t u = 0;
  for (size_t j = 0; j < n; ++j) {
    if (j == 0 || sorted_keys[j] != sorted_keys[j - 1]) uniq[u++] = sorted_keys[j];
  }
  return u;
}

#define ZFC_INSTANTIATE_SORT_UNIQUE(K)                                                \
  template size_t scratch_bytes<K>(size_t, bool);                                     \
  template size_t with_inverse<K>(const K*, size_t, uint64_t, K*, int32_t*, void*);   \
  template size_t sorted<K>(const K*, size_t, uint64_t, K*, void*);
ZFC_INSTANTIATE_SORT_UNIQUE(uint32_t)
ZFC_INSTANTIATE_SORT_UNIQUE(uint64_t)
#undef ZFC_INSTANTIATE_SORT_UNIQUE

}  // namespace sort_unique
}  // namespace kernels
}  // namespace zfc
