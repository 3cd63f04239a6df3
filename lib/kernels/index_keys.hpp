// Reading the caller's int32/int64 indices: range checks and conversion to unsigned keys.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace kernels {

// The first index outside [0, vocab), if any.
struct BadIndex {
  bool found = false;
  size_t position = 0;
  int64_t value = 0;
};

// Returns the first index of indices[0..n) (of type zfcInt32 or zfcInt64) outside
// [0, vocab).
BadIndex find_bad_index(const void* indices, zfcDataType_t type, size_t n, int64_t vocab);

// Converts indices[0..n) to keys; with `check`, stops at and returns the first index outside
// [0, vocab) (keys then partly written).
template <class K>
BadIndex load_keys(const void* indices, zfcDataType_t type, size_t n, int64_t vocab,
                   bool check, K* keys);

// Writes keys[0..n) as indices of `type`.
template <class K>
void store_keys(const K* keys, size_t n, zfcDataType_t type, void* out);

}  // namespace kernels
}  // namespace zfc
