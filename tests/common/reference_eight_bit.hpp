// Single-process references for the eight-bit wire formats and stochastic rounding: a row's
// scale and rounding written out plainly from the documented rules (docs/precision.md), on
// the scalar conversions and random bits of host_device/eight_bit.hpp (which
// tests/unit/test_eight_bit.cpp checks against references of their own), and the
// allreduce of rows composed from them.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "host_device/eight_bit.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace test {

// Where a row is rounded: the call's seed and step, the sending rank, the hop, the row's id.
struct RowPlace {
  uint64_t seed;
  uint32_t step, rank, hop;
  uint64_t row;
};

// A row of values through the wire of `kind` (a zfcCompressionKind_t, the stochastic flag
// included) and back: what every rank decodes.
inline std::vector<float> reference_row_trip(const std::vector<float>& v, int kind,
                                             const RowPlace& at) {
  const bool stochastic = (kind & ZFC_COMPRESS_STOCHASTIC) != 0;
  const int format = kind & ~ZFC_COMPRESS_STOCHASTIC;
  float amax = 0.0f;
  bool finite = true;
  for (float x : v) {
    finite = finite && std::isfinite(x);
    amax = std::max(amax, std::fabs(x));
  }
  std::vector<float> out(v.size(), 0.0f);
  if (!finite) return std::vector<float>(v.size(), std::numeric_limits<float>::quiet_NaN());
  if (amax < std::ldexp(1.0f, -100)) return out;
  const kernels::RoundingKey key{at.seed, at.step, at.rank << 8 | at.hop};
  const auto bits = [&](size_t c) {
    return kernels::rounding_bits(kernels::rounding_block(key, at.row, static_cast<uint32_t>(c / 8)),
                                  static_cast<uint32_t>(c % 8));
  };
  if (format == zfcCompressInt8) {
    const float scale = amax / 127.0f, inverse = 127.0f / amax;
    for (size_t c = 0; c < v.size(); ++c) {
      out[c] = static_cast<float>(kernels::f32_to_int8(v[c] * inverse, stochastic,
                                                       stochastic ? bits(c) : 0)) * scale;
    }
    return out;
  }
  const kernels::Fp8Spec& s =
      format == zfcCompressFp8E4M3 ? kernels::kFp8E4M3 : kernels::kFp8E5M2;
  // The least power of two 2^k with amax / 2^k at most 1.75 * 2^max_exponent.
  int k = std::ilogb(amax) - s.max_exponent;
  if (amax / std::ldexp(1.0f, k) > kernels::fp8_max_value(s)) ++k;
  for (size_t c = 0; c < v.size(); ++c) {
    const uint8_t code = kernels::f32_to_fp8(v[c] * std::ldexp(1.0f, -k), s, stochastic,
                                             stochastic ? bits(c) : 0);
    out[c] = kernels::fp8_to_f32(code, s) * std::ldexp(1.0f, k);
  }
  return out;
}

// zfcAllReduce of an eight-bit kind over ranks: every rank's values in rows of `row` (the
// last padded with zeros), each row through the wire (hop 0, the rank's own), summed from +0
// in rank order, then through the wire again by the rank whose chunk holds it (hop 1).
inline std::vector<float> reference_allreduce_rows(const std::vector<std::vector<float>>& ranks,
                                                   int kind, size_t row, uint64_t seed,
                                                   uint32_t step) {
  const size_t n = ranks.empty() ? 0 : ranks[0].size();
  const size_t rows = (n + row - 1) / row, g = ranks.size();
  std::vector<float> out(n);
  for (size_t b = 0; b < rows; ++b) {
    std::vector<float> acc(row, 0.0f);
    for (size_t r = 0; r < g; ++r) {
      std::vector<float> v(row, 0.0f);
      for (size_t c = 0; c < row && b * row + c < n; ++c) v[c] = ranks[r][b * row + c];
      const std::vector<float> back =
          reference_row_trip(v, kind, {seed, step, static_cast<uint32_t>(r), 0, b});
      for (size_t c = 0; c < row; ++c) acc[c] += back[c];
    }
    // The chunk of rows [off(j), off(j) + len(j)) is rank j's.
    size_t owner = 0;
    for (size_t j = 0, off = 0; j < g; ++j) {
      const size_t len = rows / g + (j < rows % g ? 1 : 0);
      if (b >= off && b < off + len) owner = j;
      off += len;
    }
    const std::vector<float> back =
        reference_row_trip(acc, kind, {seed, step, static_cast<uint32_t>(owner), 1, b});
    for (size_t c = 0; c < row && b * row + c < n; ++c) out[b * row + c] = back[c];
  }
  return out;
}

}  // namespace test
}  // namespace zfc
