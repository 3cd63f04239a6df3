#include "kernels/eight_bit_x86.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ZFC_X86 1
#endif

namespace zfc {
namespace kernels {
namespace x86 {

#ifdef ZFC_X86

#define ZFC_AVX2 __attribute__((target("avx2")))

ZFC_AVX2 uint32_t largest_magnitude_bits_avx2(const float* v, size_t n) {
  const __m256i mask = _mm256_set1_epi32(0x7fffffff);
  __m256i most = _mm256_setzero_si256();
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256i a = _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + k)),
                                       mask);
    most = _mm256_max_epu32(most, a);
  }
  alignas(32) uint32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), most);
  uint32_t m = 0;
  for (uint32_t l : lanes) m = l > m ? l : m;
  for (; k < n; ++k) {
    const uint32_t a = f32_bits(v[k]) & 0x7fffffffu;
    m = a > m ? a : m;
  }
  return m;
}

namespace {

// Eight 32-bit lanes of byte values to 8 bytes at out.
ZFC_AVX2 inline void store_bytes(__m256i lanes, uint8_t* out) {
  const __m256i w16 = _mm256_packus_epi32(lanes, lanes);  // per 128-bit half
  const __m256i w8 = _mm256_packus_epi16(w16, w16);
  const uint32_t lo = static_cast<uint32_t>(_mm256_extract_epi32(w8, 0));
  const uint32_t hi = static_cast<uint32_t>(_mm256_extract_epi32(w8, 4));
  const uint64_t both = static_cast<uint64_t>(lo) | static_cast<uint64_t>(hi) << 32;
  __builtin_memcpy(out, &both, 8);
}

}  // namespace

namespace {

// Four vectors of eight byte values in 32-bit lanes to 32 bytes at out, in order.
ZFC_AVX2 inline void store_32_bytes(__m256i q0, __m256i q1, __m256i q2, __m256i q3,
                                    uint8_t* out) {
  // The packs work within each 128-bit half: dwords q0a q1a q2a q3a | q0b q1b q2b q3b.
  const __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(q0, q1),
                                            _mm256_packus_epi32(q2, q3));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

// A row's values times `inverse` to byte codes in 32-bit lanes (`codes`: eight at a time),
// 32 values per store, then eight, then the scalar conversion for the rest.
template <class Codes, class Scalar>
ZFC_AVX2 inline void encode_row(const float* v, size_t n, float inverse, uint8_t* out,
                                Codes codes, Scalar scalar) {
  const __m256 f = _mm256_set1_ps(inverse);
  const auto at = [&](size_t k) ZFC_AVX2 { return codes(_mm256_mul_ps(_mm256_loadu_ps(v + k), f)); };
  size_t k = 0;
  for (; k + 32 <= n; k += 32) store_32_bytes(at(k), at(k + 8), at(k + 16), at(k + 24), out + k);
  for (; k + 8 <= n; k += 8) store_bytes(at(k), out + k);
  for (; k < n; ++k) out[k] = scalar(v[k] * inverse);
}

}  // namespace

ZFC_AVX2 void encode_int8_avx2(const float* v, size_t n, float inverse, uint8_t* out) {
  const __m256i hi = _mm256_set1_epi32(127), lo = _mm256_set1_epi32(-127);
  encode_row(
      v, n, inverse, out,
      [&](__m256 y) ZFC_AVX2 {
        // cvtps rounds to nearest even (the default rounding), as the scalar's 1.5 * 2^23
        // does for these magnitudes (at most 127 and a rounding); two's complement bytes.
        const __m256i q = _mm256_max_epi32(_mm256_min_epi32(_mm256_cvtps_epi32(y), hi), lo);
        return _mm256_and_si256(q, _mm256_set1_epi32(0xff));
      },
      [](float y) { return static_cast<uint8_t>(f32_to_int8(y, false, 0)); });
}

ZFC_AVX2 void encode_fp8_avx2(const float* v, size_t n, float inverse, const Fp8Spec& s,
                              uint8_t* out) {
  const uint32_t shift = 23u - s.mant_bits;
  const __m256i mask = _mm256_set1_epi32(0x7fffffff);
  const __m256i max_bits = _mm256_set1_epi32(static_cast<int>(f32_bits(fp8_max_value(s))));
  const __m256i below_normal =
      _mm256_set1_epi32(static_cast<int>(((128u - s.bias) << 23) - 1u));
  const __m256i half = _mm256_set1_epi32(static_cast<int>((1u << (shift - 1u)) - 1u));
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i rebias = _mm256_set1_epi32(static_cast<int>((127u - s.bias) << s.mant_bits));
  const __m256 sub_scale = _mm256_set1_ps(f32_from_bits((127u + s.bias - 1u + s.mant_bits) << 23));
  const __m128i shift_count = _mm_cvtsi32_si128(static_cast<int>(shift));
  encode_row(
      v, n, inverse, out,
      [&](__m256 y) ZFC_AVX2 {
        const __m256i u = _mm256_castps_si256(y);
        // Saturated first: the largest finite value is a code, so rounding a magnitude at
        // most its bits gives at most its code.
        const __m256i a = _mm256_min_epu32(_mm256_and_si256(u, mask), max_bits);
        // Normal: round the mantissa to nearest even, rebias.
        const __m256i odd = _mm256_and_si256(_mm256_srl_epi32(a, shift_count), one);
        const __m256i normal = _mm256_sub_epi32(
            _mm256_srl_epi32(_mm256_add_epi32(_mm256_add_epi32(a, half), odd), shift_count),
            rebias);
        // Subnormal: the multiple of the least step, to nearest even.
        const __m256i sub = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(a), sub_scale));
        const __m256i code = _mm256_blendv_epi8(sub, normal, _mm256_cmpgt_epi32(a, below_normal));
        const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(u, 24), _mm256_set1_epi32(0x80));
        return _mm256_or_si256(code, sign);
      },
      [&](float y) { return f32_to_fp8(y, s, false, 0); });
}

namespace {

// hi and lo 32 bits of a * m, lane by lane (m the same in every lane).
ZFC_AVX2 inline __m256i mulhilo(__m256i a, __m256i m, __m256i* lo) {
  const __m256i even = _mm256_mul_epu32(a, m);                        // lanes 0, 2, 4, 6
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);  // lanes 1, 3, 5, 7
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xaa);
  return _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xaa);
}

// Philox4x32-10 (host_device/philox.hpp) of eight counters at once, one per lane.
ZFC_AVX2 inline void philox8(__m256i c[4], uint64_t key) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int round = 0; round < 10; ++round) {
    __m256i lo0, lo1;
    const __m256i hi0 = mulhilo(c[0], m0, &lo0);
    const __m256i hi1 = mulhilo(c[2], m1, &lo1);
    const __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c[1]),
                                        _mm256_set1_epi32(static_cast<int>(k0)));
    const __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c[3]),
                                        _mm256_set1_epi32(static_cast<int>(k1)));
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

// Eight values (a group of eight columns) rounded stochastically with their draws r.
ZFC_AVX2 inline __m256i stochastic_codes(__m256 y, __m256i r, const Fp8Spec* s) {
  const __m256 u = _mm256_mul_ps(_mm256_cvtepi32_ps(r), _mm256_set1_ps(1.0f / 65536.0f));
  if (s == nullptr) {  // f32_to_int8: floor(y + u)
    __m256i q = _mm256_cvttps_epi32(_mm256_floor_ps(_mm256_add_ps(y, u)));
    q = _mm256_max_epi32(_mm256_min_epi32(q, _mm256_set1_epi32(127)), _mm256_set1_epi32(-127));
    return _mm256_and_si256(q, _mm256_set1_epi32(0xff));
  }
  const uint32_t shift = 23u - s->mant_bits;
  const __m256i u32 = _mm256_castps_si256(y);
  const __m256i a = _mm256_and_si256(u32, _mm256_set1_epi32(0x7fffffff));
  const __m256i max_code = _mm256_set1_epi32(static_cast<int>(s->max_code));
  const __m128i sc = _mm_cvtsi32_si128(static_cast<int>(shift));
  const __m128i rs = _mm_cvtsi32_si128(static_cast<int>(shift - 16u));
  __m256i normal = _mm256_srl_epi32(_mm256_add_epi32(a, _mm256_sll_epi32(r, rs)), sc);
  normal = _mm256_min_epu32(
      _mm256_sub_epi32(normal, _mm256_set1_epi32(static_cast<int>((127u - s->bias) << s->mant_bits))),
      max_code);
  // subnormal_stochastic: |y| over the least step with 16 fractional bits, plus r, floored
  // (a shift count past 31 gives 0, as the scalar's).
  const __m256i m = _mm256_or_si256(_mm256_and_si256(a, _mm256_set1_epi32(0x7fffff)),
                                    _mm256_set1_epi32(0x800000));
  const __m256i count = _mm256_sub_epi32(
      _mm256_set1_epi32(static_cast<int>(135u - s->bias - s->mant_bits)), _mm256_srli_epi32(a, 23));
  const __m256i sub = _mm256_srli_epi32(_mm256_add_epi32(_mm256_srlv_epi32(m, count), r), 16);
  const __m256i min_normal = _mm256_set1_epi32(static_cast<int>(((128u - s->bias) << 23) - 1u));
  __m256i code = _mm256_blendv_epi8(sub, normal, _mm256_cmpgt_epi32(a, min_normal));
  const __m256i max_bits = _mm256_set1_epi32(static_cast<int>(f32_bits(fp8_max_value(*s)) - 1u));
  code = _mm256_blendv_epi8(code, max_code, _mm256_cmpgt_epi32(a, max_bits));
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(u32, 24), _mm256_set1_epi32(0x80));
  return _mm256_or_si256(code, sign);
}

}  // namespace

ZFC_AVX2 void encode_row_stochastic_avx2(const float* v, size_t n, float inverse,
                                         const Fp8Spec* s, const RoundingKey& key, uint64_t row,
                                         uint8_t* out) {
  const __m256 f = _mm256_set1_ps(inverse);
  const size_t groups = (n + 7) / 8;
  alignas(32) uint32_t w[4][8];
  for (size_t g0 = 0; g0 < groups; g0 += 8) {
    // The Philox blocks of groups g0 .. g0 + 7, as rounding_block makes them.
    __m256i c[4] = {
        _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(g0)),
                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),
        _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(row))),
        _mm256_set1_epi32(static_cast<int>(key.rank_hop ^
                                           static_cast<uint32_t>(row >> 32) * 0x9E3779B9u)),
        _mm256_set1_epi32(static_cast<int>(key.step))};
    philox8(c, key.seed);
    // Group l's four words side by side (a 4 x 4 transpose in each half): its eight 16-bit
    // draws in column order, as rounding_bits takes them.
    const __m256i t0 = _mm256_unpacklo_epi32(c[0], c[1]), t1 = _mm256_unpackhi_epi32(c[0], c[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(c[2], c[3]), t3 = _mm256_unpackhi_epi32(c[2], c[3]);
    const __m256i by_group[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                                 _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
    const bool whole = g0 + 8 <= groups && (g0 + 8) * 8 <= n;
    if (whole) {
      for (size_t l = 0; l < 8; ++l) {
        const __m256i g = by_group[l % 4];
        const __m128i words = l < 4 ? _mm256_castsi256_si128(g) : _mm256_extracti128_si256(g, 1);
        const size_t k = (g0 + l) * 8;
        store_bytes(stochastic_codes(_mm256_mul_ps(_mm256_loadu_ps(v + k), f),
                                     _mm256_cvtepu16_epi32(words), s),
                    out + k);
      }
      continue;
    }
    for (int j = 0; j < 4; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(w[j]), c[j]);
    for (size_t l = 0; l < 8 && g0 + l < groups; ++l) {
      const size_t k = (g0 + l) * 8;
      const Philox4 block{{w[0][l], w[1][l], w[2][l], w[3][l]}};
      for (size_t c2 = k; c2 < n && c2 < k + 8; ++c2) {
        const uint32_t r = rounding_bits(block, static_cast<uint32_t>(c2 - k));
        out[c2] = s == nullptr ? static_cast<uint8_t>(f32_to_int8(v[c2] * inverse, true, r))
                               : f32_to_fp8(v[c2] * inverse, *s, true, r);
      }
    }
  }
}

ZFC_AVX2 bool decode_eight_bit_avx2(const uint8_t* in, size_t n, float scale, const Fp8Spec* s,
                                    bool add, bool from_zero, float* out) {
  const __m256 sc = _mm256_set1_ps(scale);
  const __m256i exp_mask = _mm256_set1_epi32(0x7f800000);
  __m256i bad = _mm256_setzero_si256();
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + k));
    __m256 value;
    if (s == nullptr) {
      value = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
    } else {
      // fp8_to_f32, lane by lane: the code's exponent and mantissa placed as an fp32's, then
      // times 2^(127 - bias), which is exact for every finite code (a subnormal code is an
      // fp32 subnormal there); codes past the largest finite one (never encoded) as NaN, and
      // e5m2's infinity.
      const __m256i c = _mm256_cvtepu8_epi32(bytes);
      const __m256i mag = _mm256_and_si256(c, _mm256_set1_epi32(0x7f));
      const __m256i placed = _mm256_slli_epi32(mag, static_cast<int>(23u - s->mant_bits));
      __m256i bits = _mm256_castps_si256(_mm256_mul_ps(
          _mm256_castsi256_ps(placed), _mm256_set1_ps(f32_from_bits((254u - s->bias) << 23))));
      const __m256i past = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(static_cast<int>(s->max_code)));
      bits = _mm256_blendv_epi8(bits, _mm256_set1_epi32(0x7fc00000), past);
      if (s->mant_bits == 2) {
        bits = _mm256_blendv_epi8(bits, _mm256_set1_epi32(0x7f800000),
                                  _mm256_cmpeq_epi32(mag, _mm256_set1_epi32(0x7c)));
      }
      const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(c, _mm256_set1_epi32(0x80)), 24);
      value = _mm256_castsi256_ps(_mm256_or_si256(bits, sign));
    }
    value = _mm256_mul_ps(value, sc);
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(
                                   _mm256_and_si256(_mm256_castps_si256(value), exp_mask), exp_mask));
    if (add) {
      const __m256 base = from_zero ? _mm256_setzero_ps() : _mm256_loadu_ps(out + k);
      value = _mm256_add_ps(base, value);
    }
    _mm256_storeu_ps(out + k, value);
  }
  bool finite = _mm256_testz_si256(bad, bad) != 0;
  for (; k < n; ++k) {
    const float v = (s == nullptr ? static_cast<float>(static_cast<int8_t>(in[k]))
                                  : fp8_to_f32(in[k], *s)) * scale;
    finite &= (f32_bits(v) & 0x7f800000u) != 0x7f800000u;
    out[k] = add ? (from_zero ? 0.0f : out[k]) + v : v;
  }
  return finite;
}

#else

uint32_t largest_magnitude_bits_avx2(const float*, size_t) { return 0; }
void encode_int8_avx2(const float*, size_t, float, uint8_t*) {}
void encode_fp8_avx2(const float*, size_t, float, const Fp8Spec&, uint8_t*) {}
void encode_row_stochastic_avx2(const float*, size_t, float, const Fp8Spec*, const RoundingKey&,
                                uint64_t, uint8_t*) {}
bool decode_eight_bit_avx2(const uint8_t*, size_t, float, const Fp8Spec*, bool, bool, float*) {
  return false;
}

#endif

}  // namespace x86
}  // namespace kernels
}  // namespace zfc
