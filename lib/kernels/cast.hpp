// Conversions between fp32 and the 16-bit wire formats, with compression scaling.
// fp16 follows IEEE 754 binary16 with round-to-nearest-even; bf16 is the top half of an fp32,
// also rounded to nearest even. Both require the default FP environment (no flush-to-zero).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace kernels {

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t f32_to_f16(float f) {
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

inline float f16_to_f32(uint16_t h) {
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

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((u >> 16) | 0x40u);  // a quiet NaN
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float bf16_to_f32(uint16_t h) { return f32_from_bits(static_cast<uint32_t>(h) << 16); }

// For a power of two `scale`, x * (1/scale) rounds the same exact value as x / scale, so the
// division that undoes compression scaling may become a multiplication without changing a
// bit. Returns the factor to multiply by, or 0 when scale is not a power of two.
inline float exact_reciprocal(float scale) {
  const uint32_t u = f32_bits(scale);
  const uint32_t exp = (u >> 23) & 0xffu;
  if ((u & 0x807fffffu) != 0 || exp == 0 || exp == 0xffu) return 0.0f;
  return 1.0f / scale;  // 2^-k is representable (as a subnormal at worst) for every normal 2^k
}

// Bytes of one element of zfcFloat32, zfcFloat16 or zfcBFloat16; 0 for other types.
size_t float_type_bytes(zfcDataType_t type);

// The wire type a compression kind sends.
zfcDataType_t wire_type(zfcCompressionKind_t kind);

// dst[i] = wire(src[i] * scale); for a zfcFloat32 wire a plain copy (no scaling).
void encode(const float* src, size_t n, zfcDataType_t wire, float scale, void* dst);

// dst[i] = fp32(src[i]) / scale (no division for a zfcFloat32 wire). Returns true when every
// dst[i] is finite.
bool decode(const void* src, size_t n, zfcDataType_t wire, float scale, float* dst);

// acc[i] = ((0 + fp32(block_0[i])) + fp32(block_1[i])) + ... over `nblocks` consecutive
// blocks of `n` wire elements: the fixed rank-order sum every rank reproduces exactly.
void sum_blocks(const void* blocks, int nblocks, size_t n, zfcDataType_t wire, float* acc);

// acc[i] += fp32(src[i]) for src of type zfcFloat32, zfcFloat16 or zfcBFloat16 (no scaling).
void add_to(const void* src, zfcDataType_t type, size_t n, float* acc);

// True when every value is finite.
bool all_finite(const float* v, size_t n);

}  // namespace kernels
}  // namespace zfc

namespace zfc {
namespace kernels {

// dst[i] = dst_type(fp32(src[i]) * scale) between zfcFloat32/zfcFloat16/zfcBFloat16; a plain
// copy when the types are equal and scale is 1.
void convert(const void* src, zfcDataType_t src_type, size_t n, float scale, void* dst,
             zfcDataType_t dst_type);

// v[i] /= divisor.
void divide(float* v, size_t n, float divisor);

}  // namespace kernels
}  // namespace zfc
