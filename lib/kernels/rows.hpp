// Row kernels on row-major matrices of width `dim`: scatter-add in a fixed order, gather,
// and table updates. Sums run in a fixed order (input order, in blocks of kSumBlockRows rows
// per target: host_device/sum_order.hpp), so the same inputs give the same bits everywhere.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace kernels {

void zero_rows(float* dst, size_t rows, size_t dim);

// dst[pos[i]] += fp32(rows[i]) for i = 0..n-1, each target's rows in input order in blocks
// of kSumBlockRows (host_device/sum_order.hpp: a target with no more rows than that is
// summed in plain input order); rows are zfcFloat32, zfcFloat16 or zfcBFloat16 (converted
// without scaling). Positions must be >= 0.
void scatter_add_rows(const void* rows, zfcDataType_t row_type, const int32_t* pos, size_t n,
                      size_t dim, float* dst);

// The bits of zero_rows(dst, dst_rows, dim) then scatter_add_rows, without the fill: each
// target's first row is written from +0 (dst = 0 + fp32(row)), the others added in the same
// order, and only the targets no row reaches are zeroed. Positions must be below dst_rows.
void scatter_rows_to_zeroed(const void* rows, zfcDataType_t row_type, const int32_t* pos,
                            size_t n, size_t dim, float* dst, size_t dst_rows);

// scatter_rows_to_zeroed into rows that lie apart: target p's row is targets[p] (dim floats),
// n_targets of them, e.g. the row slots of (key, row) pairs packed for the wire.
void scatter_rows_to_targets(const void* rows, zfcDataType_t row_type, const int32_t* pos,
                             size_t n, size_t dim, float* const* targets, size_t n_targets);

// scatter_add_rows into rows not all written yet: touched holds a byte per target, 0 for
// one no row has reached. A target's first row is written from +0 (dst = 0 + fp32(row)) and
// its byte set; the others are added. Calls made in the order of sums, sharing `touched`,
// give the bits of a zero fill and their adds without the fill (and no sum is -0).
void scatter_rows_first_touch(const void* rows, zfcDataType_t row_type, const int32_t* pos,
                              size_t n, size_t dim, float* dst, uint8_t* touched);

// The rows of dst (rows x dim) whose touched byte is 0 set to +0: what a first-touch sum
// leaves for the rows no contribution reached.
void zero_untouched_rows(float* dst, size_t rows, size_t dim, const uint8_t* touched);

// Index of the first pos[i] outside [0, bound), or n when all are inside.
size_t find_bad_position(const int32_t* pos, size_t n, size_t bound);

// out[i] = src[rows[i]] for i = 0..n-1.
template <class K>
void gather_rows(const float* src, const K* rows, size_t n, size_t dim, float* out);

// table[idx[p]] += alpha * rows[p] for p = 0..n-1 in order (idx zfcInt32 or zfcInt64).
void apply_rows(float* table, size_t dim, const void* idx, zfcDataType_t index_type,
                const float* rows, size_t n, float alpha);

}  // namespace kernels
}  // namespace zfc
