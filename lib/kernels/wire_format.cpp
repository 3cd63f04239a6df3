#include "kernels/wire_format.hpp"

#include "kernels/cast.hpp"

namespace zfc {
namespace kernels {
namespace {

const WireFormat kWireFormats[] = {
    {zfcCompressNone, "none", zfcFloat32, 4, 0, false},
    {zfcCompressFp16, "fp16", zfcFloat16, 2, 0, true},
    {zfcCompressBf16, "bf16", zfcBFloat16, 2, 0, true},
};

}  // namespace

// The three formats have no per-row part: their rows are their values back to back.
void WireFormat::encode_rows(const float* src, size_t rows, size_t dim, float scale,
                             void* dst) const {
  encode(src, rows * dim, element, scaled ? scale : 1.0f, dst);
}

bool WireFormat::decode_rows(const void* src, size_t rows, size_t dim, float scale,
                             float* dst) const {
  return decode(src, rows * dim, element, scaled ? scale : 1.0f, dst);
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
