#include "kernels/cast_x86.hpp"

#include "kernels/cast.hpp"

#include <cmath>

#if defined(__x86_64__) || defined(__i386__)
// GCC 12 warns inside its own AVX-512 headers that _mm512_undefined_* values "may be used
// uninitialized" (GCC bug 105593); the intrinsics below never read them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <cpuid.h>
#include <immintrin.h>
#define ZFC_X86 1
#endif

namespace zfc {
namespace kernels {
namespace x86 {

#ifdef ZFC_X86

bool has_f16c() {
  // Not __builtin_cpu_supports("f16c"): clang 14 does not know that name. CPUID leaf 1 has
  // it (ECX bit 29); "avx" also covers the OS saving the YMM registers.
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__builtin_cpu_supports("avx") || __get_cpuid(1, &a, &b, &c, &d) == 0) return false;
    return (c & bit_F16C) != 0;
  }();
  return yes;
}

__attribute__((target("avx,f16c"))) void encode_f16(const float* src, size_t n, float scale,
                                                     uint16_t* dst) {
  const __m256 s = _mm256_set1_ps(scale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src + i), s);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) dst[i] = f32_to_f16(src[i] * scale);
}

__attribute__((target("avx,f16c"))) bool decode_f16(const uint16_t* src, size_t n, float scale,
                                                     float* dst) {
  const __m256 s = _mm256_set1_ps(scale);
  const float inv = exact_reciprocal(scale);
  const bool use_mul = inv != 0.0f;
  const __m256 r = _mm256_set1_ps(inv);
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 inf = _mm256_set1_ps(__builtin_inff());
  __m256 special = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v =
        _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    const __m256 out = use_mul ? _mm256_mul_ps(v, r) : _mm256_div_ps(v, s);
    _mm256_storeu_ps(dst + i, out);
    // What was written is inf or NaN: |out| not below inf (NaN compares unordered).
    special = _mm256_or_ps(special,
                           _mm256_cmp_ps(_mm256_and_ps(out, magnitude), inf, _CMP_NLT_UQ));
  }
  bool finite = _mm256_movemask_ps(special) == 0;
  for (; i < n; ++i) {
    dst[i] = f16_to_f32(src[i]) / scale;
    finite &= std::isfinite(dst[i]);
  }
  return finite;
}

__attribute__((target("avx,f16c"))) void accumulate_f16(const uint16_t* src, size_t n,
                                                         bool first, float* acc) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v =
        _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    const __m256 a = first ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + i);
    _mm256_storeu_ps(acc + i, _mm256_add_ps(a, v));
  }
  for (; i < n; ++i) acc[i] = (first ? 0.0f : acc[i]) + f16_to_f32(src[i]);
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

namespace {

// Eight fp32 values to bf16 in 32-bit lanes (the scalar f32_to_bf16, lane by lane).
__attribute__((target("avx2"))) inline __m256i bf16_lanes(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i magnitude = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

__attribute__((target("avx2"))) inline __m256 bf16_to_ps(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

}  // namespace

__attribute__((target("avx2"))) void encode_bf16(const float* src, size_t n, float scale,
                                                 uint16_t* dst) {
  const __m256 s = _mm256_set1_ps(scale);
  const bool unscaled = scale == 1.0f;  // bf16's usual case: skip the multiplication
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 v[4];
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(src + i + 8 * k);
      if (!unscaled) v[k] = _mm256_mul_ps(v[k], s);
    }
    // packus works within 128-bit lanes; the permute puts the four quarters back in order.
    const __m256i a = _mm256_packus_epi32(bf16_lanes(v[0]), bf16_lanes(v[1]));
    const __m256i b = _mm256_packus_epi32(bf16_lanes(v[2]), bf16_lanes(v[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_permute4x64_epi64(a, 0xd8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 16),
                        _mm256_permute4x64_epi64(b, 0xd8));
  }
  for (; i < n; ++i) dst[i] = f32_to_bf16(src[i] * scale);
}

__attribute__((target("avx2"))) bool decode_bf16(const uint16_t* src, size_t n, float scale,
                                                 float* dst) {
  const __m256 s = _mm256_set1_ps(scale);
  const float inv = exact_reciprocal(scale);
  const bool use_mul = inv != 0.0f;
  const __m256 r = _mm256_set1_ps(inv);
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 inf = _mm256_set1_ps(__builtin_inff());
  __m256 special = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = bf16_to_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    const __m256 out = use_mul ? _mm256_mul_ps(v, r) : _mm256_div_ps(v, s);
    _mm256_storeu_ps(dst + i, out);
    special = _mm256_or_ps(special,
                           _mm256_cmp_ps(_mm256_and_ps(out, magnitude), inf, _CMP_NLT_UQ));
  }
  bool finite = _mm256_movemask_ps(special) == 0;
  for (; i < n; ++i) {
    dst[i] = bf16_to_f32(src[i]) / scale;
    finite &= std::isfinite(dst[i]);
  }
  return finite;
}

__attribute__((target("avx2"))) void accumulate_bf16(const uint16_t* src, size_t n,
                                                     bool first, float* acc) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = bf16_to_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    const __m256 a = first ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + i);
    _mm256_storeu_ps(acc + i, _mm256_add_ps(a, v));
  }
  for (; i < n; ++i) acc[i] = (first ? 0.0f : acc[i]) + bf16_to_f32(src[i]);
}

bool has_avx512bw() {
  static const bool yes = __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return yes;
}

#define ZFC_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

ZFC_TARGET_AVX512 void encode_bf16_avx512(const float* src, size_t n, float scale,
                                          uint16_t* dst) {
  const __m512 s = _mm512_set1_ps(scale);
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i half_ulp = _mm512_set1_epi32(0x7fff);
  const __m512i magnitude_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i inf = _mm512_set1_epi32(0x7f800000);
  const __m512i quiet = _mm512_set1_epi32(0x40);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_castps_si512(_mm512_mul_ps(_mm512_loadu_ps(src + i), s));
    const __m512i hi = _mm512_srli_epi32(u, 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, magnitude_mask), inf);
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(u, _mm512_add_epi32(half_ulp, _mm512_and_si512(hi, one))), 16);
    const __m512i out = _mm512_mask_or_epi32(rounded, nan, hi, quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_cvtepi32_epi16(out));
  }
  for (; i < n; ++i) dst[i] = f32_to_bf16(src[i] * scale);
}

ZFC_TARGET_AVX512 bool decode_bf16_avx512(const uint16_t* src, size_t n, float scale,
                                          float* dst) {
  const __m512 s = _mm512_set1_ps(scale);
  const float inv = exact_reciprocal(scale);
  const bool use_mul = inv != 0.0f;
  const __m512 r = _mm512_set1_ps(inv);
  const __m512 inf = _mm512_set1_ps(__builtin_inff());
  __mmask16 special = 0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m512 v = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    const __m512 out = use_mul ? _mm512_mul_ps(v, r) : _mm512_div_ps(v, s);
    _mm512_storeu_ps(dst + i, out);
    special |= _mm512_cmp_ps_mask(_mm512_abs_ps(out), inf, _CMP_NLT_UQ);
  }
  bool finite = special == 0;
  for (; i < n; ++i) {
    dst[i] = bf16_to_f32(src[i]) / scale;
    finite &= std::isfinite(dst[i]);
  }
  return finite;
}

#else

bool has_f16c() { return false; }
bool has_avx512bw() { return false; }
void encode_bf16_avx512(const float*, size_t, float, uint16_t*) {}
bool decode_bf16_avx512(const uint16_t*, size_t, float, float*) { return false; }
bool has_avx2() { return false; }
void encode_bf16(const float*, size_t, float, uint16_t*) {}
bool decode_bf16(const uint16_t*, size_t, float, float*) { return false; }
void accumulate_bf16(const uint16_t*, size_t, bool, float*) {}
void encode_f16(const float*, size_t, float, uint16_t*) {}
bool decode_f16(const uint16_t*, size_t, float, float*) { return false; }
void accumulate_f16(const uint16_t*, size_t, bool, float*) {}

#endif

}  // namespace x86
}  // namespace kernels
}  // namespace zfc
