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

ZFC_AVX2 void encode_int8_avx2(const float* v, size_t n, float inverse, uint8_t* out) {
  const __m256 f = _mm256_set1_ps(inverse);
  const __m256i hi = _mm256_set1_epi32(127), lo = _mm256_set1_epi32(-127);
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    // cvtps rounds to nearest even (the default rounding), as the scalar's 1.5 * 2^23 does
    // for these magnitudes (at most 127 and a rounding).
    __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(v + k), f));
    q = _mm256_max_epi32(_mm256_min_epi32(q, hi), lo);
    // Two's complement bytes: the low byte of each lane.
    store_bytes(_mm256_and_si256(q, _mm256_set1_epi32(0xff)), out + k);
  }
  for (; k < n; ++k) out[k] = static_cast<uint8_t>(f32_to_int8(v[k] * inverse, false, 0));
}

ZFC_AVX2 void encode_fp8_avx2(const float* v, size_t n, float inverse, const Fp8Spec& s,
                              uint8_t* out) {
  const __m256 f = _mm256_set1_ps(inverse);
  const uint32_t shift = 23u - s.mant_bits;
  const __m256i mask = _mm256_set1_epi32(0x7fffffff);
  const __m256i max_bits = _mm256_set1_epi32(static_cast<int>(f32_bits(fp8_max_value(s))));
  const __m256i max_code = _mm256_set1_epi32(static_cast<int>(s.max_code));
  const __m256i min_normal = _mm256_set1_epi32(static_cast<int>((128u - s.bias) << 23));
  const __m256i half = _mm256_set1_epi32(static_cast<int>((1u << (shift - 1u)) - 1u));
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i rebias = _mm256_set1_epi32(static_cast<int>((127u - s.bias) << s.mant_bits));
  const __m256 sub_scale = _mm256_set1_ps(f32_from_bits((127u + s.bias - 1u + s.mant_bits) << 23));
  const __m128i shift_count = _mm_cvtsi32_si128(static_cast<int>(shift));
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256i u = _mm256_castps_si256(_mm256_mul_ps(_mm256_loadu_ps(v + k), f));
    const __m256i a = _mm256_and_si256(u, mask);
    // Normal: round the mantissa to nearest even, rebias, at most the largest code.
    const __m256i odd = _mm256_and_si256(_mm256_srl_epi32(a, shift_count), one);
    __m256i normal = _mm256_srl_epi32(_mm256_add_epi32(_mm256_add_epi32(a, half), odd),
                                      shift_count);
    normal = _mm256_min_epu32(_mm256_sub_epi32(normal, rebias), max_code);
    // Subnormal: the multiple of the least step, to nearest even.
    const __m256i sub =
        _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(a), sub_scale));
    const __m256i is_normal = _mm256_cmpgt_epi32(a, _mm256_sub_epi32(min_normal, one));
    __m256i code = _mm256_blendv_epi8(sub, normal, is_normal);
    const __m256i saturated = _mm256_cmpgt_epi32(a, _mm256_sub_epi32(max_bits, one));
    code = _mm256_blendv_epi8(code, max_code, saturated);
    const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(u, 24), _mm256_set1_epi32(0x80));
    store_bytes(_mm256_or_si256(code, sign), out + k);
  }
  for (; k < n; ++k) out[k] = f32_to_fp8(v[k] * inverse, s, false, 0);
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
      // fp8_to_f32, lane by lane: normal codes by their bits, subnormal ones by the least
      // step, codes past the largest finite one (never encoded) as NaN.
      const __m256i c = _mm256_cvtepu8_epi32(bytes);
      const __m256i mag = _mm256_and_si256(c, _mm256_set1_epi32(0x7f));
      const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(c, _mm256_set1_epi32(0x80)), 24);
      const __m256i exp = _mm256_srli_epi32(mag, static_cast<int>(s->mant_bits));
      const __m256i normal = _mm256_add_epi32(
          _mm256_slli_epi32(mag, static_cast<int>(23u - s->mant_bits)),
          _mm256_set1_epi32(static_cast<int>((127u - s->bias) << 23)));
      const __m256i sub = _mm256_castps_si256(_mm256_mul_ps(
          _mm256_cvtepi32_ps(mag),
          _mm256_set1_ps(f32_from_bits((128u - s->bias - s->mant_bits) << 23))));
      __m256i bits = _mm256_blendv_epi8(normal, sub, _mm256_cmpeq_epi32(exp, _mm256_setzero_si256()));
      const __m256i past = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(static_cast<int>(s->max_code)));
      bits = _mm256_blendv_epi8(bits, _mm256_set1_epi32(0x7fc00000), past);
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
bool decode_eight_bit_avx2(const uint8_t*, size_t, float, const Fp8Spec*, bool, bool, float*) {
  return false;
}

#endif

}  // namespace x86
}  // namespace kernels
}  // namespace zfc
