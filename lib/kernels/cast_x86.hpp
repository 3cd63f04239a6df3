// fp16 and bf16 conversion loops on the x86 F16C, AVX2 and AVX-512 instructions, chosen at
// run time when the CPU has them. They round exactly like the portable code in cast.hpp (IEEE
// round to nearest even), so a mixed cluster still agrees bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zfc {
namespace kernels {
namespace x86 {

// True when the F16C loops below may be called.
bool has_f16c();
// True when the AVX2 bf16 loops below may be called.
bool has_avx2();
// True when the AVX-512 (F, BW and VL) bf16 loops below may be called.
bool has_avx512bw();

void encode_f16(const float* src, size_t n, float scale, uint16_t* dst);
// Returns true when every value written to dst is finite (with a scale below 1 a finite input
// can divide past fp32's range, so the output is what is checked).
bool decode_f16(const uint16_t* src, size_t n, float scale, float* dst);
// acc = (first ? +0 : acc) + fp32(src)
void accumulate_f16(const uint16_t* src, size_t n, bool first, float* acc);

// The same contracts for bf16 (round to nearest even; NaN stays a quiet NaN).
void encode_bf16(const float* src, size_t n, float scale, uint16_t* dst);
bool decode_bf16(const uint16_t* src, size_t n, float scale, float* dst);
void accumulate_bf16(const uint16_t* src, size_t n, bool first, float* acc);
// The same with 16 lanes: twice the values per instruction where a value fits in cache.
void encode_bf16_avx512(const float* src, size_t n, float scale, uint16_t* dst);
bool decode_bf16_avx512(const uint16_t* src, size_t n, float scale, float* dst);

}  // namespace x86
}  // namespace kernels
}  // namespace zfc
