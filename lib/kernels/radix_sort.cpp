#include "kernels/radix_sort.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace zfc {
namespace kernels {

int key_bits_for_bound(uint64_t key_bound) {
  int bits = 1;
  const uint64_t max_key = key_bound > 0 ? key_bound - 1 : 0;
  while (bits < 64 && (max_key >> bits) != 0) ++bits;
  return bits;
}

template <class K>
void radix_sort(K* keys, uint32_t* vals, size_t n, int key_bits, K* tmp_keys,
                uint32_t* tmp_vals) {
  if (n < 2) return;
  constexpr int kMaxDigitBits = 11;
  const int passes = (key_bits + kMaxDigitBits - 1) / kMaxDigitBits;
  const int digit_bits = (key_bits + passes - 1) / passes;
  const size_t buckets = size_t{1} << digit_bits;
  const K mask = static_cast<K>(buckets - 1);
  std::vector<size_t> count(buckets);

  K* src_k = keys;
  K* dst_k = tmp_keys;
  uint32_t* src_v = vals;
  uint32_t* dst_v = tmp_vals;
  for (int p = 0; p < passes; ++p) {
    const int shift = p * digit_bits;
    std::fill(count.begin(), count.end(), 0);
    for (size_t i = 0; i < n; ++i) ++count[(src_k[i] >> shift) & mask];
    // A digit shared by every key leaves the order unchanged.
    if (count[(src_k[0] >> shift) & mask] == n) continue;
    size_t sum = 0;
    for (size_t b = 0; b < buckets; ++b) {
      const size_t c = count[b];
      count[b] = sum;
      sum += c;
    }
    if (src_v != nullptr) {
      for (size_t i = 0; i < n; ++i) {
        const size_t d = count[(src_k[i] >> shift) & mask]++;
        dst_k[d] = src_k[i];
        dst_v[d] = src_v[i];
      }
      std::swap(src_v, dst_v);
    } else {
      for (size_t i = 0; i < n; ++i) dst_k[count[(src_k[i] >> shift) & mask]++] = src_k[i];
    }
    std::swap(src_k, dst_k);
  }
  if (src_k != keys) {
    std::memcpy(keys, src_k, n * sizeof(K));
    if (vals != nullptr) std::memcpy(vals, src_v, n * sizeof(uint32_t));
  }
}

template void radix_sort<uint32_t>(uint32_t*, uint32_t*, size_t, int, uint32_t*, uint32_t*);
template void radix_sort<uint64_t>(uint64_t*, uint32_t*, size_t, int, uint64_t*, uint32_t*);

}  // namespace kernels
}  // namespace zfc
