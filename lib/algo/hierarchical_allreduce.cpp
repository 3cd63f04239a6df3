#include "algo/hierarchical_allreduce.hpp"

#include <algorithm>

#include "algo/allreduce.hpp"
#include "algo/reduce_scatter_lists.hpp"
#include "kernels/cast.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
namespace {

// What every rank receives, for the communicator's ledger: the node and rail transports see
// only their own group. Rank r, member i of node m, receives its chunk from L-1 members,
// its sub-chunk from N-1 nodes (in fp32), the rest of its chunk on the rail and the rest of
// the buffer in the node.
void enter_every_rank(Transport& world, const NodeMap& nodes, const Chunks& level1, int N,
                      size_t w) {
  const int L = level1.parts;
  for (int r = 0; r < world.size(); ++r) {
    const int i = nodes.local_index(r), m = nodes.node_of(r);
    const size_t len1 = level1.len(i), len2 = Chunks{len1, N}.len(m);
    const size_t wire_elements = static_cast<size_t>(L - 1) * len1 + (len1 - len2) +
                                 (level1.n - len1);
    world.note_received(r, wire_elements * w + static_cast<size_t>(N - 1) * len2 * 4);
  }
}

}  // namespace

Status hierarchical_allreduce_sum(Transport& world, Transport& node, Transport& rail,
                                  const NodeMap& nodes, Workspace& ws, WireKernels& k,
                                  const float* send, float* recv, size_t n,
                                  const Compression& compression, bool* finite) {
  if (!kernels::wire_format(compression.kind).element_only() || compression.stochastic) {
    return error(zfcInternalError, "the hierarchical allreduce cuts values anywhere and rounds "
                 "to nearest; wire %s needs rows or rounds stochastically: its callers take the "
                 "flat one",
                 kernels::wire_format(compression.kind).name);
  }
  const zfcDataType_t wire = kernels::wire_type(compression.kind);
  const float scale = compression.kind == zfcCompressNone ? 1.0f : compression.scale;
  const size_t w = kernels::float_type_bytes(wire);
  const int L = node.size(), N = rail.size();
  const Chunks level1{n, L};
  const size_t off1 = level1.off(node.rank()), len1 = level1.len(node.rank());
  const Chunks level2{len1, N};
  const size_t off2 = level2.off(rail.rank()), len2 = level2.len(rail.rank());
  size_t* sizes = ws.get<size_t>(Slot::kReduceSizes, 4 * static_cast<size_t>(std::max(L, N)));
  enter_every_rank(world, nodes, level1, N, w);

  // 1. The node's reduce-scatter, of this rank's wire copy.
  const void* wire_send = send;
  if (wire != zfcFloat32) {
    void* buf = nullptr;
    ZFC_RETURN_IF_ERROR(k.scratch(Slot::kWireSend, n * w, &buf));
    ZFC_RETURN_IF_ERROR(k.encode(send, n, wire, scale, buf));
    wire_send = buf;
  }
  void *in_node = nullptr, *node_sum = nullptr;
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kWireRecv, static_cast<size_t>(L) * len1 * w, &in_node));
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kPartial, len1 * sizeof(float), &node_sum));
  ZFC_RETURN_IF_ERROR(k.settle());
  SizeLists l = scatter_lists(sizes, level1, node.rank(), w);
  ZFC_RETURN_IF_ERROR(node.alltoallv(wire_send, l.send_bytes, l.send_displs, in_node,
                                     l.recv_bytes, l.recv_displs));
  float* sum = static_cast<float*>(node_sum);
  ZFC_RETURN_IF_ERROR(k.sum_blocks(in_node, L, len1, wire, sum));

  // 2. The rail's reduce-scatter of the node sum, in fp32, so that the sum over nodes is
  // the flat allreduce's to the bit on any wire.
  void *in_rail = nullptr, *total = nullptr, *gathered = nullptr;
  ZFC_RETURN_IF_ERROR(
      k.scratch(Slot::kOwnerRows, static_cast<size_t>(N) * len2 * sizeof(float), &in_rail));
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kNodeSum, len2 * sizeof(float), &total));
  ZFC_RETURN_IF_ERROR(k.scratch(Slot::kGatheredRows, n * w, &gathered));
  ZFC_RETURN_IF_ERROR(k.settle());
  l = scatter_lists(sizes, level2, rail.rank(), sizeof(float));
  ZFC_RETURN_IF_ERROR(rail.alltoallv(sum, l.send_bytes, l.send_displs, in_rail, l.recv_bytes,
                                     l.recv_displs));
  char* result = static_cast<char*>(gathered);
  char* own = result + (off1 + off2) * w;
  if (wire == zfcFloat32) {
    ZFC_RETURN_IF_ERROR(
        k.sum_blocks(in_rail, N, len2, zfcFloat32, reinterpret_cast<float*>(own)));
  } else {
    float* acc = static_cast<float*>(total);
    ZFC_RETURN_IF_ERROR(k.sum_blocks(in_rail, N, len2, zfcFloat32, acc));
    ZFC_RETURN_IF_ERROR(k.encode(acc, len2, wire, 1.0f, own));  // already scaled
  }

  // 3. The rail gathers the chunk, the node the buffer; recv is written last.
  ZFC_RETURN_IF_ERROR(k.settle());
  l = gather_lists(sizes, level2, w);
  char* chunk = result + off1 * w;
  ZFC_RETURN_IF_ERROR(rail.allgatherv(own, chunk, l.recv_bytes, l.recv_displs));
  l = gather_lists(sizes, level1, w);
  ZFC_RETURN_IF_ERROR(node.allgatherv(chunk, result, l.recv_bytes, l.recv_displs));
  ZFC_RETURN_IF_ERROR(k.decode(result, n, wire, scale, recv));
  return k.all_finite(finite);
}

}  // namespace zfc
