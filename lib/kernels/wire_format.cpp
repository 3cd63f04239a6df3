#include "kernels/wire_format.hpp"

#include "kernels/cast.hpp"
#include "kernels/rows.hpp"

namespace zfc {
namespace kernels {
namespace {

// A format of values only: its rows are its values back to back, so whole runs of rows are
// one element array.
void encode_elements(const WireFormat& f, const float* src, size_t rows, size_t dim,
                     float scale, const Rounding& r, void* dst) {
  if (!r.stochastic || f.element == zfcFloat32) {
    encode(src, rows * dim, f.element, f.value_scale(scale), dst);
    return;
  }
  encode_stochastic(src, rows, dim, f.element, f.value_scale(scale), r, dst);
}

bool decode_elements(const WireFormat& f, const void* src, size_t rows, size_t dim, float scale,
                     float* dst) {
  return decode(src, rows * dim, f.element, f.value_scale(scale), dst);
}

void accumulate_elements(const WireFormat& f, const void* rows, const int32_t* pos, size_t n,
                         size_t dim, float* dst, uint8_t* touched) {
  if (touched != nullptr) {
    scatter_rows_first_touch(rows, f.element, pos, n, dim, dst, touched);
  } else {
    scatter_add_rows(rows, f.element, pos, n, dim, dst);
  }
}

}  // namespace

const WireRowOps kElementRows = {encode_elements, decode_elements, accumulate_elements};

namespace {

const WireFormat kWireFormats[] = {
    {zfcCompressNone, "none", zfcFloat32, 4, 0, false, &kElementRows},
    {zfcCompressFp16, "fp16", zfcFloat16, 2, 0, true, &kElementRows},
    {zfcCompressBf16, "bf16", zfcBFloat16, 2, 0, true, &kElementRows},
    // The eight-bit formats: one byte per value and the row's fp32 scale. No zfcDataType_t
    // names their values, and `element` is read only for a format of values only.
    {zfcCompressFp8E4M3, "fp8_e4m3", zfcInt32, 1, sizeof(float), false, &kEightBitRows},
    {zfcCompressFp8E5M2, "fp8_e5m2", zfcInt32, 1, sizeof(float), false, &kEightBitRows},
    {zfcCompressInt8, "int8", zfcInt32, 1, sizeof(float), false, &kEightBitRows},
};

}  // namespace

bool WireFormat::decode_rows_to(const void* rows, const int32_t* dest, size_t n, size_t dim,
                                float scale, float* out) const {
  const size_t bytes = row_bytes(dim);
  const char* at = static_cast<const char*>(rows);
  bool finite = true;
  for (size_t k = 0; k < n; ++k) {
    finite &= decode_rows(at + k * bytes, 1, dim, scale, out + static_cast<size_t>(dest[k]) * dim);
  }
  return finite;
}

const WireFormat* find_wire_format(int kind) {
  for (const WireFormat& f : kWireFormats) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

const WireFormat& wire_format(zfcCompressionKind_t kind) {
  const WireFormat* f = find_wire_format(kind);
  return f != nullptr ? *f : kWireFormats[0];
}

}  // namespace kernels
}  // namespace zfc
