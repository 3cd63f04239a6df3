// Sorted distinct keys, the position of each input among them, and the position of one
// sorted set inside another. Keys are unsigned and below a known bound (the vocabulary).
//
// Two methods, chosen by unique_uses_bitmap(): when the key range is small next to n, a
// bitmap of the range is marked and read back in order (O(n + bound/64), no sort), and a
// key's position is a popcount of the bits below it; otherwise an LSD radix sort limited to
// the key bits. Scratch memory is supplied by the caller (see unique_scratch_bytes), in the
// manner of CUB's temp-storage queries.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zfc {
namespace kernels {

bool unique_uses_bitmap(size_t n, uint64_t key_bound);

// Scratch bytes for unique_with_inverse (with_inverse) or sorted_unique.
template <class K>
size_t unique_scratch_bytes(size_t n, uint64_t key_bound, bool with_inverse);

// Writes the sorted distinct keys of keys[0..n) to uniq (room for n) and, for every i, the
// position of keys[i] among them to inverse[i]. Returns the number of distinct keys.
// Every key must be < key_bound.
template <class K>
size_t unique_with_inverse(const K* keys, size_t n, uint64_t key_bound, K* uniq,
                           int32_t* inverse, void* scratch);

// Writes the sorted distinct keys of keys[0..n) to uniq (room for n); returns their number.
template <class K>
size_t sorted_unique(const K* keys, size_t n, uint64_t key_bound, K* uniq, void* scratch);

// For sorted distinct `sub`, every element of which occurs in sorted distinct `full`,
// writes the index in `full` of each sub[i] to pos[i]. O(n_sub + n_full) by a merge walk,
// or O(n_sub log n_full) by binary search when sub is much smaller.
template <class K>
void locate_sorted(const K* sub, size_t n_sub, const K* full, size_t n_full, int32_t* pos);

}  // namespace kernels
}  // namespace zfc
