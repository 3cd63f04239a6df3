// Scalar conversions between fp32 and the 16-bit wire formats, the same code on the host
// and on a CUDA device, so that both produce the same bits. fp16 follows IEEE 754 binary16
// with round-to-nearest-even; bf16 is the top half of an fp32, also rounded to nearest even,
// and a NaN stays a quiet NaN. Both require the default FP environment (no flush-to-zero).
// It lives in common/host_device, which both lib/ and cuda/ include.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define ZFC_HOST_DEVICE __host__ __device__
#else
#define ZFC_HOST_DEVICE
#endif

namespace zfc {
namespace kernels {

ZFC_HOST_DEVICE inline uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
ZFC_HOST_DEVICE inline float f32_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

ZFC_HOST_DEVICE inline uint16_t f32_to_f16(float f) {
  constexpr uint32_t kF32Inf = 255u << 23;
  constexpr uint32_t kF16Limit = (127u + 16u) << 23;  // 2^16: everything above is inf/NaN
  constexpr uint32_t kDenormMagic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  uint32_t u = f32_bits(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t out;
  if (u >= kF16Limit) {
    out = u > kF32Inf ? 0x7e00u : 0x7c00u;
  } else if (u < (113u << 23)) {
    // Result is subnormal or zero: let the FPU round by adding a magic number whose
    // exponent places the half's last mantissa bit at the float's last bit.
    out = f32_bits(f32_from_bits(u) + f32_from_bits(kDenormMagic)) - kDenormMagic;
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu;  // rebias and round half up...
    u += mant_odd;                                           // ...to even
    out = u >> 13;
  }
  return static_cast<uint16_t>(out | (sign >> 16));
}

ZFC_HOST_DEVICE inline float f16_to_f32(uint16_t h) {
  constexpr uint32_t kShiftedExp = 0x7c00u << 13;
  uint32_t o = (static_cast<uint32_t>(h) & 0x7fffu) << 13;
  const uint32_t exp = kShiftedExp & o;
  o += (127u - 15u) << 23;
  if (exp == kShiftedExp) {
    o += (128u - 16u) << 23;  // inf or NaN
  } else if (exp == 0) {
    o += 1u << 23;  // subnormal: renormalise through the FPU
    o = f32_bits(f32_from_bits(o) - f32_from_bits(113u << 23));
  }
  o |= (static_cast<uint32_t>(h) & 0x8000u) << 16;
  return f32_from_bits(o);
}

ZFC_HOST_DEVICE inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((u >> 16) | 0x40u);  // a quiet NaN
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

ZFC_HOST_DEVICE inline float bf16_to_f32(uint16_t h) {
  return f32_from_bits(static_cast<uint32_t>(h) << 16);
}

}  // namespace kernels
}  // namespace zfc
