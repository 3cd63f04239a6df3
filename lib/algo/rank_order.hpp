// The order in which every sum over ranks is formed: each node's ranks in rank order from
// +0, then the node sums in node order, the first node's directly. With one node, or one
// rank per node, that is plain rank order ((+0 + p_0) + p_1) + ... Every exchange uses it,
// so all of them (the hierarchical one, which sums inside nodes first, included) give the
// same bits in fp32. Adding a +0 where a rank has nothing to add leaves every value as it
// is (a sum started at +0 is never -0), so exchanges may skip absent contributions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/node_map.hpp"
#include "exec/step_kernels.hpp"
#include "exec/wire_kernels.hpp"
#include "exec/workspace.hpp"
#include "kernels/cast.hpp"
#include "kernels/rows.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {

// acc = the sum of `ranks` consecutive blocks of n wire elements, block r from rank r, in
// the order above, by the kernels of the blocks' memory space. nodes (of `ranks` ranks) may
// be NULL: rank order.
Status sum_rank_blocks(const NodeMap* nodes, int ranks, WireKernels& k, const void* blocks,
                       size_t n, zfcDataType_t wire, float* acc);

// One sum over ranks into a rows x dim fp32 matrix, its contributions scattered in the order
// of sums. With `touched` (a byte per row, zeroed), the first row to reach a target writes
// it as 0 + x and the others add, so no fill comes first (and no sum is -0); the rows
// nothing reached are zeroed by the owner of the sum once it is done. Without, rows are
// added to what dst holds.
struct RowSum {
  float* dst;
  size_t dim;
  uint8_t* touched;
  // n rows of the wire format f (kernels/wire_format.hpp) at their positions.
  void add(const void* in, const kernels::WireFormat& f, const int32_t* pos, size_t n) const {
    f.accumulate_rows(in, pos, n, dim, dst, touched);
  }
};

// Calls add(rank, sum) for every rank in the order above; add must add that rank's
// contribution through sum.add (RowSum): into `out` (rows x dim fp32), or into a node sum
// that is added into out once the node is done. Every row of out is written, none filled
// first: the bits of a zero fill and adds.
template <class F>
void accumulate_in_rank_order(const NodeMap& nodes, Workspace& ws, float* out, size_t rows,
                              size_t dim, F&& add) {
  uint8_t* touched = ws.get<uint8_t>(Slot::kTouchedRows, rows);
  for (int n = 0; n < nodes.node_count(); ++n) {
    const bool separate = n > 0 && nodes.members(n).size() > 1;
    const bool fresh = n == 0 || separate;  // a sum that starts here
    float* dst = separate ? ws.get<float>(Slot::kNodeSum, rows * dim) : out;
    if (fresh) std::fill(touched, touched + rows, uint8_t{0});
    const RowSum sum{dst, dim, fresh ? touched : nullptr};
    for (int r : nodes.members(n)) add(r, sum);
    if (fresh) kernels::zero_untouched_rows(dst, rows, dim, touched);
    if (separate) kernels::add_to(dst, zfcFloat32, rows * dim, out);
  }
}

// The same on k's memory space: add(rank, dst) returns a Status, and the first failure ends
// the sums. Each sum is opened with k.begin_sum and closed with k.end_sum, so a backend may
// write every row's first contribution instead of filling first.
template <class K, class F>
Status sum_in_rank_order(const NodeMap& nodes, StepKernels<K>& k, float* out, size_t rows,
                         size_t dim, F&& add) {
  for (int n = 0; n < nodes.node_count(); ++n) {
    const bool separate = n > 0 && nodes.members(n).size() > 1;
    const bool fresh = n == 0 || separate;
    float* dst = out;
    if (separate) ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kNodeSum, rows * dim, &dst));
    if (fresh) ZFC_RETURN_IF_ERROR(k.begin_sum(dst, rows, dim));
    for (int r : nodes.members(n)) ZFC_RETURN_IF_ERROR(add(r, dst));
    if (fresh) ZFC_RETURN_IF_ERROR(k.end_sum());
    if (separate) ZFC_RETURN_IF_ERROR(k.wire().add_to(dst, zfcFloat32, rows * dim, out));
  }
  return Status::Ok();
}

}  // namespace zfc
