#include "kernels/cast_x86.hpp"

#include "kernels/cast.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ZFC_X86 1
#endif

namespace zfc {
namespace kernels {
namespace x86 {

#ifdef ZFC_X86

bool has_f16c() {
  static const bool yes = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
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
  const __m128i exp_mask = _mm_set1_epi16(0x7c00);
  __m128i special = _mm_setzero_si128();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    special = _mm_or_si128(special, _mm_cmpeq_epi16(_mm_and_si128(h, exp_mask), exp_mask));
    _mm256_storeu_ps(dst + i, _mm256_div_ps(_mm256_cvtph_ps(h), s));
  }
  bool finite = _mm_movemask_epi8(special) == 0;
  for (; i < n; ++i) {
    finite &= (src[i] & 0x7c00u) != 0x7c00u;
    dst[i] = f16_to_f32(src[i]) / scale;
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

#else

bool has_f16c() { return false; }
void encode_f16(const float*, size_t, float, uint16_t*) {}
bool decode_f16(const uint16_t*, size_t, float, float*) { return false; }
void accumulate_f16(const uint16_t*, size_t, bool, float*) {}

#endif

}  // namespace x86
}  // namespace kernels
}  // namespace zfc
