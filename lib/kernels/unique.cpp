#include "kernels/unique.hpp"

#include <algorithm>

#include "kernels/unique_methods.hpp"

namespace zfc {
namespace kernels {

UniqueMethod unique_method(size_t n, uint64_t key_bound) {
  // A bitmap word costs about what a quarter of a key costs to hash (zeroing, scanning and
  // ranking it against one probe); see docs/benchmarks for the measurements behind this.
  const uint64_t words = key_bound / 64 + (key_bound % 64 != 0);
  if (words <= 4 * static_cast<uint64_t>(n) + 2048) return UniqueMethod::kBitmap;
  return UniqueMethod::kHash;
}

const char* unique_method_name(UniqueMethod m) {
  switch (m) {
    case UniqueMethod::kBitmap: return "bitmap";
    case UniqueMethod::kHash: return "hash";
    case UniqueMethod::kSort: return "sort";
  }
  return "unknown";
}

template <class K>
size_t unique_scratch_bytes_for(UniqueMethod m, size_t n, uint64_t key_bound,
                                bool with_inverse) {
  switch (m) {
    case UniqueMethod::kBitmap: return bitmap_unique::scratch_bytes(n, key_bound, with_inverse);
    case UniqueMethod::kHash: return hash_unique::scratch_bytes<K>(n, with_inverse);
    case UniqueMethod::kSort: return sort_unique::scratch_bytes<K>(n, with_inverse);
  }
  return 0;
}

template <class K>
size_t unique_with_inverse_using(UniqueMethod m, const K* keys, size_t n, uint64_t key_bound,
                                 K* uniq, int32_t* inverse, void* scratch) {
  if (n == 0) return 0;
  switch (m) {
    case UniqueMethod::kBitmap:
      return bitmap_unique::with_inverse(keys, n, key_bound, uniq, inverse, scratch);
    case UniqueMethod::kHash:
      return hash_unique::with_inverse(keys, n, key_bound, uniq, inverse, scratch);
    case UniqueMethod::kSort:
      return sort_unique::with_inverse(keys, n, key_bound, uniq, inverse, scratch);
  }
  return 0;
}

template <class K>
size_t sorted_unique_using(UniqueMethod m, const K* keys, size_t n, uint64_t key_bound,
                           K* uniq, void* scratch) {
  if (n == 0) return 0;
  switch (m) {
    case UniqueMethod::kBitmap: return bitmap_unique::sorted(keys, n, key_bound, uniq, scratch);
    case UniqueMethod::kHash: return hash_unique::sorted(keys, n, key_bound, uniq, scratch);
    case UniqueMethod::kSort: return sort_unique::sorted(keys, n, key_bound, uniq, scratch);
  }
  return 0;
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
  template size_t unique_scratch_bytes_for<K>(UniqueMethod, size_t, uint64_t, bool);       \
  template size_t unique_with_inverse_using<K>(UniqueMethod, const K*, size_t, uint64_t,   \
                                               K*, int32_t*, void*);                       \
  template size_t sorted_unique_using<K>(UniqueMethod, const K*, size_t, uint64_t, K*,     \
                                         void*);                                           \
  template void locate_sorted<K>(const K*, size_t, const K*, size_t, int32_t*);
ZFC_INSTANTIATE_UNIQUE(uint32_t)
ZFC_INSTANTIATE_UNIQUE(uint64_t)
#undef ZFC_INSTANTIATE_UNIQUE

}  // namespace kernels
}  // namespace zfc
