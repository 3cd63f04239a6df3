// The dense allreduce in two levels, for L ranks on each of N nodes (a uniform, grouped
// NodeMap, as the hierarchical sparse exchange needs):
//   1. inside each node, a reduce-scatter: member j receives every member's chunk j (n split
//      into L chunks) and sums them in rank order, the node's sum of chunk j;
//   2. across nodes, on the rail of local index j, a reduce-scatter of that node sum in
//      fp32: the member on node m receives every node's sub-chunk m of chunk j and adds
//      them in node order;
//   3. the rail allgathers chunk j from its sub-chunks, then the node allgathers the chunks.
// Each rank sends and receives 2(G-1)/G of the buffer, as in the flat allreduce (the rail's
// reduce-scatter in fp32 when the wire is narrower), but only about 2(N-1)/(N L) of it
// crosses between nodes, and a rank talks to L-1 + N-1 peers instead of G-1. Sums run
// inside the node in rank order from +0, then over nodes in node order, and the result is
// rounded to the wire once: the order and the rounding of the flat allreduce
// (algo/allreduce.hpp, algo/rank_order.hpp), so the results have its bits on every wire.
#pragma once

#include <cstddef>

#include "host_device/status.hpp"
#include "core/config.hpp"
#include "core/node_map.hpp"
#include "exec/wire_kernels.hpp"
#include "exec/workspace.hpp"
#include "transport/transport.hpp"

namespace zfc {

// Sums n fp32 values over the ranks of `world` into recv (recv may equal send) on the
// memory space of `k`; recv is written only after the last transfer. node and rail are the
// world's node and cross-node transports for `nodes`, which report into world; every
// rank's received bytes are entered in world's ledger. *finite is false when some result
// element is not finite.
Status hierarchical_allreduce_sum(Transport& world, Transport& node, Transport& rail,
                                  const NodeMap& nodes, Workspace& ws, WireKernels& k,
                                  const float* send, float* recv, size_t n,
                                  const Compression& compression, bool* finite);

}  // namespace zfc
