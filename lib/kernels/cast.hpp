// Conversions between fp32 and the 16-bit wire formats, with compression scaling, over
// arrays in host memory (the scalar conversions are in host_device/half_bits.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device/half_bits.hpp"
#include "kernels/rounding.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace kernels {

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

// encode() of rows x dim values to zfcFloat16 or zfcBFloat16, rounded stochastically with
// r's random bits (row i's id r.rows.at(i), its columns).
void encode_stochastic(const float* src, size_t rows, size_t dim, zfcDataType_t wire,
                       float scale, const Rounding& r, void* dst);

// The same for n values that are values first, first + 1, ... of a buffer cut into rows of
// row_values: value v's random bits are those of row v / row_values, column
// v % row_values (r.rows numbers the buffer's rows).
void encode_stochastic_span(const float* src, size_t n, size_t first, size_t row_values,
                            zfcDataType_t wire, float scale, const Rounding& r, void* dst);

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
