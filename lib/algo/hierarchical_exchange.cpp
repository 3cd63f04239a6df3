// The hierarchical exchange, for L ranks on each of N nodes. Every position p of the global
// set has a local index j(p) and a node k(p), from the balanced map of algo/owner_map.hpp:
//   1. inside each node, every rank sends its locally summed rows to the members of the
//      rows' local indices; member j sums the node's rows of its positions;
//   2. across nodes, between the ranks of equal local index (a "rail"), each rank sends its
//      node's sums to the nodes k(p), whose member adds them in node order;
//   3. the rail allgathers the rows of local index j, then the node allgathers them all;
//      every rank puts the rows, which arrive grouped by (j, k), at their positions.
// Only step 2 and the rail gather cross between nodes, once per row present on a node
// instead of once per rank holding it. Sums run inside the node in rank order, then over
// nodes in node order: the order of algo/rank_order.hpp, so fp32 results keep their bits.
#include <algorithm>

#include "algo/algorithms.hpp"
#include "algo/cost_terms.hpp"
#include "algo/owner_map.hpp"
#include "core/stats.hpp"

namespace zfc {
namespace {

// Everything the steps share: the map, this rank's place, the scratch.
struct Hier {
  const RankPositions& at;
  const NodeMap& nodes;
  const NodeOwnerMap& map;
  Workspace& ws;
  Wire wire;
  size_t dim, row_bytes;
  int me, j, m;            // world rank, local index, node
  size_t* sizes;           // 8 lists of max(L, N) entries
  int32_t* slot;           // U_g entries: a position's row among this rank's node sums
  unsigned char* present;  // U_g flags, clear between uses
};

// This rank's locally summed rows (fp32, in position order) laid out by local index.
const char* pack_by_local(const Hier& h, const float* partial, const size_t* displs) {
  const size_t n = h.at.counts[h.me];
  char* packed = h.ws.get<char>(Slot::kWireSend, n * h.row_bytes);
  size_t* cursor = h.sizes + 2 * h.map.locals;  // the receive lists are not made yet
  std::copy(displs, displs + h.map.locals, cursor);
  for (size_t i = 0; i < n; ++i) {
    const int j = h.map.local[h.at.of(h.me)[i]];
    h.wire.encode(partial + i * h.dim, 1, h.dim, h.wire.scale, packed + cursor[j],
                  h.wire.at(kernels::kHopSend, position_ids(h.at.of(h.me) + i)));
    cursor[j] += h.row_bytes;
  }
  return packed;
}

// Step 1: this rank's rows to the members of their local indices, and this member's sums
// of the node's rows of local index j: kNodeRows holds them encoded, grouped by k(p), and
// rail_bytes[k] their sizes. Returns how many there are.
Status reduce_in_node(Hier& h, Transport& node, const float* partial, size_t* rail_bytes,
                      size_t* present_rows) {
  const int L = node.size();
  const std::vector<int>& members = h.nodes.members(h.m);
  size_t *send_bytes = h.sizes, *send_displs = h.sizes + L;
  size_t *recv_bytes = h.sizes + 2 * L, *recv_displs = h.sizes + 3 * L;
  std::fill(send_bytes, send_bytes + L, 0);
  for (size_t i = 0; i < h.at.counts[h.me]; ++i) {
    send_bytes[h.map.local[h.at.of(h.me)[i]]] += h.row_bytes;
  }
  pack_displacements(send_bytes, send_displs, L);
  const char* send = pack_by_local(h, partial, send_displs);
  // This member's own block is read where it was packed, not sent to itself.
  const char* own = send + send_displs[h.j];
  send_bytes[h.j] = 0;
  size_t most = 0;  // a member's rows of local index j, the longest list below
  for (int i = 0; i < L; ++i) {
    const int r = members[static_cast<size_t>(i)];
    size_t n = 0;
    for (size_t q = 0; q < h.at.counts[r]; ++q) {
      const int32_t p = h.at.of(r)[q];
      if (h.map.local[p] == h.j) {
        ++n;
        h.present[p] = 1;
      }
    }
    recv_bytes[i] = i == h.j ? 0 : n * h.row_bytes;
    most = std::max(most, n);
  }
  pack_displacements(recv_bytes, recv_displs, L);
  char* in = h.ws.get<char>(Slot::kOwnerRows, recv_displs[L - 1] + recv_bytes[L - 1]);
  ZFC_RETURN_IF_ERROR(node.alltoallv(send, send_bytes, send_displs, in, recv_bytes,
                                     recv_displs));
  // The node's positions of local index j, grouped by k(p) and ascending in each group.
  size_t n = 0;
  for (int k = 0; k < h.map.nodes; ++k) {
    const int32_t* group = h.map.order + h.map.group_begin(h.j, k);
    size_t in_group = 0;
    for (size_t q = 0; q < h.map.group_len(h.j, k); ++q) {
      if (!h.present[group[q]]) continue;
      h.present[group[q]] = 0;
      h.slot[group[q]] = static_cast<int32_t>(n++);
      ++in_group;
    }
    rail_bytes[k] = in_group * h.row_bytes;
  }
  // Their sums, members in rank order, each member's rows in its position order: a row's
  // first member writes it from +0, the others add.
  float* sums = h.ws.get<float>(Slot::kDense, n * h.dim);
  int32_t* rel = h.ws.get<int32_t>(Slot::kNodeLists, most);
  uint8_t* touched = h.ws.get<uint8_t>(Slot::kTouchedRows, n);
  std::fill(touched, touched + n, uint8_t{0});
  for (int i = 0; i < L; ++i) {
    const int r = members[static_cast<size_t>(i)];
    size_t c = 0;
    for (size_t q = 0; q < h.at.counts[r]; ++q) {
      const int32_t p = h.at.of(r)[q];
      if (h.map.local[p] == h.j) rel[c++] = h.slot[p];
    }
    h.wire.format->accumulate_rows(i == h.j ? own : in + recv_displs[i], rel, c, h.dim, sums,
                                   touched);
  }
  char* node_rows = h.ws.get<char>(Slot::kNodeRows, n * h.row_bytes);
  // Already scaled. The node's sums are numbered by their place among them.
  h.wire.encode(sums, n, h.dim, 1.0f, node_rows,
                h.wire.at(kernels::kHopNodeSum, kernels::RowIds::counting(0)));
  *present_rows = n;
  return Status::Ok();
}

// Step 2: the node's sums to the nodes that own them; acc = this rank's owned rows (group
// (j, m)), the sum over nodes.
Status reduce_across_nodes(Hier& h, Transport& rail, const size_t* send_bytes, size_t present,
                           float* acc) {
  const int N = rail.size();
  size_t *send_displs = h.sizes + N;
  size_t *recv_bytes = h.sizes + 2 * N, *recv_displs = h.sizes + 3 * N;
  pack_displacements(send_bytes, send_displs, N);
  // For each node, the owned rows it holds, ascending: the order its member sends them in.
  const int32_t* owned = h.map.order + h.map.group_begin(h.j, h.m);
  const size_t len = h.map.group_len(h.j, h.m);
  // f(n, q) for every node n holding owned row q, q ascending.
  size_t* seen = h.sizes + 5 * static_cast<size_t>(std::max(h.map.locals, N));
  const auto each_holding_node = [&](auto&& f) {
    std::fill(seen, seen + N, ~size_t{0});
    for (size_t q = 0; q < len; ++q) {
      const int32_t p = owned[q];
      for (int32_t k = h.map.holder_displs[p]; k < h.map.holder_displs[p + 1]; ++k) {
        const int n = h.nodes.node_of(h.map.holders[k]);
        if (seen[n] == q) continue;
        seen[n] = q;
        f(n, q);
      }
    }
  };
  // Lists of the owned rows each node sends, in node order (this node's included), and
  // where each node's list starts (`cursor`, then its end).
  size_t* start = h.sizes + 4 * static_cast<size_t>(std::max(h.map.locals, N));
  std::fill(start, start + N, 0);
  each_holding_node([&](int n, size_t) { ++start[n]; });
  size_t total = 0;
  for (int n = 0; n < N; ++n) {
    const size_t c = start[n];
    start[n] = total;
    total += c;
    // This node's own sums are read where step 1 left them, not sent to itself.
    recv_bytes[n] = n == h.m ? 0 : c * h.row_bytes;
  }
  pack_displacements(recv_bytes, recv_displs, N);
  const size_t arrived = (recv_displs[N - 1] + recv_bytes[N - 1]) / h.row_bytes;
  int32_t* lists = h.ws.get<int32_t>(Slot::kNodeLists, total);
  {
    size_t* cursor = h.sizes + 6 * static_cast<size_t>(std::max(h.map.locals, N));
    std::copy(start, start + N, cursor);
    each_holding_node([&](int n, size_t q) { lists[cursor[n]++] = static_cast<int32_t>(q); });
  }
  char* in = h.ws.get<char>(Slot::kOwnerRows, arrived * h.row_bytes);
  const char* node_rows = h.ws.get<char>(Slot::kNodeRows, present * h.row_bytes);
  const char* own = node_rows + send_displs[h.m];
  const size_t own_rows = send_bytes[h.m] / h.row_bytes;
  size_t* rail_send = h.sizes + 7 * static_cast<size_t>(std::max(h.map.locals, N));
  std::copy(send_bytes, send_bytes + N, rail_send);
  rail_send[h.m] = 0;
  ZFC_RETURN_IF_ERROR(rail.alltoallv(node_rows, rail_send, send_displs, in, recv_bytes,
                                     recv_displs));
  // The sum over nodes in node order: a row's first node writes it from +0, the others
  // add. Every owned row has a holding node.
  uint8_t* touched = h.ws.get<uint8_t>(Slot::kTouchedRows, len);
  std::fill(touched, touched + len, uint8_t{0});
  for (int n = 0; n < N; ++n) {
    const bool self = n == h.m;
    const size_t rows = self ? own_rows : recv_bytes[n] / h.row_bytes;
    h.wire.format->accumulate_rows(self ? own : in + recv_displs[n], lists + start[n], rows,
                                   h.dim, acc, touched);
  }
  return Status::Ok();
}

// Step 3: base (U_g rows of row_bytes, in the map's order) holds this rank's owned rows at
// their place; gather local index j's rows on the rail, then all of them inside the node.
Status share(Hier& h, Transport& node, Transport& rail, char* base) {
  const int L = node.size(), N = rail.size();
  size_t *bytes = h.sizes, *displs = h.sizes + std::max(L, N);
  const size_t first = h.map.group_begin(h.j, 0);
  for (int k = 0; k < N; ++k) {
    bytes[k] = h.map.group_len(h.j, k) * h.row_bytes;
    displs[k] = (h.map.group_begin(h.j, k) - first) * h.row_bytes;
  }
  char* chunk = base + first * h.row_bytes;
  ZFC_RETURN_IF_ERROR(rail.allgatherv(chunk + displs[rail.rank()], chunk, bytes, displs));
  for (int j = 0; j < L; ++j) {
    bytes[j] = (h.map.group_displs[(j + 1) * N] - h.map.group_displs[j * N]) * h.row_bytes;
    displs[j] = h.map.group_displs[j * N] * h.row_bytes;
  }
  return node.allgatherv(chunk, base, bytes, displs);
}

}  // namespace

template <class K>
Status exchange_hierarchical(SparseCall<K>& call, Transport& node, Transport& rail) {
  Workspace& ws = call.ws;
  const int L = node.size(), N = rail.size(), me = call.transport.rank();
  const size_t ug = call.set.global_count(), dim = call.spec.dim;
  const Wire wire = wire_of(call);
  PhaseTimer local(call.op, zfcPhaseScatter);
  const RankPositions at = rank_positions(call.set);
  const NodeOwnerMap map = balanced_node_owners(at, ug, call.nodes, ws);
  // The communicator's ledger: the node and rail transports see only their own group.
  for (int r = 0; r < call.transport.size(); ++r) {
    call.transport.note_received(r, map.received_rows[r] * wire.row_bytes(dim));
  }
  const float* partial = local_partial_rows(call);
  unsigned char* present = ws.get<unsigned char>(Slot::kOwnerScratch, ug);
  std::fill(present, present + ug, 0);
  Hier h{at,
         call.nodes,
         map,
         ws,
         wire,
         dim,
         wire.row_bytes(dim),
         me,
         call.nodes.local_index(me),
         call.nodes.node_of(me),
         ws.get<size_t>(Slot::kExchangeSizes, 8 * static_cast<size_t>(std::max(L, N))),
         ws.get<int32_t>(Slot::kPositions, ug),
         present};
  local.stop();

  PhaseTimer timer(call.op, zfcPhaseRowExchange);
  size_t* rail_bytes = ws.get<size_t>(Slot::kReduceSizes, static_cast<size_t>(N));
  size_t present_rows = 0;
  ZFC_RETURN_IF_ERROR(reduce_in_node(h, node, partial, rail_bytes, &present_rows));
  float* out = nullptr;
  ZFC_RETURN_IF_ERROR(result_rows(call, ug, &out));
  // The owned rows are summed where the shared rows put them (fp32), or encoded there.
  const size_t mine = map.group_begin(h.j, h.m), len = map.group_len(h.j, h.m);
  char* gathered = ws.get<char>(Slot::kGatheredRows, ug * h.row_bytes);
  char* own = gathered + mine * h.row_bytes;
  const bool fp32 = wire.plain_fp32();
  float* acc = fp32 ? reinterpret_cast<float*>(own) : ws.get<float>(Slot::kPartial, len * dim);
  ZFC_RETURN_IF_ERROR(reduce_across_nodes(h, rail, rail_bytes, present_rows, acc));
  if (!fp32) {
    wire.encode(acc, len, dim, 1.0f, own,
                wire.at(kernels::kHopOwnerSum, position_ids(map.order + mine)));
  }
  ZFC_RETURN_IF_ERROR(share(h, node, rail, gathered));
  // Row q of the gathered rows belongs at position order[q]: one pass puts each there
  // (decoding a compressed wire) and tests it for finiteness.
  call.finite = decode_rows_to(gathered, map.order, ug, dim, wire, out);
  call.out_rows = out;
  return Status::Ok();
}

template Status exchange_hierarchical<uint32_t>(SparseCall<uint32_t>&, Transport&, Transport&);
template Status exchange_hierarchical<uint64_t>(SparseCall<uint64_t>&, Transport&, Transport&);

// ---- the cost model's formula (algo/algorithms.hpp, docs/algorithms.md) ----
namespace cost {

// Where it cannot run (one node, or nodes of one rank) it is priced as owner_partitioned.
void price_hierarchical(Cost& c) {
  if (!can_run_hierarchical(c.in)) {
    price_owner_partitioned(c);
    return;
  }
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double ug = in.global_unique, ui = in.max_local_unique;
  const double L = c.per_node();
  const double un = node_unique(in, static_cast<int>(L));
  scatter(c, ui);
  c.local(kLocateBytesPerKey * in.local_unique + encode_bytes(c, ui * d));
  owner_reduce(c, Level::kNode, ui, in.local_unique / c.g(), un / L);
  c.local(encode_bytes(c, un / L * d) + un / L * d * 4.0);
  owner_reduce(c, Level::kRail, un / L, un / L, ug / c.g());
  owner_share(c, Level::kRail, ug / L);
  owner_share(c, Level::kNode, ug);
  c.local(encode_bytes(c, ug / c.g() * d) + ug * d * (w + 4.0));
  c.scratch(ui * d * (4.0 + w) + 2.0 * un / L * d * (w + 4.0) + 4.0 * ug * d + ug * d * w +
            16.0 * ug / L);
}

}  // namespace cost

}  // namespace zfc
