// Scalar conversions between fp32 and the eight-bit wire values -- the OCP 8-bit floating
// point formats e4m3 and e5m2 and symmetric int8 -- and the stochastic variants of the
// 16-bit ones, the same code on the host and on a CUDA device so that both give the same bits.
//
// Every conversion takes a value already divided by its row's scale (kernels/wire_eight_bit
// chooses the scale so that it fits) and rounds it either to nearest, ties to even, or
// stochastically: up with probability equal to the distance from the value below, decided by
// 16 random bits `r` (the fraction r / 2^16 of the last place), so that the expected result
// is the value itself to within 2^-16 of a last place. fp8 encodes saturate at the largest
// finite value (448 for e4m3, 57344 for e5m2), as the OCP specification's saturating mode;
// int8 uses -127..127, so that negation is exact. Non-finite input is the caller's to handle
// (a row with one travels as a NaN scale). Requires the default FP environment. It lives in
// common/host_device, which both lib/ and cuda/ include.
#pragma once

#include <cmath>
#include <cstdint>

#include "host_device/half_bits.hpp"
#include "host_device/philox.hpp"

namespace zfc {
namespace kernels {

// One of the OCP fp8 formats: mantissa bits, exponent bias, the largest finite value's code
// (without sign) and exponent.
struct Fp8Spec {
  uint32_t mant_bits;
  uint32_t bias;
  uint32_t max_code;
  int32_t max_exponent;  // of the largest finite value, 1.75 * 2^max_exponent in both
};

constexpr Fp8Spec kFp8E4M3{3, 7, 0x7eu, 8};
constexpr Fp8Spec kFp8E5M2{2, 15, 0x7bu, 15};

ZFC_HOST_DEVICE inline float fp8_max_value(const Fp8Spec& s) {
  return f32_from_bits(static_cast<uint32_t>(127 + s.max_exponent) << 23 | 0x600000u);
}

// Stochastic rounding below a format's normals, in integers so that no sum rounds: |y| (the
// bits `a` of a finite fp32) over the format's least step 2^(1 - bias - mant_bits), with 16
// fractional bits (those below dropped), plus the draw r, floored. With a format's bias and
// mantissa bits only (fp8's or binary16's).
ZFC_HOST_DEVICE inline uint32_t subnormal_stochastic(uint32_t a, uint32_t bias, uint32_t mant_bits,
                                                     uint32_t r) {
  const uint32_t e = a >> 23;
  if (e == 0) return 0;  // an fp32 subnormal: far below any of these steps
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  // |y| = m 2^(e - 150); over the step, times 2^16: m 2^(e - 135 + bias + mant_bits), a
  // shift right for fp8 (of at least 5 below its normals) and of up to 2 left for binary16.
  const int32_t shift = 135 - static_cast<int32_t>(bias + mant_bits + e);
  const uint32_t q16 = shift <= 0 ? m << -shift : shift < 32 ? m >> shift : 0u;
  return (q16 + r) >> 16;
}

// |y| as the bits `a` of a finite fp32 to an fp8 magnitude code: to nearest even, or
// stochastically with r (16 random bits); at most max_code.
ZFC_HOST_DEVICE inline uint32_t fp8_magnitude(uint32_t a, const Fp8Spec& s, bool stochastic,
                                              uint32_t r) {
  const uint32_t max_bits = f32_bits(fp8_max_value(s));
  if (a >= max_bits) return s.max_code;
  const uint32_t min_normal_bits = (128u - s.bias) << 23;  // 2^(1 - bias)
  if (a >= min_normal_bits) {
    const uint32_t shift = 23u - s.mant_bits;
    const uint32_t t = stochastic ? a + (r << (shift - 16u))
                                  : a + ((1u << (shift - 1u)) - 1u) + ((a >> shift) & 1u);
    const uint32_t code = (t >> shift) - ((127u - s.bias) << s.mant_bits);
    return code < s.max_code ? code : s.max_code;
  }
  // Subnormal: multiples of 2^(1 - bias - mant_bits); scaling by a power of two is exact.
  if (stochastic) return subnormal_stochastic(a, s.bias, s.mant_bits, r);
  const float q = f32_from_bits(a) * f32_from_bits((127u + s.bias - 1u + s.mant_bits) << 23);
  // Adding 2^23 leaves q's integer part in the last place, rounded to nearest even.
  return f32_bits(q + 8388608.0f) - f32_bits(8388608.0f);
}

// y to an fp8 code with its sign.
ZFC_HOST_DEVICE inline uint8_t f32_to_fp8(float y, const Fp8Spec& s, bool stochastic,
                                          uint32_t r) {
  const uint32_t u = f32_bits(y);
  return static_cast<uint8_t>(fp8_magnitude(u & 0x7fffffffu, s, stochastic, r) |
                              ((u >> 24) & 0x80u));
}

// The value of an fp8 code (both formats' NaN and e5m2's infinities included).
ZFC_HOST_DEVICE inline float fp8_to_f32(uint8_t c, const Fp8Spec& s) {
  const uint32_t sign = static_cast<uint32_t>(c & 0x80u) << 24;
  const uint32_t mag = c & 0x7fu;
  const uint32_t exp = mag >> s.mant_bits, mant = mag & ((1u << s.mant_bits) - 1u);
  uint32_t out;
  if (s.mant_bits == 3 && mag == 0x7fu) {
    out = 0x7fc00000u;  // e4m3's only NaN
  } else if (s.mant_bits == 2 && exp == 31u) {
    out = mant == 0 ? 0x7f800000u : 0x7fc00000u;
  } else if (exp == 0) {
    // mant * 2^(1 - bias - mant_bits), exact in fp32.
    out = f32_bits(static_cast<float>(mant) *
                   f32_from_bits((128u - s.bias - s.mant_bits) << 23));
  } else {
    out = (exp + 127u - s.bias) << 23 | mant << (23u - s.mant_bits);
  }
  return f32_from_bits(out | sign);
}

// y (|y| <= 127 before rounding; the result is clamped there) to int8.
ZFC_HOST_DEVICE inline int8_t f32_to_int8(float y, bool stochastic, uint32_t r) {
  float q;
  if (stochastic) {
    // floor(y + u), u = r / 2^16 in [0, 1): y + u is exact but where y has bits below 2^-16
    // that its sum cannot keep, a bias far below the draw's 2^-16.
    q = floorf(y + static_cast<float>(r) * (1.0f / 65536.0f));
  } else {
    q = (y + 12582912.0f) - 12582912.0f;  // 1.5 * 2^23: to nearest even for |y| < 2^22
  }
  q = q > 127.0f ? 127.0f : q;
  q = q < -127.0f ? -127.0f : q;
  return static_cast<int8_t>(static_cast<int32_t>(q));
}

// The scale of an eight-bit row (lib/kernels/wire_eight_bit.cpp gives the rule) whose
// largest magnitude has the bits amax_bits, and the factor that takes its values to the
// codes; s == NULL: int8. False for a row that travels as zeros: below 2^-100 (scale 0), or
// with a value that is not finite (scale NaN).
ZFC_HOST_DEVICE inline bool eight_bit_row_scale(const Fp8Spec* s, uint32_t amax_bits,
                                                float* scale, float* inverse) {
  constexpr uint32_t kTinyBits = (127u - 100u) << 23;
  if (amax_bits >= 0x7f800000u || amax_bits < kTinyBits) {
    *scale = amax_bits >= 0x7f800000u ? f32_from_bits(0x7fc00000u) : 0.0f;
    *inverse = 0.0f;
    return false;
  }
  if (s == nullptr) {
    const float amax = f32_from_bits(amax_bits);
    *scale = amax / 127.0f;
    *inverse = 127.0f / amax;
    return true;
  }
  const int32_t e = static_cast<int32_t>(amax_bits >> 23) - 127;
  const int32_t k = e - s->max_exponent + ((amax_bits & 0x7fffffu) > 0x600000u ? 1 : 0);
  *scale = f32_from_bits(static_cast<uint32_t>(127 + k) << 23);
  *inverse = f32_from_bits(static_cast<uint32_t>(127 - k) << 23);
  return true;
}

// Stochastic fp16 and bf16 (their round-to-nearest forms are in half_bits.hpp). The random
// bits are added below the last place kept and the rest truncated; a value that rounds past
// the largest finite half becomes infinity, as with rounding to nearest.
ZFC_HOST_DEVICE inline uint16_t f32_to_bf16_stochastic(float f, uint32_t r) {
  const uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) >= 0x7f800000u) return f32_to_bf16(f);  // inf and NaN as they are
  return static_cast<uint16_t>((u + r) >> 16);
}

ZFC_HOST_DEVICE inline uint16_t f32_to_f16_stochastic(float f, uint32_t r) {
  const uint32_t u = f32_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a >= (143u << 23)) return f32_to_f16(f);  // 2^16 and above, inf, NaN: as to nearest
  uint32_t out;
  if (a >= (113u << 23)) {  // normal half: keep 10 of 23 mantissa bits
    out = ((a + (r >> 3)) >> 13) - ((127u - 15u) << 10);
  } else {  // subnormal half: multiples of 2^-24
    out = subnormal_stochastic(a, 15u, 10u, r);
  }
  return static_cast<uint16_t>((out > 0x7c00u ? 0x7c00u : out) | sign);
}

// The random bits of stochastic rounding: a fixed function of the call's seed and step, the
// sending rank, the hop (which encode of the call), the row's id and the column, so that a
// result does not depend on scheduling or thread counts, and two ranks, or two hops, rounding
// the same row draw different bits. One Philox block gives 16 bits to each of 8 columns.
struct RoundingKey {
  uint64_t seed;
  uint32_t step;
  uint32_t rank_hop;  // rank << 8 | hop
};

ZFC_HOST_DEVICE inline Philox4 rounding_block(const RoundingKey& k, uint64_t row, uint32_t col8) {
  return philox4x32(Philox4{{col8, static_cast<uint32_t>(row),
                             k.rank_hop ^ static_cast<uint32_t>(row >> 32) * 0x9E3779B9u, k.step}},
                    k.seed);
}

// The 16 bits of column c (c % 8 of the block of columns c / 8 * 8 ...).
ZFC_HOST_DEVICE inline uint32_t rounding_bits(const Philox4& b, uint32_t c) {
  return (b.v[(c >> 1) & 3u] >> ((c & 1u) * 16u)) & 0xffffu;
}

}  // namespace kernels
}  // namespace zfc
