// The owner-partitioned exchange. Every position of the global set has one owner, from the
// balanced, holder-aware map of algo/owner_map.hpp. Each rank sends the locally summed rows
// of its distinct keys to their owners (one alltoallv); each owner adds what it received in
// the order of sums and allgathers its rows, which every rank puts at their positions. Per
// rank that moves about (U_i + U_g) x D values each way instead of the allreduce's 2 U_g x D,
// and a row whose owner holds it is not sent to it at all.
#include <algorithm>

#include "algo/algorithms.hpp"
#include "algo/cost_terms.hpp"
#include "algo/owner_map.hpp"
#include "algo/rank_order.hpp"
#include "core/stats.hpp"

namespace zfc {
namespace {

// What this rank sends and receives: rows grouped by owner, each group in position order.
// The block a rank keeps for itself (the rows it holds and owns) is laid out in the send
// buffer with the others but does not travel: send_bytes[me] and recv_bytes[me] are 0 and
// the owner reads it where it was packed (self_rows of them at send_displs[me]).
struct OwnerLayout {
  size_t *send_bytes, *send_displs, *recv_bytes, *recv_displs, *gather_bytes, *gather_displs;
  size_t self_rows;
};

OwnerLayout owner_layout(const OwnerMap& map, const RankPositions& at, int me, size_t row_bytes,
                         size_t* sizes) {
  const int size = map.parts;
  OwnerLayout l{sizes,            sizes + size,     sizes + 2 * size,
                sizes + 3 * size, sizes + 4 * size, sizes + 5 * size, 0};
  std::fill(l.send_bytes, l.send_bytes + size, 0);
  std::fill(l.recv_bytes, l.recv_bytes + size, 0);
  for (size_t i = 0; i < at.counts[me]; ++i) l.send_bytes[map.owner[at.of(me)[i]]] += row_bytes;
  for (size_t q = 0; q < map.owned_count[me]; ++q) {
    const int32_t p = map.owned_by(me)[q];
    for (int32_t k = map.holder_displs[p]; k < map.holder_displs[p + 1]; ++k) {
      if (map.holders[k] != me) l.recv_bytes[map.holders[k]] += row_bytes;
    }
  }
  for (int j = 0; j < size; ++j) l.gather_bytes[j] = map.owned_count[j] * row_bytes;
  pack_displacements(l.send_bytes, l.send_displs, size);
  pack_displacements(l.recv_bytes, l.recv_displs, size);
  pack_displacements(l.gather_bytes, l.gather_displs, size);
  l.self_rows = l.send_bytes[me] / row_bytes;
  l.send_bytes[me] = 0;
  return l;
}

// This rank's locally summed rows (fp32, in position order) laid out by owner on the wire.
char* pack_by_owner(const OwnerMap& map, const RankPositions& at, int me, const float* partial,
                    size_t dim, const Wire& wire, const OwnerLayout& l, Workspace& ws) {
  const size_t row_bytes = wire.row_bytes(dim);
  char* packed = ws.get<char>(Slot::kWireSend, at.counts[me] * row_bytes);
  size_t* cursor = ws.get<size_t>(Slot::kPeerReceived, static_cast<size_t>(map.parts));
  std::copy(l.send_displs, l.send_displs + map.parts, cursor);
  for (size_t i = 0; i < at.counts[me]; ++i) {
    char* dst = packed + cursor[map.owner[at.of(me)[i]]];
    cursor[map.owner[at.of(me)[i]]] += row_bytes;
    wire.encode(partial + i * dim, 1, dim, wire.scale, dst,
                wire.at(kernels::kHopSend, position_ids(at.of(me) + i)));
  }
  return packed;
}

// acc (the owned rows, in owned order) = the sum of what every holder sent, in the order of
// sums. Rank r's rows arrive in position order: the owned positions it holds; this rank's
// own are read from the send buffer. In plain rank order a row's first holder writes it
// from +0 and the others add (no zero fill); ranks grouped into nodes sum as rank_order.hpp
// says, from zeroed sums.
void sum_owned(const OwnerMap& map, const NodeMap& nodes, Workspace& ws, int me,
               const char* rows_in, const char* self_in, const OwnerLayout& l, const Wire& wire,
               size_t dim, float* acc) {
  const size_t mine = map.owned_count[me], row_bytes = wire.row_bytes(dim);
  const int parts = map.parts;
  // Rank r's slots at first[r]: the others' blocks as they arrived, then this rank's.
  size_t* first = ws.get<size_t>(Slot::kPeerReceived, 2 * static_cast<size_t>(parts));
  size_t* cursor = first + parts;
  const size_t arrived = (l.recv_displs[parts - 1] + l.recv_bytes[parts - 1]) / row_bytes;
  for (int r = 0; r < parts; ++r) first[r] = r == me ? arrived : l.recv_displs[r] / row_bytes;
  int32_t* slots = ws.get<int32_t>(Slot::kPositions, arrived + l.self_rows);
  std::copy(first, first + parts, cursor);
  for (size_t q = 0; q < mine; ++q) {
    const int32_t p = map.owned_by(me)[q];
    for (int32_t k = map.holder_displs[p]; k < map.holder_displs[p + 1]; ++k) {
      slots[cursor[map.holders[k]]++] = static_cast<int32_t>(q);
    }
  }
  auto rows_of = [&](int r, size_t* n) {
    *n = r == me ? l.self_rows : l.recv_bytes[r] / row_bytes;
    return r == me ? self_in : rows_in + l.recv_displs[r];
  };
  if (!nodes.grouped()) {  // plain rank order: each row written by its first holder
    uint8_t* touched = ws.get<uint8_t>(Slot::kTouchedRows, mine);
    std::fill(touched, touched + mine, uint8_t{0});
    for (int r = 0; r < parts; ++r) {
      size_t n = 0;
      const char* in = rows_of(r, &n);
      wire.format->accumulate_rows(in, slots + first[r], n, dim, acc, touched);
    }
    return;
  }
  accumulate_in_rank_order(nodes, ws, acc, mine, dim, [&](int r, const RowSum& sum) {
    size_t n = 0;
    const char* in = rows_of(r, &n);
    sum.add(in, *wire.format, slots + first[r], n);
  });
}

}  // namespace

template <class K>
Status exchange_owner_partitioned(SparseCall<K>& call) {
  Transport& t = call.transport;
  Workspace& ws = call.ws;
  const int size = t.size(), me = t.rank();
  const size_t dim = call.spec.dim, ug = call.set.global_count();
  const Wire wire = wire_of(call);
  const size_t row_bytes = wire.row_bytes(dim);

  size_t* sizes = ws.get<size_t>(Slot::kExchangeSizes, 6 * static_cast<size_t>(size));
  OwnerMap map;
  OwnerLayout l{};
  const char* send = nullptr;
  RankPositions at{};
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    at = rank_positions(call.set);
    map = balanced_owners(at, ug, size, ws);
    l = owner_layout(map, at, me, row_bytes, sizes);
    const float* partial = local_partial_rows(call);
    send = pack_by_owner(map, at, me, partial, dim, wire, l, ws);
  }
  char* rows_in = ws.get<char>(Slot::kOwnerRows, l.recv_displs[size - 1] + l.recv_bytes[size - 1]);
  {
    PhaseTimer timer(call.op, zfcPhaseRowExchange);
    uint64_t* received = ws.get<uint64_t>(Slot::kPeerReceived, static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) received[r] = map.received_rows[r] * row_bytes;
    ZFC_RETURN_IF_ERROR(t.alltoallv(send, l.send_bytes, l.send_displs, rows_in, l.recv_bytes,
                                    l.recv_displs, received));
  }
  // The owned rows are summed where the owners' gather puts them, so this rank's block does
  // not travel (the gather is in place).
  const size_t mine = map.owned_count[me];
  char* gathered = ws.get<char>(Slot::kGatheredRows, ug * row_bytes);
  char* own = gathered + l.gather_displs[me];
  float* acc = wire.plain_fp32() ? reinterpret_cast<float*>(own)
                                : ws.get<float>(Slot::kDense, mine * dim);
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    sum_owned(map, call.nodes, ws, me, rows_in, send + l.send_displs[me], l, wire, dim, acc);
    // Already scaled: the rows were summed as they came off the wire.
    if (!wire.plain_fp32()) {
      const int32_t* owned = map.owned + l.gather_displs[me] / row_bytes;
      wire.encode(acc, mine, dim, 1.0f, own, wire.at(kernels::kHopOwnerSum, position_ids(owned)));
    }
  }
  PhaseTimer timer(call.op, zfcPhaseRowExchange);
  float* out = nullptr;
  ZFC_RETURN_IF_ERROR(result_rows(call, ug, &out));
  ZFC_RETURN_IF_ERROR(t.allgatherv(own, gathered, l.gather_bytes, l.gather_displs));
  // The gathered rows are the owned lists back to back: row q belongs at owned[q]. One pass
  // puts each there (decoding a compressed wire) and tests it for finiteness.
  call.finite = decode_rows_to(gathered, map.owned, ug, dim, wire, out);
  call.out_rows = out;
  return Status::Ok();
}

template Status exchange_owner_partitioned<uint32_t>(SparseCall<uint32_t>&);
template Status exchange_owner_partitioned<uint64_t>(SparseCall<uint64_t>&);

// ---- the cost model's formula (algo/algorithms.hpp, docs/algorithms.md) ----
namespace cost {

void price_owner_partitioned(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double ug = in.global_unique, ui = in.max_local_unique;
  scatter(c, ui);
  c.local(kLocateBytesPerKey * in.local_unique + encode_bytes(c, ui * d));
  owner_reduce(c, Level::kFlat, ui, in.local_unique / c.g(), ug / c.g());
  // The owners' gather lands in scratch; one pass puts each row at its position (decoding a
  // compressed wire) and tests it.
  c.local(encode_bytes(c, ug / c.g() * d) + ug * d * (w + 4.0));
  owner_share(c, Level::kFlat, ug);
  c.scratch(ui * d * (4.0 + w) + in.local_unique / c.g() * d * w + 4.0 * ug * d + ug * d * w);
}

}  // namespace cost

}  // namespace zfc
