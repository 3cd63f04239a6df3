// The key-routed exchange, for large G: no rank learns every rank's keys. The owner of a key
// is a fixed function of the key (algo/key_owner.hpp), so each rank can send the (key, row)
// pairs of its distinct keys straight to their owners, in two rounds after the header:
//   1. an alltoallv of the pairs (Transport::alltoallv_blocks, so no round of counts goes
//      first), rows locally summed in token order and on the wire, each message led by its
//      pair count;
//   2. each owner merges the keys it received and sums their rows in the order of sums
//      (algo/rank_order.hpp); an allgather of the owners' (key, row) pairs, each block led
//      by the owner's report (its key count and what it received), which every rank puts in
//      global key order: the result.
// A rank's work and bytes are O(U_i) to send and O(what it receives), nothing O(G * U_i),
// and the sums are formed as in every other exchange, so fp32 results keep their bits.
#include <algorithm>
#include <cstring>

#include "algo/key_owner.hpp"
#include "algo/owner_ranges.hpp"
#include "algo/rank_order.hpp"
#include "core/stats.hpp"
#include "kernels/unique.hpp"

namespace zfc {
namespace {

size_t pad8(size_t bytes) { return (bytes + 7) / 8 * 8; }

// n (key, row) pairs on the wire: `lead` bytes (the count, or an owner's report), the n
// keys, then the n rows, each part padded to 8 bytes so that every block starts aligned for
// any key and row type.
struct PairBlock {
  size_t lead, key_bytes, row_bytes;
  size_t bytes(size_t n) const { return lead + pad8(n * key_bytes) + pad8(n * row_bytes); }
  size_t rows_at(size_t n) const { return lead + pad8(n * key_bytes); }
};

// What each owner tells every rank after summing: the sizes of the shared blocks, and what
// it received in the routing (for the ledger, which no other rank could know).
struct OwnerReport {
  uint64_t distinct;
  uint64_t received_bytes;
};

struct Sizes {
  size_t *send_bytes, *send_displs, *recv_bytes, *recv_displs;
};

// Step 1's send buffer: this rank's keys and wire rows, grouped by owner, in key order, each
// owner's block led by its pair count.
template <class K>
char* pack_pairs(const K* keys, const int32_t* owner_of, size_t ui, const float* partial,
                 size_t dim, const Wire& wire, const PairBlock& block, const uint64_t* counts,
                 const Sizes& s, int size, Workspace& ws) {
  const size_t total = s.send_displs[size - 1] + s.send_bytes[size - 1];
  char* packed = ws.get<char>(Slot::kWireSend, total);
  size_t* cursor = ws.get<size_t>(Slot::kPeerReceived, static_cast<size_t>(size));
  std::fill(cursor, cursor + size, 0);
  for (int j = 0; j < size; ++j) {
    std::memcpy(packed + s.send_displs[j], &counts[j], sizeof(uint64_t));
  }
  for (size_t i = 0; i < ui; ++i) {
    const int j = owner_of[i];
    const size_t c = cursor[j]++;
    char* base = packed + s.send_displs[j];
    reinterpret_cast<K*>(base + block.lead)[c] = keys[i];
    kernels::encode(partial + i * dim, dim, wire.type, wire.scale,
                    base + block.rows_at(counts[j]) + c * block.row_bytes);
  }
  return packed;
}

// The lead of every rank's block -- a pair count, or an owner's report, which starts with its
// key count -- checked to frame the block, so that a malformed message is refused instead of
// read past.
template <class Lead>
Status read_leads(const char* in, const Sizes& s, const PairBlock& block, int size, int me,
                  const char* what, Lead* out) {
  static_assert(sizeof(Lead) >= sizeof(uint64_t), "a lead starts with its pair count");
  for (int r = 0; r < size; ++r) {
    uint64_t n = 0;
    const bool framed = s.recv_bytes[r] >= sizeof(Lead);
    if (framed) std::memcpy(&n, in + s.recv_displs[r], sizeof n);
    if (!framed || n > s.recv_bytes[r] || block.bytes(n) != s.recv_bytes[r]) {
      return error(zfcTransportError, "rank %d: the %s from rank %d (%zu bytes) do not frame "
                   "their count", me, what, r, s.recv_bytes[r]);
    }
    std::memcpy(&out[r], in + s.recv_displs[r], sizeof(Lead));
  }
  return Status::Ok();
}

// Step 2: the owner's distinct keys (into *uniq) and their sums (acc, u x dim), every rank's
// pairs added in the order of sums. Returns u.
template <class K>
size_t sum_routed(SparseCall<K>& call, const char* in, const uint64_t* from, const Sizes& s,
                  const PairBlock& block, const Wire& wire, K** uniq, float** acc) {
  Workspace& ws = call.ws;
  const int size = call.transport.size();
  const size_t dim = call.spec.dim;
  size_t total = 0, largest = 0;
  for (int r = 0; r < size; ++r) {
    total += from[r];
    largest = std::max(largest, static_cast<size_t>(from[r]));
  }
  size_t u = 0;
  {
    PhaseTimer timer(call.op, zfcPhaseMerge);
    K* keys = ws.get<K>(Slot::kGatheredKeys, total);
    size_t at = 0;
    for (int r = 0; r < size; ++r) {
      const K* rk = reinterpret_cast<const K*>(in + s.recv_displs[r] + block.lead);
      std::copy(rk, rk + from[r], keys + at);
      at += from[r];
    }
    const uint64_t bound = static_cast<uint64_t>(call.spec.vocab);
    *uniq = ws.get<K>(Slot::kOwnerKeys, total);
    void* scratch = ws.get<char>(Slot::kSortScratch,
                                 kernels::unique_scratch_bytes<K>(total, bound, false));
    u = kernels::sorted_unique(keys, total, bound, *uniq, scratch);
  }
  PhaseTimer timer(call.op, zfcPhaseScatter);
  *acc = ws.get<float>(Slot::kDense, u * dim);
  int32_t* pos = ws.get<int32_t>(Slot::kPositions, largest);
  accumulate_in_rank_order(call.nodes, ws, *acc, u, dim, [&](int r, float* dst) {
    const char* base = in + s.recv_displs[r];
    kernels::locate_sorted(reinterpret_cast<const K*>(base + block.lead), from[r], *uniq, u,
                           pos);
    kernels::scatter_add_rows(base + block.rows_at(from[r]), wire.type, pos, from[r], dim,
                              dst);
  });
  return u;
}

// Step 2's end: the owners' blocks, gathered, become the global set and the U_g x dim result
// in key order. Returns whether every value is finite.
template <class K>
bool place_shared(SparseCall<K>& call, const char* gathered, const OwnerReport* reports,
                  const size_t* displs, const PairBlock& block, const Wire& wire, float** out) {
  Workspace& ws = call.ws;
  const int size = call.transport.size();
  const size_t dim = call.spec.dim;
  size_t ug = 0, largest = 0;
  for (int j = 0; j < size; ++j) {
    ug += reports[j].distinct;
    largest = std::max(largest, static_cast<size_t>(reports[j].distinct));
  }
  int32_t* pos = ws.get<int32_t>(Slot::kPositions, largest);
  {
    PhaseTimer timer(call.op, zfcPhaseMerge);
    K* keys = ws.get<K>(Slot::kGatheredKeys, ug);
    size_t at = 0;
    for (int j = 0; j < size; ++j) {
      const K* jk = reinterpret_cast<const K*>(gathered + displs[j] + block.lead);
      std::copy(jk, jk + reports[j].distinct, keys + at);
      at += reports[j].distinct;
    }
    call.set.merge_from(keys, ug);  // the owners' sets are disjoint
  }
  PhaseTimer timer(call.op, zfcPhaseScatter);
  *out = ws.get<float>(Slot::kResultRows, ug * dim);
  bool finite = true;
  for (int j = 0; j < size; ++j) {
    const size_t n = reports[j].distinct;
    const char* base = gathered + displs[j];
    kernels::locate_sorted(reinterpret_cast<const K*>(base + block.lead), n, call.set.global(),
                           ug, pos);
    finite &= decode_rows_to(base + block.rows_at(n), pos, n, dim, wire, *out);
  }
  return finite;
}

}  // namespace

template <class K>
Status exchange_key_routed(SparseCall<K>& call) {
  Transport& t = call.transport;
  Workspace& ws = call.ws;
  const int size = t.size(), me = t.rank();
  const size_t G = static_cast<size_t>(size), dim = call.spec.dim;
  const size_t ui = call.set.local_unique_count();
  const Wire wire = wire_of(call.spec);
  const PairBlock pairs{sizeof(uint64_t), sizeof(K), dim * wire.bytes};
  size_t* sizes = ws.get<size_t>(Slot::kExchangeSizes, 4 * G);
  const Sizes s{sizes, sizes + G, sizes + 2 * G, sizes + 3 * G};
  uint64_t* counts = ws.get<uint64_t>(Slot::kCounts, 2 * G);
  uint64_t* from = counts + G;
  int32_t* owner_of = ws.get<int32_t>(Slot::kLocate, ui);
  const K* keys = call.set.local_unique();
  const char* send = nullptr;
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    std::fill(counts, counts + G, 0);
    for (size_t i = 0; i < ui; ++i) {
      owner_of[i] = key_owner(keys[i], size);
      ++counts[owner_of[i]];
    }
    const float* partial =
        static_cast<const float*>(local_partial_rows(call, zfcFloat32, 1.0f));
    for (int j = 0; j < size; ++j) s.send_bytes[j] = pairs.bytes(counts[j]);
    pack_displacements(s.send_bytes, s.send_displs, size);
    send = pack_pairs(keys, owner_of, ui, partial, dim, wire, pairs, counts, s, size, ws);
  }
  char* in = nullptr;
  {
    PhaseTimer timer(call.op, zfcPhaseRowExchange);
    ZFC_RETURN_IF_ERROR(t.alltoallv_blocks(send, s.send_bytes, s.send_displs, s.recv_bytes,
                                           s.recv_displs, [&](size_t total) {
                                             in = ws.get<char>(Slot::kRoutedPairs, total);
                                             return in;
                                           }));
  }
  ZFC_RETURN_IF_ERROR(read_leads(in, s, pairs, size, me, "key-routed pairs", from));
  K* uniq = nullptr;
  float* acc = nullptr;
  const size_t u = sum_routed(call, in, from, s, pairs, wire, &uniq, &acc);

  PhaseTimer timer(call.op, zfcPhaseRowExchange);
  const PairBlock shared{sizeof(OwnerReport), sizeof(K), dim * wire.bytes};
  OwnerReport mine{u, 0};
  for (int r = 0; r < size; ++r) {
    if (r != me) mine.received_bytes += s.recv_bytes[r];
  }
  char* own = ws.get<char>(Slot::kWireSend, shared.bytes(u));
  std::memcpy(own, &mine, sizeof mine);
  std::copy(uniq, uniq + u, reinterpret_cast<K*>(own + shared.lead));
  const size_t rows_end = shared.rows_at(u) + u * dim * wire.bytes;
  // The padding too, so that every byte sent is defined.
  std::fill(own + shared.lead + u * sizeof(K), own + shared.rows_at(u), '\0');
  std::fill(own + rows_end, own + shared.bytes(u), '\0');
  kernels::encode(acc, u * dim, wire.type, 1.0f, own + shared.rows_at(u));  // already scaled
  char* gathered = nullptr;
  ZFC_RETURN_IF_ERROR(t.allgather_blocks(own, shared.bytes(u), s.recv_bytes, s.recv_displs,
                                         [&](size_t total) {
                                           gathered = ws.get<char>(Slot::kGatheredRows, total);
                                           return gathered;
                                         }));
  OwnerReport* reports = ws.get<OwnerReport>(Slot::kOwnerReports, G);
  ZFC_RETURN_IF_ERROR(read_leads(gathered, s, shared, size, me, "summed pairs", reports));
  for (int r = 0; r < size; ++r) {
    if (r != me) t.note_received(r, reports[r].received_bytes);
  }
  timer.stop();
  float* out = nullptr;
  call.finite = place_shared(call, gathered, reports, s.recv_displs, shared, wire, &out);
  call.out_rows = out;
  return Status::Ok();
}

template Status exchange_key_routed<uint32_t>(SparseCall<uint32_t>&);
template Status exchange_key_routed<uint64_t>(SparseCall<uint64_t>&);

}  // namespace zfc
