#include "algo/rank_order.hpp"

namespace zfc {

void sum_rank_blocks(const NodeMap* nodes, int ranks, Workspace& ws, const void* blocks,
                     size_t n, zfcDataType_t wire, float* acc) {
  if (nodes == nullptr || !nodes->grouped()) {
    kernels::sum_blocks(blocks, ranks, n, wire, acc);
    return;
  }
  const size_t block_bytes = n * kernels::float_type_bytes(wire);
  const char* base = static_cast<const char*>(blocks);
  for (int node = 0; node < nodes->node_count(); ++node) {
    const std::vector<int>& members = nodes->members(node);
    float* dst = node == 0 ? acc : ws.get<float>(Slot::kNodeSum, n);
    // The first member from +0 (as sum_blocks does), then the others in rank order.
    kernels::sum_blocks(base + members[0] * block_bytes, 1, n, wire, dst);
    for (size_t i = 1; i < members.size(); ++i) {
      kernels::add_to(base + members[i] * block_bytes, wire, n, dst);
    }
    if (node > 0) kernels::add_to(dst, zfcFloat32, n, acc);
  }
}

}  // namespace zfc
