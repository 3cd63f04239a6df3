// A wire format: how a row of D fp32 values travels. Its element type, the bytes of a row
// (the values, and any per-row scale or metadata after them), whether the compression scale
// applies, and its row operations (WireRowOps): encode, decode, the placing decode, and the
// decode-and-accumulate that every sum of wire rows goes through. fp32, fp16 and bf16 are
// instances sharing the operations of a format of values only (kElementRows, over the element
// kernels of kernels/cast and kernels/rows); fp8 e4m3, fp8 e5m2 and int8 share those of the
// eight-bit formats with a per-row scale (kEightBitRows, kernels/wire_eight_bit.cpp). Each is
// one row of the table in wire_format.cpp. An encode rounds as its Rounding says
// (kernels/rounding.hpp): to nearest even, or stochastically.
//
// A new format is its operations (a file of its own, kernels/wire_<name>.cpp, declaring a
// WireRowOps) and one row of the table: the exchanges, the pair packing and the owners' sums
// reach it through here and through the execution layer's format calls
// (StepKernels::add_wire_rows, pack_wire_pairs, decode_wire_rows_to;
// WireKernels::encode_rows), whose device backend refuses a format with a per-row part until
// it has device kernels. The allreduce cuts a format of values only anywhere, and one with a
// per-row part into rows of a fixed length (algo/allreduce.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/rounding.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace kernels {

struct WireFormat;

struct WireRowOps {
  // rows x dim fp32 values to `rows` wire rows: the values times `scale` (1 where the format
  // is not scaled), and the format's per-row part, rounded as `r` says.
  void (*encode)(const WireFormat& f, const float* src, size_t rows, size_t dim, float scale,
                 const Rounding& r, void* dst);
  // Back to fp32, divided by `scale`; whether every value written is finite.
  bool (*decode)(const WireFormat& f, const void* src, size_t rows, size_t dim, float scale,
                 float* dst);
  // Row i of n wire rows added into row pos[i] of dst (dim fp32 values), the sums of every
  // target formed in input order in blocks of kSumBlockRows (host_device/sum_order.hpp), still
  // times the scale. (The eight-bit formats add in input order: their callers add at most
  // one row per target and rank, far below a block, where the two orders are one.) With `touched` (a byte per target), a target not yet touched is written
  // as 0 + x and marked: the bits of a zero fill and the adds, without the fill.
  void (*accumulate)(const WireFormat& f, const void* rows, const int32_t* pos, size_t n,
                     size_t dim, float* dst, uint8_t* touched);
};

struct WireFormat {
  zfcCompressionKind_t kind;
  const char* name;          // "none", "fp16", ..., "int8": what zfc_perf and Python call it
  zfcDataType_t element;     // what one value travels as (a format of values only)
  size_t element_bytes;
  size_t row_extra_bytes;    // per row, after its values (the eight-bit formats' scale)
  bool scaled;               // the values are multiplied by the compression scale to travel
  const WireRowOps* ops;

  size_t row_bytes(size_t dim) const { return element_bytes * dim + row_extra_bytes; }
  // A row's bytes per value (the cost model's).
  double value_bytes(size_t dim) const {
    return dim > 0 ? static_cast<double>(row_bytes(dim)) / static_cast<double>(dim)
                   : static_cast<double>(element_bytes);
  }
  // Whether a row is its values only, so that element arrays of the format may be cut
  // anywhere (the allreduce's blocks, the device's element kernels).
  bool element_only() const { return row_extra_bytes == 0; }
  // Whether rows travel as their fp32 values, unscaled: a sum may then be formed where it is
  // sent from.
  bool plain_fp32() const { return element == zfcFloat32 && element_only() && !scaled; }
  // The scale a value travels with: the compression's, or 1.
  float value_scale(float scale) const { return scaled ? scale : 1.0f; }

  void encode_rows(const float* src, size_t rows, size_t dim, float scale, void* dst,
                   const Rounding& r = Rounding{}) const {
    ops->encode(*this, src, rows, dim, scale, r, dst);
  }
  bool decode_rows(const void* src, size_t rows, size_t dim, float scale, float* dst) const {
    return ops->decode(*this, src, rows, dim, scale, dst);
  }
  void accumulate_rows(const void* rows, const int32_t* pos, size_t n, size_t dim, float* dst,
                       uint8_t* touched) const {
    ops->accumulate(*this, rows, pos, n, dim, dst, touched);
  }
  // Row k of n wire rows decoded into row dest[k] of out; whether every value is finite.
  bool decode_rows_to(const void* rows, const int32_t* dest, size_t n, size_t dim, float scale,
                      float* out) const;
};

// The operations of a format of values only (fp32, fp16, bf16), and of the eight-bit ones.
extern const WireRowOps kElementRows;
extern const WireRowOps kEightBitRows;

// The format of a compression kind (without ZFC_COMPRESS_STOCHASTIC); NULL for a number no
// format has.
const WireFormat* find_wire_format(int kind);
// The same for a kind already checked.
const WireFormat& wire_format(zfcCompressionKind_t kind);

}  // namespace kernels
}  // namespace zfc
