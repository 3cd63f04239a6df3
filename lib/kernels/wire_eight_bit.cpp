// The eight-bit wire formats: a row of D values travels as D one-byte codes and, after them,
// the row's scale as an fp32 (D + 4 bytes; 0.504 of fp16's bytes at D = 512). A value is
// code * scale.
//
// The scale is the row's own, from its largest magnitude amax, so no row overflows on range:
// - fp8 (e4m3, e5m2): the least power of two 2^k with amax / 2^k <= the format's largest
//   finite value, in the manner of MX's shared exponents. Dividing and multiplying by it are
//   exact, so fp8's rounding is the only error, and the scale costs nothing in precision:
//   fp8's relative step does not depend on where in its range a value lies.
// - int8: amax / 127, so that the row uses the whole -127..127 range. A power of two would
//   leave up to half the codes unused, a whole bit of int8's seven.
// A row whose amax is below 2^-100 travels as zeros (scale 0); a row with a value that is not
// finite travels with a NaN scale, so that every rank that decodes it sees a value that is
// not finite (the agreed overflow).
#include <cmath>
#include <cstring>

#include "host_device/eight_bit.hpp"
#include "kernels/cast_x86.hpp"
#include "kernels/eight_bit_x86.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
namespace kernels {
namespace {

enum class Code { kE4M3, kE5M2, kInt8 };

Code code_of(const WireFormat& f) {
  switch (f.kind) {
    case zfcCompressFp8E4M3: return Code::kE4M3;
    case zfcCompressFp8E5M2: return Code::kE5M2;
    default: return Code::kInt8;
  }
}

const Fp8Spec& spec_of(Code c) { return c == Code::kE4M3 ? kFp8E4M3 : kFp8E5M2; }

// The values of the 256 codes of each fp8 format.
struct Fp8Tables {
  float e4m3[256], e5m2[256];
  Fp8Tables() {
    for (uint32_t c = 0; c < 256; ++c) {
      e4m3[c] = fp8_to_f32(static_cast<uint8_t>(c), kFp8E4M3);
      e5m2[c] = fp8_to_f32(static_cast<uint8_t>(c), kFp8E5M2);
    }
  }
};

const float* code_values(Code c) {
  static const Fp8Tables tables;
  return c == Code::kE4M3 ? tables.e4m3 : tables.e5m2;
}

uint32_t largest_magnitude_bits(const float* v, size_t dim) {
  if (x86::has_avx2()) return x86::largest_magnitude_bits_avx2(v, dim);
  uint32_t most = 0;
  for (size_t k = 0; k < dim; ++k) {
    const uint32_t a = f32_bits(v[k]) & 0x7fffffffu;
    most = a > most ? a : most;
  }
  return most;
}

void encode_row_nearest(Code c, const float* v, size_t dim, float inverse, uint8_t* out) {
  if (x86::has_avx2()) {
    if (c == Code::kInt8) return x86::encode_int8_avx2(v, dim, inverse, out);
    return x86::encode_fp8_avx2(v, dim, inverse, spec_of(c), out);
  }
  if (c == Code::kInt8) {
    for (size_t k = 0; k < dim; ++k) {
      out[k] = static_cast<uint8_t>(f32_to_int8(v[k] * inverse, false, 0));
    }
    return;
  }
  const Fp8Spec& s = spec_of(c);
  for (size_t k = 0; k < dim; ++k) out[k] = f32_to_fp8(v[k] * inverse, s, false, 0);
}

void encode_row_stochastic(Code c, const float* v, size_t dim, float inverse,
                           const RoundingKey& key, uint64_t row, uint8_t* out) {
  if (x86::has_avx2()) {
    const Fp8Spec spec = c == Code::kInt8 ? Fp8Spec{} : spec_of(c);
    return x86::encode_row_stochastic_avx2(v, dim, inverse, c == Code::kInt8 ? nullptr : &spec,
                                           key, row, out);
  }
  for (size_t k0 = 0; k0 < dim; k0 += 8) {
    const Philox4 bits = rounding_block(key, row, static_cast<uint32_t>(k0 / 8));
    const size_t end = k0 + 8 < dim ? k0 + 8 : dim;
    for (size_t k = k0; k < end; ++k) {
      const uint32_t r = rounding_bits(bits, static_cast<uint32_t>(k - k0));
      out[k] = c == Code::kInt8
                   ? static_cast<uint8_t>(f32_to_int8(v[k] * inverse, true, r))
                   : f32_to_fp8(v[k] * inverse, spec_of(c), true, r);
    }
  }
}

void encode_rows(const WireFormat& f, const float* src, size_t rows, size_t dim, float,
                 const Rounding& rounding, void* dst) {
  const Code c = code_of(f);
  const size_t bytes = f.row_bytes(dim);
  const RoundingKey key = rounding.key();
  for (size_t r = 0; r < rows; ++r) {
    const float* v = src + r * dim;
    uint8_t* out = static_cast<uint8_t*>(dst) + r * bytes;
    float scale, inverse;
    if (!eight_bit_row_scale(c == Code::kInt8 ? nullptr : &spec_of(c),
                             largest_magnitude_bits(v, dim), &scale, &inverse)) {
      std::memset(out, 0, dim);
    } else {
      if (rounding.stochastic) {
        encode_row_stochastic(c, v, dim, inverse, key, rounding.rows.at(r), out);
      } else {
        encode_row_nearest(c, v, dim, inverse, out);
      }
    }
    std::memcpy(out + dim, &scale, sizeof scale);
  }
}

float scale_of(const uint8_t* row, size_t dim) {
  float s;
  std::memcpy(&s, row + dim, sizeof s);
  return s;
}

// One row's values, code * scale, into out (or added to it: out = (out or +0) + value).
// Whether every value decoded is finite: a NaN scale makes all of them NaN, and a value a
// rounding step from fp32's largest can decode to infinity.
template <bool kAdd>
bool decode_row(Code c, const uint8_t* in, size_t dim, float* out, bool from_zero) {
  const float s = scale_of(in, dim);
  if (x86::has_avx2()) {
    return x86::decode_eight_bit_avx2(in, dim, s, c == Code::kInt8 ? nullptr : &spec_of(c), kAdd,
                                      from_zero, out);
  }
  uint32_t bad = 0;
  if (c == Code::kInt8) {
    for (size_t k = 0; k < dim; ++k) {
      const float v = static_cast<float>(static_cast<int8_t>(in[k])) * s;
      bad |= static_cast<uint32_t>((f32_bits(v) & 0x7f800000u) == 0x7f800000u);
      out[k] = kAdd ? (from_zero ? 0.0f : out[k]) + v : v;
    }
    return bad == 0;
  }
  const float* value = code_values(c);
  for (size_t k = 0; k < dim; ++k) {
    const float v = value[in[k]] * s;
    bad |= static_cast<uint32_t>((f32_bits(v) & 0x7f800000u) == 0x7f800000u);
    out[k] = kAdd ? (from_zero ? 0.0f : out[k]) + v : v;
  }
  return bad == 0;
}

bool decode_rows(const WireFormat& f, const void* src, size_t rows, size_t dim, float,
                 float* dst) {
  const Code c = code_of(f);
  const size_t bytes = f.row_bytes(dim);
  bool finite = true;
  for (size_t r = 0; r < rows; ++r) {
    const uint8_t* in = static_cast<const uint8_t*>(src) + r * bytes;
    finite &= decode_row<false>(c, in, dim, dst + r * dim, false);
  }
  return finite;
}

void accumulate_rows(const WireFormat& f, const void* rows, const int32_t* pos, size_t n,
                     size_t dim, float* dst, uint8_t* touched) {
  const Code c = code_of(f);
  const size_t bytes = f.row_bytes(dim);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* in = static_cast<const uint8_t*>(rows) + i * bytes;
    const size_t t = static_cast<size_t>(pos[i]);
    const bool first = touched != nullptr && touched[t] == 0;
    decode_row<true>(c, in, dim, dst + t * dim, first);
    if (touched != nullptr) touched[t] = 1;
  }
}

}  // namespace

const WireRowOps kEightBitRows = {encode_rows, decode_rows, accumulate_rows};

}  // namespace kernels
}  // namespace zfc
