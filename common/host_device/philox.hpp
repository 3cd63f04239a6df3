// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
// counter-based generator whose output is a pure function of a 64-bit key and a 128-bit
// counter, in integer arithmetic only, so the host and a CUDA device produce the same bits.
#pragma once

#include <cstdint>

#include "host_device/half_bits.hpp"  // ZFC_HOST_DEVICE

namespace zfc {
namespace kernels {

struct Philox4 {
  uint32_t v[4];
};

ZFC_HOST_DEVICE inline void philox_mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

ZFC_HOST_DEVICE inline Philox4 philox4x32(Philox4 ctr, uint64_t key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(kM0, ctr.v[0], &hi0, &lo0);
    philox_mulhilo(kM1, ctr.v[2], &hi1, &lo1);
    ctr = Philox4{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
    k0 += kW0;
    k1 += kW1;
  }
  return ctr;
}

// 64 random bits for (key, a, b): the first two words of one Philox block.
ZFC_HOST_DEVICE inline uint64_t philox64(uint64_t key, uint64_t a, uint64_t b) {
  const Philox4 out = philox4x32(
      Philox4{{static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32),
               static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32)}},
      key);
  return static_cast<uint64_t>(out.v[0]) | (static_cast<uint64_t>(out.v[1]) << 32);
}

// A double uniform in [0, 1) from the top 53 bits.
ZFC_HOST_DEVICE inline double philox_uniform(uint64_t key, uint64_t a, uint64_t b) {
  return static_cast<double>(philox64(key, a, b) >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace kernels
}  // namespace zfc
