// A grid-stride loop that keeps several loads in flight per thread, written once for the
// device's casts (cuda/cast.cu) and for a host test of which elements it visits.
#pragma once

#include <cstddef>

#include "host_device/half_bits.hpp"  // ZFC_HOST_DEVICE

namespace zfc {
namespace cuda {

// store(j, load(j)) for every j = first + k * stride below n: kRounds of them at a time, all
// kRounds loads issued before the first store, then the last few one by one. A thread that
// waited for each load before the next kept one load in flight.
template <int kRounds, class Load, class Store>
ZFC_HOST_DEVICE inline void strided_in_rounds(size_t first, size_t stride, size_t n, Load load,
                                              Store store) {
  size_t i = first;
  for (; i + (kRounds - 1) * stride < n; i += kRounds * stride) {
    decltype(load(i)) v[kRounds];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int u = 0; u < kRounds; ++u) v[u] = load(i + u * stride);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int u = 0; u < kRounds; ++u) store(i + u * stride, v[u]);
  }
  for (; i < n; i += stride) store(i, load(i));
}

}  // namespace cuda
}  // namespace zfc
