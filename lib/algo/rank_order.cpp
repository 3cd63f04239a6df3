#include "algo/rank_order.hpp"

namespace zfc {

Status sum_rank_blocks(const NodeMap* nodes, int ranks, WireKernels& k, const void* blocks,
                       size_t n, zfcDataType_t wire, float* acc) {
  if (nodes == nullptr || !nodes->grouped()) return k.sum_blocks(blocks, ranks, n, wire, acc);
  const size_t block_bytes = n * kernels::float_type_bytes(wire);
  const char* base = static_cast<const char*>(blocks);
  for (int node = 0; node < nodes->node_count(); ++node) {
    const std::vector<int>& members = nodes->members(node);
    void* node_sum = acc;
    if (node > 0) ZFC_RETURN_IF_ERROR(k.scratch(Slot::kNodeSum, n * sizeof(float), &node_sum));
    float* dst = static_cast<float*>(node_sum);
    // The first member from +0 (as sum_blocks does), then the others in rank order.
    ZFC_RETURN_IF_ERROR(k.sum_blocks(base + members[0] * block_bytes, 1, n, wire, dst));
    for (size_t i = 1; i < members.size(); ++i) {
      ZFC_RETURN_IF_ERROR(k.add_to(base + members[i] * block_bytes, wire, n, dst));
    }
    if (node > 0) ZFC_RETURN_IF_ERROR(k.add_to(dst, zfcFloat32, n, acc));
  }
  return Status::Ok();
}

}  // namespace zfc
