// fp16 and bf16 conversions against the compiler's own IEEE conversions, exhaustively where
// the domain allows.
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/reference.hpp"
#include "kernels/cast.hpp"
#include "kernels/cast_x86.hpp"
#include "kernels/rows.hpp"
#include "kernels/wire_format.hpp"
#include "workload/random.hpp"

namespace zfc {
namespace kernels {
namespace {

// The references (tests/common/reference.hpp) are the compiler's _Float16 conversions where
// it has them, else an independent rounding in double arithmetic.
TEST(Cast, EveryHalfDecodesLikeTheReference) {
  for (uint32_t u = 0; u < 65536; ++u) {
    const uint16_t bits = static_cast<uint16_t>(u);
    const float want = test::reference_fp16_value(bits);
    const float got = f16_to_f32(bits);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << u;
    } else {
      ASSERT_EQ(f32_bits(got), f32_bits(want)) << u;
    }
  }
}

TEST(Cast, FloatsRoundToHalfLikeTheReference) {
  // Every float whose low 13 bits cover the rounding cases, across all exponents.
  for (uint32_t hi = 0; hi < (1u << 19); ++hi) {
    for (uint32_t lo : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu}) {
      const uint32_t u = (hi << 13) | lo;
      const float f = f32_from_bits(u);
      const uint16_t want = test::reference_fp16_bits(f);
      const uint16_t got = f32_to_f16(f);
      if (std::isnan(f)) {
        ASSERT_EQ(got & 0x7c00u, 0x7c00u);
        ASSERT_NE(got & 0x3ffu, 0u);
      } else {
        ASSERT_EQ(got, want) << std::hex << u;
      }
    }
  }
}

TEST(Cast, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3f808000u)), 0x3f80);  // tie to even (down)
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3f818000u)), 0x3f82);  // tie to even (up)
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
  workload::SplitMix64 rng(1);
  for (int i = 0; i < 100000; ++i) {
    const float f = f32_from_bits(static_cast<uint32_t>(rng.next()));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_bits(bf16_to_f32(f32_to_bf16(f))), f32_bits(test::round_bf16(f)));
  }
}

TEST(Cast, F16cLoopsMatchThePortableCode) {
  if (!x86::has_f16c()) GTEST_SKIP() << "this CPU has no F16C; the portable loops are in use";
  std::vector<uint16_t> all(65536);
  for (uint32_t u = 0; u < 65536; ++u) all[u] = static_cast<uint16_t>(u);
  std::vector<float> hw(all.size()), sw(all.size());
  EXPECT_FALSE(x86::decode_f16(all.data(), all.size(), 4.0f, hw.data()));
  for (size_t i = 0; i < all.size(); ++i) {
    sw[i] = f16_to_f32(all[i]) / 4.0f;
    if (std::isnan(sw[i])) {
      ASSERT_TRUE(std::isnan(hw[i]));
    } else {
      ASSERT_EQ(f32_bits(hw[i]), f32_bits(sw[i])) << i;
    }
  }
  const std::vector<uint16_t> finite = {0x3c00, 0x7bff, 0x0001, 0x8000, 0xfbff, 0x1234, 0x4000,
                                        0x3555, 0x0400};
  std::vector<float> out(finite.size());
  EXPECT_TRUE(x86::decode_f16(finite.data(), finite.size(), 1.0f, out.data()));
  workload::SplitMix64 rng(3);
  std::vector<float> in(100003);
  for (float& f : in) f = f32_from_bits(static_cast<uint32_t>(rng.next()) & 0xc7ffffffu);
  std::vector<uint16_t> h(in.size());
  x86::encode_f16(in.data(), in.size(), 3.0f, h.data());
  for (size_t i = 0; i < in.size(); ++i) {
    if (std::isnan(in[i])) continue;
    ASSERT_EQ(h[i], f32_to_f16(in[i] * 3.0f)) << std::hex << f32_bits(in[i]);
  }
  std::vector<float> acc(17, 5.0f), ref(17);
  std::vector<uint16_t> blk(17, 0x8000);  // -0: the first block must still give +0
  x86::accumulate_f16(blk.data(), blk.size(), true, acc.data());
  for (float a : acc) EXPECT_EQ(f32_bits(a), 0u);
}

TEST(Cast, PowerOfTwoScalesDivideByMultiplying) {
  EXPECT_EQ(exact_reciprocal(3.0f), 0.0f);
  EXPECT_EQ(exact_reciprocal(-2.0f), 0.0f);
  EXPECT_EQ(exact_reciprocal(std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(exact_reciprocal(std::numeric_limits<float>::denorm_min()), 0.0f);
  workload::SplitMix64 rng(9);
  for (float scale : {1.0f, 2.0f, 1024.0f, 0x1p-10f, 0x1p127f, 0x1p-126f}) {
    const float inv = exact_reciprocal(scale);
    ASSERT_NE(inv, 0.0f) << scale;
    std::vector<float> v(4096), d(4096);
    for (float& f : v) f = f32_from_bits(static_cast<uint32_t>(rng.next()));
    d = v;
    divide(d.data(), d.size(), scale);
    for (size_t i = 0; i < v.size(); ++i) {
      const float want = v[i] / scale;
      if (std::isnan(want)) continue;
      ASSERT_EQ(f32_bits(v[i] * inv), f32_bits(want)) << scale << " " << v[i];
      ASSERT_EQ(f32_bits(d[i]), f32_bits(want));
    }
  }
}

using EncodeBf16 = void (*)(const float*, size_t, float, uint16_t*);
using DecodeBf16 = bool (*)(const uint16_t*, size_t, float, float*);

// A vector bf16 encoder and decoder against the portable code, bit for bit.
void check_bf16_loops(EncodeBf16 encode_fn, DecodeBf16 decode_fn) {
  std::vector<uint16_t> all(65536);
  for (uint32_t u = 0; u < 65536; ++u) all[u] = static_cast<uint16_t>(u);
  for (float scale : {4.0f, 3.0f}) {  // a multiplication and a division
    std::vector<float> hw(all.size());
    EXPECT_FALSE(decode_fn(all.data(), all.size(), scale, hw.data()));
    for (size_t i = 0; i < all.size(); ++i) {
      const float sw = bf16_to_f32(all[i]) / scale;
      if (std::isnan(sw)) {
        ASSERT_TRUE(std::isnan(hw[i]));
      } else {
        ASSERT_EQ(f32_bits(hw[i]), f32_bits(sw)) << i;
      }
    }
  }
  std::vector<uint16_t> finite(37, 0x3f80);
  finite[3] = 0x7f7f;
  finite[36] = 0x8001;
  std::vector<float> out(finite.size());
  EXPECT_TRUE(decode_fn(finite.data(), finite.size(), 1.0f, out.data()));
  finite[36] = 0x7f80;  // an infinity in the scalar tail
  EXPECT_FALSE(decode_fn(finite.data(), finite.size(), 1.0f, out.data()));
  // Every bit pattern class, NaNs and ties included, over a length that leaves a tail.
  workload::SplitMix64 rng(5);
  std::vector<float> in(100003);
  for (float& f : in) f = f32_from_bits(static_cast<uint32_t>(rng.next()));
  in[0] = f32_from_bits(0x3f808000u);
  in[1] = f32_from_bits(0x3f818000u);
  in[2] = f32_from_bits(0x7f800001u);
  in[3] = f32_from_bits(0xffc00000u);
  in[4] = f32_from_bits(0x7f7fffffu);  // rounds up to infinity
  std::vector<uint16_t> h(in.size());
  for (float scale : {1.0f, 3.0f}) {
    encode_fn(in.data(), in.size(), scale, h.data());
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(h[i], f32_to_bf16(in[i] * scale)) << std::hex << f32_bits(in[i]);
    }
  }
}

TEST(Cast, Avx2Bf16LoopsMatchThePortableCode) {
  if (!x86::has_avx2()) GTEST_SKIP() << "this CPU has no AVX2; the portable loops are in use";
  check_bf16_loops(x86::encode_bf16, x86::decode_bf16);
  std::vector<float> acc(17, 5.0f);
  std::vector<uint16_t> blk(17, 0x8000);  // -0: the first block must still give +0
  x86::accumulate_bf16(blk.data(), blk.size(), true, acc.data());
  for (float a : acc) EXPECT_EQ(f32_bits(a), 0u);
  std::vector<uint16_t> one(17, 0x3f80);
  x86::accumulate_bf16(one.data(), one.size(), false, acc.data());
  for (float a : acc) EXPECT_EQ(a, 1.0f);
}

TEST(Cast, Avx512Bf16LoopsMatchThePortableCode) {
  if (!x86::has_avx512bw()) {
    GTEST_SKIP() << "this CPU has no AVX-512 BW/VL; the AVX2 or portable loops are in use";
  }
  check_bf16_loops(x86::encode_bf16_avx512, x86::decode_bf16_avx512);
}

TEST(Cast, EncodeDecodeWithScaleAndOverflow) {
  const std::vector<float> v = {0.5f, -3.25f, 1e-3f, 100.0f};
  std::vector<uint16_t> wire(v.size());
  std::vector<float> back(v.size());
  encode(v.data(), v.size(), zfcFloat16, 64.0f, wire.data());
  EXPECT_TRUE(decode(wire.data(), v.size(), zfcFloat16, 64.0f, back.data()));
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(back[i], test::round_fp16(v[i] * 64.0f) / 64.0f);
  }
  encode(v.data(), v.size(), zfcFloat16, 1024.0f, wire.data());  // 100 * 1024 > 65504
  EXPECT_FALSE(decode(wire.data(), v.size(), zfcFloat16, 1024.0f, back.data()));
  EXPECT_TRUE(std::isinf(back[3]));
}

// A scale below 1 divides a finite wire value up, past fp32's range where it is near the
// wire's largest (bf16 has fp32's range): the flag says what dst holds, not the wire. Checked
// in the vector loops and their tails.
TEST(Cast, ADecodeThatScalesPastFloatRangeIsNotFinite) {
  const float big = std::numeric_limits<float>::max();
  for (size_t n : {size_t{1}, size_t{37}}) {
    for (size_t at : {size_t{0}, n - 1}) {
      std::vector<float> v(n, 1.0f);
      v[at] = big;
      std::vector<uint16_t> wire(n);
      std::vector<float> back(n);
      encode(v.data(), n, zfcBFloat16, 0.125f, wire.data());  // FLT_MAX / 8 rounds to 2^125
      EXPECT_EQ(wire[at] & 0x7f80u, 0x7e00u) << "finite on the wire";
      EXPECT_FALSE(decode(wire.data(), n, zfcBFloat16, 0.125f, back.data())) << n << " " << at;
      EXPECT_TRUE(std::isinf(back[at]));
      v[at] = big / 2;  // stays finite when decoded: no false alarm
      encode(v.data(), n, zfcBFloat16, 0.125f, wire.data());
      EXPECT_TRUE(decode(wire.data(), n, zfcBFloat16, 0.125f, back.data())) << n << " " << at;
      // fp16's largest, 65504, at a scale of 2^-120 (an exact reciprocal: the multiply path).
      std::vector<uint16_t> half(n, 0x3c00);
      half[at] = 0x7bff;
      EXPECT_FALSE(decode(half.data(), n, zfcFloat16, std::ldexp(1.0f, -120), back.data()));
      EXPECT_TRUE(std::isinf(back[at]));
      EXPECT_TRUE(decode(half.data(), n, zfcFloat16, std::ldexp(1.0f, -100), back.data()));
    }
  }
}

// The same for each vector loop this CPU has, called directly (the dispatch above takes one),
// and for the dispatch itself, so that a CPU without vector loops still checks its own.
TEST(Cast, EveryVectorDecodeFlagsAValueItsScaleTakesPastFloatRange) {
  using Decode = bool (*)(const uint16_t*, size_t, float, float*);
  std::vector<std::pair<const char*, Decode>> bf16_loops = {
      {"dispatch", [](const uint16_t* in, size_t n, float scale, float* out) {
         return decode(in, n, zfcBFloat16, scale, out);
       }}};
  std::vector<std::pair<const char*, Decode>> f16_loops = {
      {"dispatch", [](const uint16_t* in, size_t n, float scale, float* out) {
         return decode(in, n, zfcFloat16, scale, out);
       }}};
  if (x86::has_avx2()) bf16_loops.emplace_back("avx2", x86::decode_bf16);
  if (x86::has_avx512bw()) bf16_loops.emplace_back("avx512", x86::decode_bf16_avx512);
  if (x86::has_f16c()) f16_loops.emplace_back("f16c", x86::decode_f16);
  for (size_t n : {size_t{16}, size_t{37}}) {
    for (size_t at : {size_t{0}, size_t{9}, n - 1}) {
      std::vector<float> back(n);
      std::vector<uint16_t> bf16(n, 0x3f80);  // 1.0
      bf16[at] = 0x7e00;                      // 2^125
      for (const auto& [name, decode_fn] : bf16_loops) {
        EXPECT_FALSE(decode_fn(bf16.data(), n, 0.125f, back.data())) << name << " " << at;
        EXPECT_TRUE(std::isinf(back[at])) << name;
        EXPECT_TRUE(decode_fn(bf16.data(), n, 0.25f, back.data())) << name << " " << at;
      }
      std::vector<uint16_t> half(n, 0x3c00);
      half[at] = 0x7bff;  // 65504
      for (const auto& [name, decode_fn] : f16_loops) {
        EXPECT_FALSE(decode_fn(half.data(), n, std::ldexp(1.0f, -120), back.data()))
            << name << " " << at;
        EXPECT_TRUE(std::isinf(back[at])) << name;
        EXPECT_TRUE(decode_fn(half.data(), n, std::ldexp(1.0f, -100), back.data()))
            << name << " " << at;
      }
    }
  }
}

TEST(Cast, SumBlocksIsRankOrderedFromPositiveZero) {
  // -0 + -0 would stay -0; the documented order starts from +0.
  const float blocks[4] = {-0.0f, 1e8f, -0.0f, -1e8f};
  float acc[2];
  sum_blocks(blocks, 2, 2, zfcFloat32, acc);
  EXPECT_EQ(f32_bits(acc[0]), 0u);
  EXPECT_EQ(acc[1], 0.0f);
  // In place over block 0.
  float inplace[3] = {1.0f, 2.0f, 3.0f};
  sum_blocks(inplace, 1, 3, zfcFloat32, inplace);
  EXPECT_EQ(inplace[2], 3.0f);
}

// The owners' sums write each row's first contribution from +0 instead of zero-filling and
// adding: the same bits as the zero fill, -0 included, for each wire type.
TEST(Cast, FirstWriteThenAddGivesTheBitsOfAZeroFillThenAdd) {
  constexpr size_t kDim = 37, kTargets = 5;
  for (zfcDataType_t type : {zfcFloat32, zfcFloat16, zfcBFloat16}) {
    const size_t bytes = float_type_bytes(type);
    // Two "ranks": the first holds targets 0, 2, 4, the second 0, 1, 2, 3 (first for 1 and 3).
    const std::vector<std::vector<int32_t>> targets = {{0, 2, 4}, {0, 1, 2, 3}};
    std::vector<float> filled(kTargets * kDim, 0.0f), first(kTargets * kDim, -1.0f);
    std::vector<uint8_t> touched(kTargets, 0);
    uint64_t seed = 3;
    for (const std::vector<int32_t>& t : targets) {
      std::vector<float> values(t.size() * kDim);
      for (size_t i = 0; i < values.size(); ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        values[i] = i % 7 == 0 ? -0.0f : static_cast<float>(static_cast<int64_t>(seed >> 40) -
                                                             (int64_t{1} << 23)) * 1e-3f;
      }
      std::vector<char> rows(values.size() * bytes);
      convert(values.data(), zfcFloat32, values.size(), 1.0f, rows.data(), type);
      scatter_add_rows(rows.data(), type, t.data(), t.size(), kDim, filled.data());
      scatter_rows_first_touch(rows.data(), type, t.data(), t.size(), kDim, first.data(),
                               touched.data());
    }
    EXPECT_EQ(touched, std::vector<uint8_t>(kTargets, 1));
    for (size_t i = 0; i < filled.size(); ++i) {
      ASSERT_EQ(f32_bits(first[i]), f32_bits(filled[i])) << "type " << type << " at " << i;
    }
  }
}

// A scatter into rows that are not zeroed first: the same bits as the fill and the adds,
// for a call in plain order, one past a sum block whose targets repeat (the block-ordered
// path), and targets no row reaches, whatever the destination held (NaN here); the same
// into rows that lie apart (scatter_rows_to_targets).
TEST(Cast, ScatterToZeroedRowsGivesTheBitsOfZeroFillThenAdd) {
  constexpr size_t kDim = 9, kTargets = 7;
  for (zfcDataType_t type : {zfcFloat32, zfcFloat16, zfcBFloat16}) {
    for (size_t n : {size_t{40}, size_t{ZFC_SUM_BLOCK_ROWS} * 2 + 77}) {
      std::vector<int32_t> pos(n);
      std::vector<float> values(n * kDim);
      // i (i + 3) mod 5 takes 0, 3 and 4 only: targets 1, 2, 5 and 6 get no row.
      for (size_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>((i * i + 3 * i) % 5);
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = i % 11 == 0 ? -0.0f : static_cast<float>(i % 17) * 0.37f - 2.0f;
      }
      std::vector<char> rows(values.size() * float_type_bytes(type));
      convert(values.data(), zfcFloat32, values.size(), 1.0f, rows.data(), type);
      std::vector<float> want(kTargets * kDim, 0.0f);
      std::vector<float> got(kTargets * kDim, std::numeric_limits<float>::quiet_NaN());
      scatter_add_rows(rows.data(), type, pos.data(), n, kDim, want.data());
      scatter_rows_to_zeroed(rows.data(), type, pos.data(), n, kDim, got.data(), kTargets);
      // The same into rows that lie apart, in reverse order with a gap after each.
      std::vector<float> apart(kTargets * (kDim + 3), std::numeric_limits<float>::quiet_NaN());
      std::vector<float*> targets(kTargets);
      for (size_t p = 0; p < kTargets; ++p) targets[p] = &apart[(kTargets - 1 - p) * (kDim + 3)];
      scatter_rows_to_targets(rows.data(), type, pos.data(), n, kDim, targets.data(), kTargets);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(f32_bits(got[i]), f32_bits(want[i])) << "type " << type << " n " << n
                                                        << " at " << i;
        ASSERT_EQ(f32_bits(targets[i / kDim][i % kDim]), f32_bits(want[i]))
            << "apart: type " << type << " n " << n << " at " << i;
      }
      for (size_t p = 0; p < kTargets; ++p) {  // the gaps are not written
        for (size_t g = kDim; g < kDim + 3; ++g) ASSERT_TRUE(std::isnan(apart[p * (kDim + 3) + g]));
      }
    }
  }
}

// The wire formats' table: one row per compression format, none for other numbers, the row
// size computed from it, and the rows of the formats of values only encoded and decoded as
// their element type (fp32 unscaled whatever the scale); the eight-bit ones are in
// test_eight_bit.cpp.
TEST(WireFormats, OneRowPerCompressionKind) {
  EXPECT_EQ(find_wire_format(-1), nullptr);
  EXPECT_EQ(find_wire_format(zfcCompressInt8 + 1), nullptr);
  EXPECT_EQ(find_wire_format(zfcCompressInt8Stochastic), nullptr);  // a kind, not a format
  const struct { zfcCompressionKind_t kind; const char* name; zfcDataType_t element; } want[] = {
      {zfcCompressNone, "none", zfcFloat32},
      {zfcCompressFp16, "fp16", zfcFloat16},
      {zfcCompressBf16, "bf16", zfcBFloat16}};
  const std::vector<float> row = {1.5f, -3.0f, 1024.0f};
  for (const auto& w : want) {
    const WireFormat* f = find_wire_format(w.kind);
    ASSERT_NE(f, nullptr);
    EXPECT_STREQ(f->name, w.name);
    EXPECT_EQ(f->element, w.element);
    EXPECT_EQ(f->row_bytes(3), 3 * float_type_bytes(w.element));
    EXPECT_EQ(wire_type(w.kind), w.element);
    std::vector<char> wire(f->row_bytes(3));
    std::vector<float> back(3);
    f->encode_rows(row.data(), 1, 3, 4.0f, wire.data());
    EXPECT_TRUE(f->decode_rows(wire.data(), 1, 3, 4.0f, back.data()));
    EXPECT_EQ(back, row) << w.name;  // these values survive every format
    std::vector<char> direct(wire.size());
    encode(row.data(), 3, w.element, w.kind == zfcCompressNone ? 1.0f : 4.0f, direct.data());
    EXPECT_EQ(direct, wire) << w.name;
  }
}

TEST(Cast, ConvertBetweenRowTypes) {
  const std::vector<float> v = {1.5f, -2.0f, 3.0e-5f};
  std::vector<uint16_t> h(3), b(3);
  std::vector<float> f(3);
  convert(v.data(), zfcFloat32, 3, 1.0f, h.data(), zfcFloat16);
  convert(h.data(), zfcFloat16, 3, 2.0f, b.data(), zfcBFloat16);
  convert(b.data(), zfcBFloat16, 3, 1.0f, f.data(), zfcFloat32);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(f[i], test::round_bf16(test::round_fp16(v[i]) * 2.0f));
  }
}

}  // namespace
}  // namespace kernels
}  // namespace zfc
