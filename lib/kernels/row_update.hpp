// The row updates a reduced gradient row is applied with: to a replicated table
// (zfcApplyUpdate) and to a shard by its owner (zfcShardedReduceApply). Both go through
// update_row, so the same row, gradient and state give the same bits in either.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device/status.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace kernels {

struct RowUpdate {
  zfcUpdateKind_t kind = zfcUpdateAdd;
  float alpha = 1.0f;
  float epsilon = 0.0f;
};

// "add", "sgd", "adagrad"; "unknown" for another value.
const char* update_kind_name(int kind);

// An update as the operation header carries it, to be agreed across ranks: its kind, and
// alpha's and epsilon's fp32 bits in one word.
uint64_t pack_update_values(const RowUpdate& u);
RowUpdate unpack_update(int kind, uint64_t values);

// Checks a caller's zfcRowUpdate_t (NULL, size, kind, finite values) into *out.
Status parse_row_update(const zfcRowUpdate_t* user, RowUpdate* out);

// Whether the update reads and writes a state row beside the table row (Adagrad).
inline bool update_has_state(const RowUpdate& u) { return u.kind == zfcUpdateAdagrad; }

// Updates one row of `dim` values: w with gradient g, and state s (Adagrad's accumulator;
// unused and may be NULL otherwise). Element by element, in index order.
void update_row(float* w, float* s, const float* g, size_t dim, const RowUpdate& u);

// update_row for row idx[p] of table (and state) with rows[p], for p = 0..n-1 in order
// (idx zfcInt32 or zfcInt64, already checked).
void update_rows(float* table, float* state, size_t dim, const void* idx,
                 zfcDataType_t index_type, const float* rows, size_t n, const RowUpdate& u);

}  // namespace kernels
}  // namespace zfc
