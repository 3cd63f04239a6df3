// The (key, row) pairs of the routed exchanges (the key-routed sparse reduce and the
// sharded tables' update): each rank sends the pairs of its distinct keys to their owners in
// one alltoallv, and each owner sums what it receives in the order of sums.
#pragma once

#include <algorithm>
#include <cstring>

#include "algo/key_owner.hpp"
#include "algo/owner_ranges.hpp"
#include "algo/rank_order.hpp"
#include "core/stats.hpp"
#include "kernels/unique.hpp"

namespace zfc {

inline size_t pad8(size_t bytes) { return (bytes + 7) / 8 * 8; }

// n (key, row) pairs on the wire: `lead` bytes (the count, or an owner's report), the n
// keys, then the n rows, each part padded to 8 bytes so that every block starts aligned for
// any key and row type.
struct PairBlock {
  size_t lead, key_bytes, row_bytes;
  size_t bytes(size_t n) const { return lead + pad8(n * key_bytes) + pad8(n * row_bytes); }
  size_t rows_at(size_t n) const { return lead + pad8(n * key_bytes); }
};

struct PairSizes {
  size_t *send_bytes, *send_displs, *recv_bytes, *recv_displs;
};

// Step 1's send buffer: this rank's keys and wire rows, grouped by owner, in key order, each
// owner's block led by its pair count.
template <class K>
char* pack_pairs(const K* keys, const int32_t* owner_of, size_t ui, const float* partial,
                 size_t dim, const Wire& wire, const PairBlock& block, const uint64_t* counts,
                 const PairSizes& s, int size, Workspace& ws) {
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
Status read_leads(const char* in, const PairSizes& s, const PairBlock& block, int size, int me,
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

// What an owner received in the routing: rank r's block at in + sizes.recv_displs[r],
// sizes.recv_bytes[r] bytes, holding from[r] pairs; from_peers bytes from the other ranks,
// which the owner's report tells every rank (their ledgers cannot know it otherwise).
struct RoutedPairs {
  char* in = nullptr;
  const uint64_t* from = nullptr;
  PairSizes sizes{};
  PairBlock block{};
  uint64_t from_peers = 0;
};

// Step 1: the (key, row) pairs of this rank's distinct keys, rows summed in token order and
// encoded for `wire`, sent to the keys' owners (algo/key_owner.hpp) in one alltoallv, each
// owner's block led by its pair count (routed as routed_route chooses); *out describes what
// this rank received.
template <class K>
Status route_pairs(SparseCall<K>& call, const Wire& wire, RoutedPairs* out) {
  Transport& t = call.transport;
  Workspace& ws = call.ws;
  const int size = t.size();
  const size_t G = static_cast<size_t>(size), dim = call.spec.dim;
  const size_t ui = call.set.local_unique_count();
  const PairBlock pairs{sizeof(uint64_t), sizeof(K), dim * wire.bytes};
  size_t* sizes = ws.get<size_t>(Slot::kExchangeSizes, 4 * G);
  const PairSizes s{sizes, sizes + G, sizes + 2 * G, sizes + 3 * G};
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
    const Route route = routed_route(call.machine, call.agreed, size, call.nodes.node_count(),
                                     static_cast<double>(sizeof(K) + dim * wire.bytes));
    ZFC_RETURN_IF_ERROR(t.alltoallv_blocks(send, s.send_bytes, s.send_displs, s.recv_bytes,
                                           s.recv_displs, [&](size_t total) {
                                             in = ws.get<char>(Slot::kRoutedPairs, total);
                                             return in;
                                           }, route));
  }
  ZFC_RETURN_IF_ERROR(read_leads(in, s, pairs, size, t.rank(), "key-routed pairs", from));
  out->in = in;
  out->from = from;
  out->sizes = s;
  out->block = pairs;
  out->from_peers = 0;
  for (int r = 0; r < size; ++r) {
    if (r != t.rank()) out->from_peers += s.recv_bytes[r];
  }
  return Status::Ok();
}

// Step 2: the owner's distinct keys (into *uniq) and their sums (acc, u x dim), every rank's
// pairs added in the order of sums. Returns u.
template <class K>
size_t sum_routed(SparseCall<K>& call, const RoutedPairs& routed, const Wire& wire, K** uniq,
                  float** acc) {
  const char* in = routed.in;
  const uint64_t* from = routed.from;
  const PairSizes& s = routed.sizes;
  const PairBlock& block = routed.block;
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

}  // namespace zfc
