// The order in which every sum over ranks is formed: each node's ranks in rank order from
// +0, then the node sums in node order, the first node's directly. With one node, or one
// rank per node, that is plain rank order ((+0 + p_0) + p_1) + ... Every exchange uses it,
// so all of them (the hierarchical one, which sums inside nodes first, included) give the
// same bits in fp32. Adding a +0 where a rank has nothing to add leaves every value as it
// is (a sum started at +0 is never -0), so exchanges may skip absent contributions.
#pragma once

#include <cstddef>

#include "core/node_map.hpp"
#include "exec/step_kernels.hpp"
#include "exec/wire_kernels.hpp"
#include "exec/workspace.hpp"
#include "kernels/cast.hpp"
#include "kernels/rows.hpp"

namespace zfc {

// acc = the sum of `ranks` consecutive blocks of n wire elements, block r from rank r, in
// the order above, by the kernels of the blocks' memory space. nodes (of `ranks` ranks) may
// be NULL: rank order.
Status sum_rank_blocks(const NodeMap* nodes, int ranks, WireKernels& k, const void* blocks,
                       size_t n, zfcDataType_t wire, float* acc);

// Zeroes the rows x dim matrix `out` and calls add(rank, dst) for every rank in the order
// above; add must add that rank's contribution into dst, a rows x dim fp32 matrix (out, or
// a zeroed node sum that is added into out once the node is done).
template <class F>
void accumulate_in_rank_order(const NodeMap& nodes, Workspace& ws, float* out, size_t rows,
                              size_t dim, F&& add) {
  kernels::zero_rows(out, rows, dim);
  for (int n = 0; n < nodes.node_count(); ++n) {
    const bool separate = n > 0 && nodes.members(n).size() > 1;
    float* dst = out;
    if (separate) {
      dst = ws.get<float>(Slot::kNodeSum, rows * dim);
      kernels::zero_rows(dst, rows, dim);
    }
    for (int r : nodes.members(n)) add(r, dst);
    if (separate) kernels::add_to(dst, zfcFloat32, rows * dim, out);
  }
}

// The same on k's memory space: add(rank, dst) returns a Status, and the first failure ends
// the sums.
template <class K, class F>
Status sum_in_rank_order(const NodeMap& nodes, StepKernels<K>& k, float* out, size_t rows,
                         size_t dim, F&& add) {
  const size_t bytes = rows * dim * sizeof(float);
  ZFC_RETURN_IF_ERROR(k.zero(out, bytes));
  for (int n = 0; n < nodes.node_count(); ++n) {
    const bool separate = n > 0 && nodes.members(n).size() > 1;
    float* dst = out;
    if (separate) {
      ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kNodeSum, rows * dim, &dst));
      ZFC_RETURN_IF_ERROR(k.zero(dst, bytes));
    }
    for (int r : nodes.members(n)) ZFC_RETURN_IF_ERROR(add(r, dst));
    if (separate) ZFC_RETURN_IF_ERROR(k.wire().add_to(dst, zfcFloat32, rows * dim, out));
  }
  return Status::Ok();
}

}  // namespace zfc
