#include "kernels/cast.hpp"

#include <cmath>
#include <cstdint>

#include "kernels/cast_x86.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
namespace kernels {

size_t float_type_bytes(zfcDataType_t type) {
  switch (type) {
    case zfcFloat32: return 4;
    case zfcFloat16:
    case zfcBFloat16: return 2;
    default: return 0;
  }
}

zfcDataType_t wire_type(zfcCompressionKind_t kind) { return wire_format(kind).element; }

void encode(const float* src, size_t n, zfcDataType_t wire, float scale, void* dst) {
  if (wire == zfcFloat32) {
    if (dst != src && n != 0) std::memcpy(dst, src, n * sizeof(float));
    return;
  }
  uint16_t* out = static_cast<uint16_t*>(dst);
  if (wire == zfcFloat16) {
    if (x86::has_f16c()) return x86::encode_f16(src, n, scale, out);
    for (size_t i = 0; i < n; ++i) out[i] = f32_to_f16(src[i] * scale);
  } else {
    if (x86::has_avx512bw()) return x86::encode_bf16_avx512(src, n, scale, out);
    if (x86::has_avx2()) return x86::encode_bf16(src, n, scale, out);
    for (size_t i = 0; i < n; ++i) out[i] = f32_to_bf16(src[i] * scale);
  }
}

void encode_stochastic(const float* src, size_t rows, size_t dim, zfcDataType_t wire,
                       float scale, const Rounding& r, void* dst) {
  const RoundingKey key = r.key();
  uint16_t* out = static_cast<uint16_t*>(dst);
  for (size_t i = 0; i < rows; ++i) {
    const uint64_t row = r.rows.at(i);
    const float* v = src + i * dim;
    uint16_t* o = out + i * dim;
    for (size_t k0 = 0; k0 < dim; k0 += 8) {
      const Philox4 bits = rounding_block(key, row, static_cast<uint32_t>(k0 / 8));
      const size_t end = k0 + 8 < dim ? k0 + 8 : dim;
      for (size_t k = k0; k < end; ++k) {
        const uint32_t b = rounding_bits(bits, static_cast<uint32_t>(k - k0));
        o[k] = wire == zfcFloat16 ? f32_to_f16_stochastic(v[k] * scale, b)
                                  : f32_to_bf16_stochastic(v[k] * scale, b);
      }
    }
  }
}

void encode_stochastic_span(const float* src, size_t n, size_t first, size_t row_values,
                            zfcDataType_t wire, float scale, const Rounding& r, void* dst) {
  const RoundingKey key = r.key();
  uint16_t* out = static_cast<uint16_t*>(dst);
  Philox4 bits{};
  uint64_t block = UINT64_MAX;  // (row, column / 8) of `bits`, as one number
  for (size_t i = 0; i < n; ++i) {
    const size_t v = first + i, row = v / row_values, col = v % row_values;
    const uint64_t at = static_cast<uint64_t>(row) * ((row_values + 7) / 8) + col / 8;
    if (at != block) {
      bits = rounding_block(key, r.rows.at(row), static_cast<uint32_t>(col / 8));
      block = at;
    }
    const uint32_t b = rounding_bits(bits, static_cast<uint32_t>(col % 8));
    out[i] = wire == zfcFloat16 ? f32_to_f16_stochastic(src[i] * scale, b)
                                : f32_to_bf16_stochastic(src[i] * scale, b);
  }
}

bool decode(const void* src, size_t n, zfcDataType_t wire, float scale, float* dst) {
  if (wire == zfcFloat32) {  // the copy and the finite test in one pass over the values
    const float* in = static_cast<const float*>(src);
    uint32_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const float v = in[i];
      dst[i] = v;
      bad |= static_cast<uint32_t>((f32_bits(v) & 0x7f800000u) == 0x7f800000u);
    }
    return bad == 0;
  }
  // Every loop flags what it wrote, not the wire: below a scale of 1 a finite wire value can
  // divide past fp32's range (bf16's 2^125 at scale 1/8 is 2^128).
  const uint16_t* in = static_cast<const uint16_t*>(src);
  bool finite = true;
  if (wire == zfcFloat16) {
    if (x86::has_f16c()) return x86::decode_f16(in, n, scale, dst);
    for (size_t i = 0; i < n; ++i) {
      dst[i] = f16_to_f32(in[i]) / scale;
      finite &= std::isfinite(dst[i]);
    }
  } else {
    if (x86::has_avx512bw()) return x86::decode_bf16_avx512(in, n, scale, dst);
    if (x86::has_avx2()) return x86::decode_bf16(in, n, scale, dst);
    for (size_t i = 0; i < n; ++i) {
      dst[i] = bf16_to_f32(in[i]) / scale;
      finite &= std::isfinite(dst[i]);
    }
  }
  return finite;
}

void sum_blocks(const void* blocks, int nblocks, size_t n, zfcDataType_t wire, float* acc) {
  // Block 0 is added to +0 in the same pass that initialises acc, so acc may alias block 0.
  for (int b = 0; b < nblocks; ++b) {
    const size_t off = static_cast<size_t>(b) * n;
    if (wire == zfcFloat32) {
      const float* in = static_cast<const float*>(blocks) + off;
      if (b == 0) {
        for (size_t i = 0; i < n; ++i) acc[i] = 0.0f + in[i];
      } else {
        for (size_t i = 0; i < n; ++i) acc[i] += in[i];
      }
    } else if (wire == zfcFloat16 && x86::has_f16c()) {
      x86::accumulate_f16(static_cast<const uint16_t*>(blocks) + off, n, b == 0, acc);
    } else if (wire == zfcBFloat16 && x86::has_avx2()) {
      x86::accumulate_bf16(static_cast<const uint16_t*>(blocks) + off, n, b == 0, acc);
    } else {
      const uint16_t* in = static_cast<const uint16_t*>(blocks) + off;
      const bool half = wire == zfcFloat16;
      for (size_t i = 0; i < n; ++i) {
        const float v = half ? f16_to_f32(in[i]) : bf16_to_f32(in[i]);
        acc[i] = (b == 0 ? 0.0f : acc[i]) + v;
      }
    }
  }
  if (nblocks == 0) {
    for (size_t i = 0; i < n; ++i) acc[i] = 0.0f;
  }
}

void add_to(const void* src, zfcDataType_t type, size_t n, float* acc) {
  if (type == zfcFloat32) {
    const float* in = static_cast<const float*>(src);
    for (size_t i = 0; i < n; ++i) acc[i] += in[i];
    return;
  }
  const uint16_t* in = static_cast<const uint16_t*>(src);
  if (type == zfcFloat16) {
    if (x86::has_f16c()) return x86::accumulate_f16(in, n, false, acc);
    for (size_t i = 0; i < n; ++i) acc[i] += f16_to_f32(in[i]);
  } else {
    if (x86::has_avx2()) return x86::accumulate_bf16(in, n, false, acc);
    for (size_t i = 0; i < n; ++i) acc[i] += bf16_to_f32(in[i]);
  }
}

bool all_finite(const float* v, size_t n) {
  bool finite = true;
  for (size_t i = 0; i < n; ++i) finite &= (f32_bits(v[i]) & 0x7f800000u) != 0x7f800000u;
  return finite;
}

}  // namespace kernels
}  // namespace zfc

namespace zfc {
namespace kernels {
namespace {

inline float load_as_f32(const void* src, zfcDataType_t type, size_t i) {
  if (type == zfcFloat32) return static_cast<const float*>(src)[i];
  const uint16_t h = static_cast<const uint16_t*>(src)[i];
  return type == zfcFloat16 ? f16_to_f32(h) : bf16_to_f32(h);
}

}  // namespace

void convert(const void* src, zfcDataType_t src_type, size_t n, float scale, void* dst,
             zfcDataType_t dst_type) {
  if (src_type == dst_type && scale == 1.0f) {
    if (dst != src && n != 0) std::memcpy(dst, src, n * float_type_bytes(src_type));
    return;
  }
  if (src_type == zfcFloat32) {
    if (dst_type == zfcFloat32) {
      const float* in = static_cast<const float*>(src);
      float* out = static_cast<float*>(dst);
      for (size_t i = 0; i < n; ++i) out[i] = in[i] * scale;
    } else {
      encode(static_cast<const float*>(src), n, dst_type, scale, dst);
    }
    return;
  }
  if (dst_type == zfcFloat32) {
    float* out = static_cast<float*>(dst);
    for (size_t i = 0; i < n; ++i) out[i] = load_as_f32(src, src_type, i) * scale;
    return;
  }
  uint16_t* out = static_cast<uint16_t*>(dst);
  for (size_t i = 0; i < n; ++i) {
    const float v = load_as_f32(src, src_type, i) * scale;
    out[i] = dst_type == zfcFloat16 ? f32_to_f16(v) : f32_to_bf16(v);
  }
}

void divide(float* v, size_t n, float divisor) {
  const float inv = exact_reciprocal(divisor);
  if (inv != 0.0f) {
    for (size_t i = 0; i < n; ++i) v[i] *= inv;
  } else {
    for (size_t i = 0; i < n; ++i) v[i] /= divisor;
  }
}

}  // namespace kernels
}  // namespace zfc
