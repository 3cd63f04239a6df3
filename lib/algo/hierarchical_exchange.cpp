// The hierarchical exchange, for L ranks on each of N nodes. The global set's positions are
// split into L ranges, one per local index, and each range into N sub-ranges, one per node:
//   1. inside each node, every rank sends its locally summed rows to the local owner of
//      their range, which sums them: the node's sums of the rows present on the node;
//   2. across nodes, between the ranks of equal local index (a "rail"), each rank sends its
//      node's sums to the owner of their sub-range, which adds them in node order;
//   3. the rail allgathers the sub-ranges, then the node allgathers the ranges.
// Only step 2 and the rail gather cross between nodes, once per row present on a node
// instead of once per rank holding it. Sums run inside the node in rank order, then over
// nodes in node order: the order of algo/rank_order.hpp, so fp32 results keep their bits.
#include <algorithm>
#include <vector>

#include "algo/owner_ranges.hpp"
#include "core/stats.hpp"

namespace zfc {
namespace {

// Everything the steps share: the ranges, the positions, the scratch.
struct Hier {
  const RankPositions& at;
  const NodeMap& nodes;
  Workspace& ws;
  Wire wire;
  size_t dim, row_bytes;
  OwnerRanges ranges;  // of the global set, over local indices
  OwnerRanges subs;    // of this rank's range, over nodes
  size_t lo1, len1;    // this rank's range
  size_t lo2, len2;    // this rank's sub-range (absolute positions)
  size_t* sizes;       // 4 arrays of max(L, N) entries
  int32_t* ints;       // len1 (present) + len1 (slot) + N * len2 (lists) entries
  unsigned char* flags;
};

// Relative positions in [lo, hi) present in the union of `ranks`' distinct keys, sorted.
size_t union_in_range(const Hier& h, const std::vector<int>& ranks, size_t lo, size_t hi,
                      int32_t* out) {
  std::fill(h.flags, h.flags + (hi - lo), 0);
  for (int r : ranks) {
    const size_t end = h.at.lower(r, hi);
    for (size_t i = h.at.lower(r, lo); i < end; ++i) {
      h.flags[h.at.of(r)[i] - static_cast<int32_t>(lo)] = 1;
    }
  }
  size_t n = 0;
  for (size_t p = 0; p < hi - lo; ++p) {
    if (h.flags[p]) out[n++] = static_cast<int32_t>(p);
  }
  return n;
}

// Step 1: this rank's rows to the local owners; returns the node's sums of the rows present
// in this rank's range, encoded for the rail, and their relative positions in *present.
Status reduce_in_node(Hier& h, Transport& node, int me, const void* send, size_t* present) {
  const int L = node.size();
  const std::vector<int>& members = h.nodes.members(h.nodes.node_of(me));
  size_t *send_bytes = h.sizes, *send_displs = h.sizes + L;
  size_t *recv_bytes = h.sizes + 2 * L, *recv_displs = h.sizes + 3 * L;
  for (int j = 0; j < L; ++j) {
    const size_t b = h.ranges.begin(j);
    send_bytes[j] = h.at.count_in(me, b, b + h.ranges.len(j)) * h.row_bytes;
    recv_bytes[j] = h.at.count_in(members[j], h.lo1, h.lo1 + h.len1) * h.row_bytes;
  }
  pack_displacements(send_bytes, send_displs, L);
  pack_displacements(recv_bytes, recv_displs, L);
  char* in = h.ws.get<char>(Slot::kOwnerRows, recv_displs[L - 1] + recv_bytes[L - 1]);
  ZFC_RETURN_IF_ERROR(node.alltoallv(send, send_bytes, send_displs, in, recv_bytes,
                                     recv_displs));
  // Sum into one compact row per position present on the node, members in rank order.
  int32_t* list = h.ints;
  int32_t* slot = h.ints + h.len1;
  const size_t n = union_in_range(h, members, h.lo1, h.lo1 + h.len1, list);
  for (size_t i = 0; i < n; ++i) slot[list[i]] = static_cast<int32_t>(i);
  float* sums = h.ws.get<float>(Slot::kDense, n * h.dim);
  kernels::zero_rows(sums, n, h.dim);
  int32_t* rel = h.ints + 2 * h.len1;  // reused as a scratch list before the rail lists
  for (int j = 0; j < L; ++j) {
    const int r = members[j];
    const size_t first = h.at.lower(r, h.lo1), count = recv_bytes[j] / h.row_bytes;
    for (size_t i = 0; i < count; ++i) rel[i] = slot[h.at.of(r)[first + i] - h.lo1];
    kernels::scatter_add_rows(in + recv_displs[j], h.wire.type, rel, count, h.dim, sums);
  }
  char* node_rows = h.ws.get<char>(Slot::kNodeRows, n * h.row_bytes);
  kernels::encode(sums, n * h.dim, h.wire.type, 1.0f, node_rows);  // already scaled
  *present = n;
  return Status::Ok();
}

// Step 2: the node's sums to the owners of their sub-ranges; acc = the sum over nodes.
Status reduce_across_nodes(Hier& h, Transport& rail, size_t present, float* acc) {
  const int N = rail.size();
  size_t *send_bytes = h.sizes, *send_displs = h.sizes + N;
  size_t *recv_bytes = h.sizes + 2 * N, *recv_displs = h.sizes + 3 * N;
  const int32_t* mine = h.ints;  // this node's present positions, relative to lo1
  int32_t* lists = h.ints + 2 * h.len1;
  std::vector<size_t> list_at(static_cast<size_t>(N));
  size_t listed = 0;
  for (int k = 0; k < N; ++k) {
    const int32_t b = static_cast<int32_t>(h.subs.begin(k));
    const int32_t e = b + static_cast<int32_t>(h.subs.len(k));
    send_bytes[k] = static_cast<size_t>(std::lower_bound(mine, mine + present, e) -
                                        std::lower_bound(mine, mine + present, b)) *
                    h.row_bytes;
    list_at[static_cast<size_t>(k)] = listed;
    const size_t n = union_in_range(h, h.nodes.members(k), h.lo2, h.lo2 + h.len2,
                                    lists + listed);
    recv_bytes[k] = n * h.row_bytes;
    listed += n;
  }
  pack_displacements(send_bytes, send_displs, N);
  pack_displacements(recv_bytes, recv_displs, N);
  char* in = h.ws.get<char>(Slot::kOwnerRows, recv_displs[N - 1] + recv_bytes[N - 1]);
  const char* node_rows = h.ws.get<char>(Slot::kNodeRows, present * h.row_bytes);
  ZFC_RETURN_IF_ERROR(rail.alltoallv(node_rows, send_bytes, send_displs, in, recv_bytes,
                                     recv_displs));
  kernels::zero_rows(acc, h.len2, h.dim);
  for (int k = 0; k < N; ++k) {
    kernels::scatter_add_rows(in + recv_displs[k], h.wire.type,
                              lists + list_at[static_cast<size_t>(k)],
                              recv_bytes[k] / h.row_bytes, h.dim, acc);
  }
  return Status::Ok();
}

// Step 3: base holds this rank's sub-range at its place; gather the range on the rail, then
// the whole set inside the node. base is the U_g x D result, of row_bytes per row.
Status share(Hier& h, Transport& node, Transport& rail, char* base) {
  const int L = node.size(), N = rail.size();
  size_t *bytes = h.sizes, *displs = h.sizes + std::max(L, N);
  for (int k = 0; k < N; ++k) {
    bytes[k] = h.subs.len(k) * h.row_bytes;
    displs[k] = h.subs.begin(k) * h.row_bytes;
  }
  char* range = base + h.lo1 * h.row_bytes;
  ZFC_RETURN_IF_ERROR(rail.allgatherv(range + displs[rail.rank()], range, bytes, displs));
  for (int j = 0; j < L; ++j) {
    bytes[j] = h.ranges.len(j) * h.row_bytes;
    displs[j] = h.ranges.begin(j) * h.row_bytes;
  }
  return node.allgatherv(range, base, bytes, displs);
}

// The ledger of the whole communicator: the node and rail transports see only their own
// group, but every rank holds every rank's positions, so it can count what each rank
// receives in all four steps. `present` is U_g + 1 entries of scratch.
void enter_every_rank(const Hier& h, Transport& world, int L, int N, size_t ug,
                      int32_t* present) {
  for (int n = 0; n < N; ++n) {
    const std::vector<int>& members = h.nodes.members(n);
    // present[p + 1] - present[lo]: positions in [lo, p] that node n holds.
    std::fill(present, present + ug + 1, 0);
    for (int r : members) {
      for (size_t i = 0; i < h.at.counts[r]; ++i) present[h.at.of(r)[i] + 1] = 1;
    }
    for (size_t p = 0; p < ug; ++p) present[p + 1] += present[p];
    for (int j = 0; j < L; ++j) {
      const size_t lo = h.ranges.begin(j), len = h.ranges.len(j);
      const OwnerRanges subs{len, N};
      uint64_t rows = ug - len;  // the node's gather
      for (int k = 0; k < L; ++k) {  // step 1: the node's other members' rows in range j
        if (k != j) rows += h.at.count_in(members[static_cast<size_t>(k)], lo, lo + len);
      }
      rows += len - subs.len(n);  // the rail's gather
      world.note_received(members[static_cast<size_t>(j)], rows * h.row_bytes);
      // Step 2 from node n: its rows in sub-range m go to node m's member j.
      for (int m = 0; m < N; ++m) {
        if (m == n) continue;
        const size_t b = lo + subs.begin(m), e = b + subs.len(m);
        world.note_received(h.nodes.members(m)[static_cast<size_t>(j)],
                            static_cast<uint64_t>(present[e] - present[b]) * h.row_bytes);
      }
    }
  }
}

}  // namespace

template <class K>
Status exchange_hierarchical(SparseCall<K>& call, Transport& node, Transport& rail) {
  Workspace& ws = call.ws;
  const int L = node.size(), N = rail.size();
  const size_t ug = call.set.global_count(), dim = call.spec.dim;
  const Wire wire = wire_of(call.spec);
  const OwnerRanges ranges{ug, L};
  const size_t lo1 = ranges.begin(node.rank()), len1 = ranges.len(node.rank());
  const OwnerRanges subs{len1, N};
  const size_t lo2 = lo1 + subs.begin(rail.rank()), len2 = subs.len(rail.rank());
  PhaseTimer local(call.op, zfcPhaseScatter);
  const RankPositions at = locate_all_ranks(call.set, ws, call.transport.size());
  const void* send = local_partial_rows(call, wire.type, wire.scale);
  size_t max_recv = 0;  // a node member's rows in this rank's range (step 1's scratch list)
  for (int r : call.nodes.members(call.nodes.node_of(call.transport.rank()))) {
    max_recv = std::max(max_recv, at.count_in(r, lo1, lo1 + len1));
  }
  const size_t ints = 2 * len1 + std::max(max_recv, static_cast<size_t>(N) * len2);
  int32_t* scratch = ws.get<int32_t>(Slot::kOwnerScratch, ints + len1 / 4 + 1);
  Hier h{at, call.nodes, ws, wire, dim, dim * wire.bytes, ranges, subs, lo1, len1, lo2, len2,
         ws.get<size_t>(Slot::kExchangeSizes, 4 * static_cast<size_t>(std::max(L, N))),
         scratch, reinterpret_cast<unsigned char*>(scratch + ints)};
  enter_every_rank(h, call.transport, L, N, ug, ws.get<int32_t>(Slot::kPeerReceived, ug + 1));
  local.stop();

  PhaseTimer timer(call.op, zfcPhaseRowExchange);
  size_t present = 0;
  ZFC_RETURN_IF_ERROR(reduce_in_node(h, node, call.transport.rank(), send, &present));
  float* out = ws.get<float>(Slot::kResultRows, ug * dim);
  const bool fp32 = wire.type == zfcFloat32;
  float* acc = fp32 ? out + lo2 * dim : ws.get<float>(Slot::kPartial, len2 * dim);
  ZFC_RETURN_IF_ERROR(reduce_across_nodes(h, rail, present, acc));
  if (fp32) {
    ZFC_RETURN_IF_ERROR(share(h, node, rail, reinterpret_cast<char*>(out)));
    call.finite = kernels::all_finite(out, ug * dim);
  } else {
    char* gathered = ws.get<char>(Slot::kGatheredRows, ug * h.row_bytes);
    kernels::encode(acc, len2 * dim, wire.type, 1.0f, gathered + lo2 * h.row_bytes);
    ZFC_RETURN_IF_ERROR(share(h, node, rail, gathered));
    call.finite = kernels::decode(gathered, ug * dim, wire.type, wire.scale, out);
  }
  call.out_rows = out;
  return Status::Ok();
}

template Status exchange_hierarchical<uint32_t>(SparseCall<uint32_t>&, Transport&, Transport&);
template Status exchange_hierarchical<uint64_t>(SparseCall<uint64_t>&, Transport&, Transport&);

}  // namespace zfc
