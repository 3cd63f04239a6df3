// The three methods behind unique.hpp, each with its own scratch layout. Internal to the
// kernels.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zfc {
namespace kernels {

inline size_t align64(size_t bytes) { return (bytes + 63) & ~size_t{63}; }

namespace bitmap_unique {
size_t scratch_bytes(size_t n, uint64_t key_bound, bool with_inverse);
template <class K>
size_t with_inverse(const K* keys, size_t n, uint64_t key_bound, K* uniq, int32_t* inverse,
                    void* scratch);
template <class K>
size_t sorted(const K* keys, size_t n, uint64_t key_bound, K* uniq, void* scratch);
}  // namespace bitmap_unique

namespace hash_unique {
template <class K>
size_t scratch_bytes(size_t n, bool with_inverse);
template <class K>
size_t with_inverse(const K* keys, size_t n, uint64_t key_bound, K* uniq, int32_t* inverse,
                    void* scratch);
template <class K>
size_t sorted(const K* keys, size_t n, uint64_t key_bound, K* uniq, void* scratch);
}  // namespace hash_unique

namespace sort_unique {
template <class K>
size_t scratch_bytes(size_t n, bool with_inverse);
template <class K>
size_t with_inverse(const K* keys, size_t n, uint64_t key_bound, K* uniq, int32_t* inverse,
                    void* scratch);
template <class K>
size_t sorted(const K* keys, size_t n, uint64_t key_bound, K* uniq, void* scratch);
}  // namespace sort_unique

}  // namespace kernels
}  // namespace zfc
