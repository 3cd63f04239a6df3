// The eight-bit wire formats and stochastic rounding (host_device/eight_bit.hpp,
// kernels/wire_eight_bit.cpp): every fp8 code against a reference by exhaustion, the
// rounding of the row formats within their bounds, the agreed overflow of a row that is not
// finite, stochastic rounding's mean over all 2^16 random draws, and its random bits as a
// function of (seed, step, rank, hop, row, column).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/reference_eight_bit.hpp"
#include "host_device/eight_bit.hpp"
#include "kernels/cast.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
namespace {

using kernels::Fp8Spec;

// The finite values of a format's non-negative codes, in code order (increasing).
std::vector<float> finite_values(const Fp8Spec& s) {
  std::vector<float> v;
  for (uint32_t c = 0; c <= s.max_code; ++c) v.push_back(kernels::fp8_to_f32(c, s));
  return v;
}

// The code nearest to |y| (ties to the even code), saturated at the largest finite value.
uint32_t reference_nearest(float y, const Fp8Spec& s) {
  const std::vector<float> v = finite_values(s);
  const double a = std::fabs(static_cast<double>(y));
  if (a >= v.back()) return s.max_code;
  uint32_t best = 0;
  for (uint32_t c = 1; c < v.size(); ++c) {
    const double d = std::fabs(a - v[c]), e = std::fabs(a - v[best]);
    if (d < e || (d == e && (c & 1u) == 0)) best = c;
  }
  return best;
}

TEST(EightBit, Fp8CodesDecodeToTheOcpValues) {
  EXPECT_EQ(kernels::fp8_to_f32(0x7e, kernels::kFp8E4M3), 448.0f);
  EXPECT_EQ(kernels::fp8_to_f32(0x01, kernels::kFp8E4M3), std::ldexp(1.0f, -9));
  EXPECT_EQ(kernels::fp8_to_f32(0x08, kernels::kFp8E4M3), std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(kernels::fp8_to_f32(0x7f, kernels::kFp8E4M3)));
  EXPECT_EQ(kernels::fp8_to_f32(0x7b, kernels::kFp8E5M2), 57344.0f);
  EXPECT_EQ(kernels::fp8_to_f32(0x01, kernels::kFp8E5M2), std::ldexp(1.0f, -16));
  EXPECT_TRUE(std::isinf(kernels::fp8_to_f32(0x7c, kernels::kFp8E5M2)));
  EXPECT_EQ(kernels::fp8_to_f32(0xb8, kernels::kFp8E4M3), -1.0f);
  EXPECT_EQ(kernels::fp8_max_value(kernels::kFp8E4M3), 448.0f);
  EXPECT_EQ(kernels::fp8_max_value(kernels::kFp8E5M2), 57344.0f);
}

// Every code's value and every midpoint between neighbours (and points a little either side)
// round as the reference rounds them, in both formats and both signs.
TEST(EightBit, Fp8NearestMatchesTheReferenceAtEveryCodeAndMidpoint) {
  for (const Fp8Spec* s : {&kernels::kFp8E4M3, &kernels::kFp8E5M2}) {
    const std::vector<float> v = finite_values(*s);
    std::vector<float> probes;
    for (size_t c = 0; c < v.size(); ++c) {
      probes.push_back(v[c]);
      if (c + 1 < v.size()) {
        const float mid = (v[c] + v[c + 1]) / 2;
        probes.push_back(mid);
        probes.push_back(std::nextafter(mid, 0.0f));
        probes.push_back(std::nextafter(mid, 1e9f));
      }
    }
    probes.push_back(v.back() * 1.01f);
    probes.push_back(1e30f);
    probes.push_back(std::ldexp(1.0f, -30));
    for (float y : probes) {
      for (float sign : {1.0f, -1.0f}) {
        const uint8_t got = kernels::f32_to_fp8(sign * y, *s, false, 0);
        ASSERT_EQ(got & 0x7fu, reference_nearest(y, *s)) << "y = " << y << " m " << s->mant_bits;
        ASSERT_EQ(got >> 7, sign < 0 ? 1u : 0u);
      }
    }
  }
}

// A value a code holds exactly stays that code whatever the draw, in every format.
TEST(EightBit, StochasticRoundingKeepsExactValues) {
  for (uint32_t r : {0u, 1u, 32768u, 65535u}) {
    for (float y : {0.0f, 5.0f, -7.0f, 127.0f, -127.0f}) {
      EXPECT_EQ(kernels::f32_to_int8(y, true, r), static_cast<int8_t>(y)) << y << " " << r;
    }
    for (const Fp8Spec* s : {&kernels::kFp8E4M3, &kernels::kFp8E5M2}) {
      for (uint8_t c : {uint8_t{0x01}, uint8_t{0x05}, uint8_t{0x30}, uint8_t{0xb8}}) {
        const float y = kernels::fp8_to_f32(c, *s);
        EXPECT_EQ(kernels::f32_to_fp8(y, *s, true, r), c) << y << " " << r;
      }
    }
    for (uint16_t h : {uint16_t{0x0001}, uint16_t{0x03ff}, uint16_t{0x3c00}, uint16_t{0x8200}}) {
      EXPECT_EQ(kernels::f32_to_f16_stochastic(kernels::f16_to_f32(h), r), h) << h << " " << r;
    }
  }
}

TEST(EightBit, Int8RoundsToNearestEvenAndClamps) {
  for (float y : {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 126.4f, 126.6f, 127.4f, 200.0f, -300.0f,
                  3.49999f, -3.50001f}) {
    const float want = std::max(-127.0f, std::min(127.0f, std::nearbyint(y)));
    EXPECT_EQ(kernels::f32_to_int8(y, false, 0), static_cast<int8_t>(want)) << y;
  }
}

// Over all 2^16 random draws, the stochastic result's mean is the value to within 2^-16 of
// the step between the two codes around it (the draw's resolution).
template <class Encode, class Decode>
void expect_unbiased(float y, Encode encode, Decode decode, double step) {
  double sum = 0.0;
  for (uint32_t r = 0; r < 65536; ++r) sum += decode(encode(y, r));
  EXPECT_NEAR(sum / 65536.0, y, step / 65536.0 + 1e-12) << "y = " << y;
}

TEST(EightBit, StochasticRoundingIsUnbiasedOverEveryDraw) {
  for (const Fp8Spec* s : {&kernels::kFp8E4M3, &kernels::kFp8E5M2}) {
    for (float y : {0.3f, -1.37f, 100.7f, 0.0013f, -0.000731f}) {
      const float a = std::fabs(y);
      const double step = std::ldexp(1.0, std::max(std::ilogb(a), 1 - static_cast<int>(s->bias)) -
                                              static_cast<int>(s->mant_bits));
      expect_unbiased(
          y, [&](float x, uint32_t r) { return kernels::f32_to_fp8(x, *s, true, r); },
          [&](uint8_t c) { return static_cast<double>(kernels::fp8_to_f32(c, *s)); }, step);
    }
  }
  for (float y : {0.3f, -1.37f, 100.7f, -126.2f}) {
    expect_unbiased(
        y, [](float x, uint32_t r) { return kernels::f32_to_int8(x, true, r); },
        [](int8_t c) { return static_cast<double>(c); }, 1.0);
  }
  for (float y : {0.3f, -1.37f, 1000.7f, 3e-6f}) {
    const double step16 = std::ldexp(1.0, std::max(std::ilogb(std::fabs(y)), -14) - 10);
    expect_unbiased(
        y, [](float x, uint32_t r) { return kernels::f32_to_f16_stochastic(x, r); },
        [](uint16_t h) { return static_cast<double>(kernels::f16_to_f32(h)); }, step16);
    const double stepb = std::ldexp(1.0, std::ilogb(std::fabs(y)) - 7);
    expect_unbiased(
        y, [](float x, uint32_t r) { return kernels::f32_to_bf16_stochastic(x, r); },
        [](uint16_t h) { return static_cast<double>(kernels::bf16_to_f32(h)); }, stepb);
  }
}

const kernels::WireFormat& format(zfcCompressionKind_t kind) {
  const kernels::WireFormat* f = kernels::find_wire_format(kind);
  EXPECT_NE(f, nullptr);
  return *f;
}

std::vector<float> zipf_like_rows(size_t rows, size_t dim, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(rows * dim);
  for (size_t r = 0; r < rows; ++r) {
    const float magnitude = std::ldexp(1.0f, static_cast<int>(r % 40) - 20);
    for (size_t k = 0; k < dim; ++k) v[r * dim + k] = normal(gen) * magnitude;
  }
  return v;
}

TEST(EightBit, RowsCarryTheirScaleAndStayWithinTheirBounds) {
  const size_t dim = 512, rows = 40;
  const std::vector<float> v = zipf_like_rows(rows, dim, 7);
  for (zfcCompressionKind_t kind : {zfcCompressFp8E4M3, zfcCompressFp8E5M2, zfcCompressInt8}) {
    const kernels::WireFormat& f = format(kind);
    EXPECT_EQ(f.row_bytes(dim), dim + 4);
    EXPECT_LE(static_cast<double>(f.row_bytes(dim)), 0.51 * 2 * dim);  // fp16's bytes
    std::vector<char> wire(rows * f.row_bytes(dim));
    std::vector<float> back(rows * dim);
    f.encode_rows(v.data(), rows, dim, 1.0f, wire.data());
    ASSERT_TRUE(f.decode_rows(wire.data(), rows, dim, 1.0f, back.data()));
    for (size_t r = 0; r < rows; ++r) {
      float amax = 0.0f;
      for (size_t k = 0; k < dim; ++k) amax = std::max(amax, std::fabs(v[r * dim + k]));
      for (size_t k = 0; k < dim; ++k) {
        const float x = v[r * dim + k], y = back[r * dim + k];
        // int8: half a step of amax / 127; fp8: half a last place of x, or half the smallest
        // subnormal of the row's scale.
        double bound;
        if (kind == zfcCompressInt8) {
          bound = amax / 127.0 / 2 * (1 + 1e-6);
        } else {
          const Fp8Spec& s = kind == zfcCompressFp8E4M3 ? kernels::kFp8E4M3 : kernels::kFp8E5M2;
          const double rel = std::ldexp(1.0, -static_cast<int>(s.mant_bits) - 1);
          const double sub = std::ldexp(amax, 1 - s.max_exponent - static_cast<int>(s.bias) -
                                                  static_cast<int>(s.mant_bits));
          bound = std::max(std::fabs(x) * rel, sub);
        }
        ASSERT_LE(std::fabs(static_cast<double>(x) - y), bound)
            << f.name << " row " << r << " col " << k << " x " << x << " y " << y;
      }
    }
  }
}

TEST(EightBit, ARowThatIsNotFiniteDecodesAsNotFiniteAndZeroRowsAsZeros) {
  const size_t dim = 16;
  std::vector<float> v(3 * dim, 0.5f);
  v[dim + 3] = std::numeric_limits<float>::infinity();
  std::fill(v.begin() + 2 * dim, v.end(), 0.0f);
  for (zfcCompressionKind_t kind : {zfcCompressFp8E4M3, zfcCompressFp8E5M2, zfcCompressInt8}) {
    const kernels::WireFormat& f = format(kind);
    std::vector<char> wire(3 * f.row_bytes(dim));
    std::vector<float> back(3 * dim, 9.0f);
    f.encode_rows(v.data(), 3, dim, 1.0f, wire.data());
    EXPECT_FALSE(f.decode_rows(wire.data(), 3, dim, 1.0f, back.data())) << f.name;
    EXPECT_TRUE(f.decode_rows(wire.data(), 1, dim, 1.0f, back.data()));
    EXPECT_EQ(back[0], 0.5f);
    EXPECT_TRUE(f.decode_rows(wire.data() + 2 * f.row_bytes(dim), 1, dim, 1.0f, back.data()));
    for (size_t k = 0; k < dim; ++k) EXPECT_EQ(back[k], 0.0f);
    // The decoding sum: a not-finite row makes its target NaN.
    const int32_t pos[3] = {0, 1, 0};
    std::vector<float> sums(2 * dim, 0.0f);
    f.accumulate_rows(wire.data(), pos, 3, dim, sums.data(), nullptr);
    EXPECT_EQ(sums[0], 0.5f);
    EXPECT_TRUE(std::isnan(sums[dim]));
  }
}

kernels::Rounding stochastic(uint64_t seed, uint32_t step, uint32_t rank, uint32_t hop) {
  kernels::Rounding r;
  r.stochastic = true;
  r.seed = seed;
  r.step = step;
  r.rank = rank;
  r.hop = hop;
  return r;
}

// The same (seed, step, rank, hop, rows) give the same bits; changing any of them changes
// them, and so does a row's id while the values stay.
TEST(EightBit, StochasticBitsAreAFunctionOfSeedStepRankHopRowAndColumn) {
  const size_t dim = 64, rows = 4;
  const std::vector<float> v = zipf_like_rows(rows, dim, 3);
  for (zfcCompressionKind_t kind :
       {zfcCompressFp16, zfcCompressBf16, zfcCompressFp8E4M3, zfcCompressFp8E5M2,
        zfcCompressInt8}) {
    const kernels::WireFormat& f = format(kind);
    const auto encode = [&](const kernels::Rounding& r) {
      std::vector<char> w(rows * f.row_bytes(dim));
      f.encode_rows(v.data(), rows, dim, 1.0f, w.data(), r);
      return w;
    };
    const kernels::Rounding base = stochastic(11, 5, 2, kernels::kHopSend);
    const std::vector<char> once = encode(base);
    EXPECT_EQ(once, encode(base)) << f.name;
    EXPECT_NE(once, encode(stochastic(12, 5, 2, kernels::kHopSend))) << f.name;
    EXPECT_NE(once, encode(stochastic(11, 6, 2, kernels::kHopSend))) << f.name;
    EXPECT_NE(once, encode(stochastic(11, 5, 3, kernels::kHopSend))) << f.name;
    EXPECT_NE(once, encode(stochastic(11, 5, 2, kernels::kHopOwnerSum))) << f.name;
    EXPECT_NE(once, encode(base.at(kernels::kHopSend, kernels::RowIds::counting(100))))
        << f.name;
    // Row by row with the ids the whole call gives each: the same bits.
    std::vector<char> pieces(once.size());
    for (size_t r = 0; r < rows; ++r) {
      f.encode_rows(v.data() + r * dim, 1, dim, 1.0f, pieces.data() + r * f.row_bytes(dim),
                    base.from_row(r));
    }
    EXPECT_EQ(pieces, once) << f.name;
    // Nearest is not the stochastic result.
    EXPECT_NE(once, encode(kernels::Rounding{})) << f.name;
  }
}

// The row loops (vectorised where the CPU allows) give, lane by lane, the scalar
// conversions' bits: a row through the wire is the reference's row trip exactly, for rows
// whose values span the formats' subnormals, of lengths that leave a tail.
TEST(EightBit, RowLoopsGiveTheScalarConversionsBits) {
  // 300: whole batches of 64 columns and a part of one.
  for (size_t dim : {size_t{7}, size_t{37}, size_t{300}, size_t{512}}) {
    std::vector<float> v = zipf_like_rows(40, dim, 11);
    for (size_t i = 0; i < v.size(); i += 5) v[i] = std::ldexp(v[i], -20);  // tiny values
    for (int kind : {zfcCompressFp8E4M3, zfcCompressFp8E5M2, zfcCompressInt8,
                     zfcCompressInt8Stochastic, zfcCompressFp8E4M3Stochastic,
                     zfcCompressFp8E5M2Stochastic}) {
      const kernels::WireFormat& f =
          format(static_cast<zfcCompressionKind_t>(kind & ~ZFC_COMPRESS_STOCHASTIC));
      const kernels::Rounding r =
          stochastic(3, 4, 5, kernels::kHopSend).at(kernels::kHopSend, kernels::RowIds::counting(0));
      kernels::Rounding used = r;
      used.stochastic = (kind & ZFC_COMPRESS_STOCHASTIC) != 0;
      std::vector<char> wire(40 * f.row_bytes(dim));
      std::vector<float> back(40 * dim), sums(40 * dim, 1.0f);
      f.encode_rows(v.data(), 40, dim, 1.0f, wire.data(), used);
      ASSERT_TRUE(f.decode_rows(wire.data(), 40, dim, 1.0f, back.data()));
      std::vector<int32_t> pos(40);
      for (int32_t i = 0; i < 40; ++i) pos[static_cast<size_t>(i)] = i;
      f.accumulate_rows(wire.data(), pos.data(), 40, dim, sums.data(), nullptr);
      for (size_t row = 0; row < 40; ++row) {
        const std::vector<float> in(v.begin() + row * dim, v.begin() + (row + 1) * dim);
        const std::vector<float> want = test::reference_row_trip(in, kind, {3, 4, 5, 0, row});
        for (size_t k = 0; k < dim; ++k) {
          ASSERT_EQ(kernels::f32_bits(back[row * dim + k]), kernels::f32_bits(want[k]))
              << f.name << " dim " << dim << " row " << row << " col " << k;
          ASSERT_EQ(sums[row * dim + k], 1.0f + want[k]);
        }
      }
    }
  }
}

TEST(EightBit, TheTableNamesEveryFormat) {
  const char* names[] = {"none", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8"};
  for (int kind = 0; kind <= 5; ++kind) {
    const kernels::WireFormat* f = kernels::find_wire_format(kind);
    ASSERT_NE(f, nullptr);
    EXPECT_STREQ(f->name, names[kind]);
    EXPECT_EQ(f->element_only(), kind <= 2);
  }
  EXPECT_EQ(kernels::find_wire_format(zfcCompressInt8Stochastic), nullptr);
}

}  // namespace
}  // namespace zfc
