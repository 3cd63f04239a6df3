// LSD radix sort of unsigned keys, limited to the bits the keys can have (a vocabulary of
// 100k words needs 17 bits: two passes instead of four), with an optional uint32 payload.
// Stable, O(n) per pass; a pass whose digit is the same for every key is skipped.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zfc {
namespace kernels {

// Number of bits needed to represent every key below `key_bound` (at least 1).
int key_bits_for_bound(uint64_t key_bound);

// Sorts keys[0..n) (and vals alongside, if vals != nullptr) considering the low `key_bits`
// bits. tmp_keys (and tmp_vals) must hold n elements. The result is left in keys/vals.
template <class K>
void radix_sort(K* keys, uint32_t* vals, size_t n, int key_bits, K* tmp_keys,
                uint32_t* tmp_vals);

}  // namespace kernels
}  // namespace zfc
