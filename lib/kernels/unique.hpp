// Sorted distinct keys, the position of each input among them, and the position of one
// sorted set inside another. Keys are unsigned and below a known bound (the vocabulary).
//
// Three methods give the same output:
// - bitmap: mark a bitmap of the key range and read it back in order; a key's position is
//   a popcount of the bits below it. O(n + bound/64), no sort: the choice when the range is
//   small next to n (a 100k-word vocabulary is 1563 words of bits).
// - hash: an open-addressing table finds the distinct keys, and only those are radix
//   sorted. O(n + U): the choice for large ranges, since Zipfian input has U << n.
// - sort: an LSD radix sort of all n keys limited to the key bits. Kept as the reference
//   and for inputs with almost no repetition.
// unique_method() picks one from n and the bound (thresholds measured with zfc_kernel_bench).
// Scratch memory is supplied by the caller (see unique_scratch_bytes), in the manner of
// CUB's temp-storage queries.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zfc {
namespace kernels {

enum class UniqueMethod { kBitmap, kHash, kSort };

UniqueMethod unique_method(size_t n, uint64_t key_bound);
const char* unique_method_name(UniqueMethod m);

inline bool unique_uses_bitmap(size_t n, uint64_t key_bound) {
  return unique_method(n, key_bound) == UniqueMethod::kBitmap;
}

// Scratch bytes for unique_with_inverse (with_inverse) or sorted_unique with method m.
template <class K>
size_t unique_scratch_bytes_for(UniqueMethod m, size_t n, uint64_t key_bound,
                                bool with_inverse);
template <class K>
size_t unique_scratch_bytes(size_t n, uint64_t key_bound, bool with_inverse) {
  return unique_scratch_bytes_for<K>(unique_method(n, key_bound), n, key_bound, with_inverse);
}

// Writes the sorted distinct keys of keys[0..n) to uniq (room for n) and, for every i, the
// position of keys[i] among them to inverse[i]. Returns the number of distinct keys.
// Every key must be < key_bound.
template <class K>
size_t unique_with_inverse_using(UniqueMethod m, const K* keys, size_t n, uint64_t key_bound,
                                 K* uniq, int32_t* inverse, void* scratch);
template <class K>
size_t unique_with_inverse(const K* keys, size_t n, uint64_t key_bound, K* uniq,
                           int32_t* inverse, void* scratch) {
  return unique_with_inverse_using(unique_method(n, key_bound), keys, n, key_bound, uniq,
                                   inverse, scratch);
}

// Writes the sorted distinct keys of keys[0..n) to uniq (room for n); returns their number.
template <class K>
size_t sorted_unique_using(UniqueMethod m, const K* keys, size_t n, uint64_t key_bound,
                           K* uniq, void* scratch);
template <class K>
size_t sorted_unique(const K* keys, size_t n, uint64_t key_bound, K* uniq, void* scratch) {
  return sorted_unique_using(unique_method(n, key_bound), keys, n, key_bound, uniq, scratch);
}

// For sorted distinct `sub`, every element of which occurs in sorted distinct `full`,
// writes the index in `full` of each sub[i] to pos[i]. O(n_sub + n_full) by a merge walk,
// or O(n_sub log n_full) by binary search when sub is much smaller.
template <class K>
void locate_sorted(const K* sub, size_t n_sub, const K* full, size_t n_full, int32_t* pos);

}  // namespace kernels
}  // namespace zfc
