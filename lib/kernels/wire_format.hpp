// A wire format: how a row of D fp32 values travels. Its element type, the bytes of a row
// (the values, and any per-row scale or metadata after them), whether the compression scale
// applies, and the encode and decode of whole rows. fp32, fp16 and bf16 are its instances,
// one row each of the table in wire_format.cpp. The exchanges take a row's size and its
// placing decode from here; their sums of wire rows (scatter_add_rows and its kin), the
// allreduce's blocks and the device kernels still take the element type and assume rows of
// values only (row_extra_bytes 0), which a format with per-row scales must change too.
#pragma once

#include <cstddef>

#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace kernels {

struct WireFormat {
  zfcCompressionKind_t kind;
  const char* name;          // "none", "fp16", "bf16": what zfc_perf and Python call it
  zfcDataType_t element;     // what one value travels as
  size_t element_bytes;
  size_t row_extra_bytes;    // per row, after its values (0 for the three formats here)
  bool scaled;               // the values are multiplied by the compression scale to travel

  size_t row_bytes(size_t dim) const { return element_bytes * dim + row_extra_bytes; }
  // rows x dim values to the wire: wire(src * scale) (a copy for fp32), row by row.
  void encode_rows(const float* src, size_t rows, size_t dim, float scale, void* dst) const;
  // Back to fp32, divided by the scale; whether every value written is finite.
  bool decode_rows(const void* src, size_t rows, size_t dim, float scale, float* dst) const;
};

// The format of a compression kind; NULL for a number no zfcCompressionKind_t has.
const WireFormat* find_wire_format(int kind);
// The same for a kind already checked.
const WireFormat& wire_format(zfcCompressionKind_t kind);

}  // namespace kernels
}  // namespace zfc
