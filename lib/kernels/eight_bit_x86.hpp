// The eight-bit formats' row loops on AVX2, chosen at run time when the CPU has it (has_avx2,
// kernels/cast_x86.hpp). Lane by lane they compute what the scalar conversions of
// host_device/eight_bit.hpp compute, so every rank gets the same bits whatever its CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device/eight_bit.hpp"

namespace zfc {
namespace kernels {
namespace x86 {

// The largest of |v[k]|'s bits (a NaN's above every finite value's and infinity's).
uint32_t largest_magnitude_bits_avx2(const float* v, size_t n);
// out[k] = f32_to_int8(v[k] * inverse), rounded to nearest.
void encode_int8_avx2(const float* v, size_t n, float inverse, uint8_t* out);
// out[k] = f32_to_fp8(v[k] * inverse, s), rounded to nearest.
void encode_fp8_avx2(const float* v, size_t n, float inverse, const Fp8Spec& s, uint8_t* out);
// The stochastic encode of one row (random bits of key, `row`, the columns), as
// f32_to_int8 (s == NULL) or f32_to_fp8 with those bits, lane by lane.
void encode_row_stochastic_avx2(const float* v, size_t n, float inverse, const Fp8Spec* s,
                                const RoundingKey& key, uint64_t row, uint8_t* out);
// out[k] = value(in[k]) * scale, or (from_zero ? +0 : out[k]) + that when `add`; whether every
// value decoded is finite. s == NULL: int8 codes.
bool decode_eight_bit_avx2(const uint8_t* in, size_t n, float scale, const Fp8Spec* s, bool add,
                           bool from_zero, float* out);

}  // namespace x86
}  // namespace kernels
}  // namespace zfc
