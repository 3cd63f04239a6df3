// fp16 conversion loops on the x86 F16C instructions, chosen at run time when the CPU has
// them. They round exactly like the portable code in cast.hpp (IEEE round to nearest even),
// so a mixed cluster still agrees bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zfc {
namespace kernels {
namespace x86 {

// True when the F16C loops below may be called.
bool has_f16c();

void encode_f16(const float* src, size_t n, float scale, uint16_t* dst);
// Returns true when no input is inf or NaN.
bool decode_f16(const uint16_t* src, size_t n, float scale, float* dst);
// acc = (first ? +0 : acc) + fp32(src)
void accumulate_f16(const uint16_t* src, size_t n, bool first, float* acc);

}  // namespace x86
}  // namespace kernels
}  // namespace zfc
