// The (key, row) pairs of the routed exchanges (the key-routed sparse reduce and the
// sharded tables' update): each rank sends the pairs of its distinct keys to their owners in
// one alltoallv, and each owner sums what it receives in the order of sums.
#pragma once

#include <algorithm>
#include <cstring>
#include <new>

#include "host_device/key_owner.hpp"
#include "algo/owner_ranges.hpp"
#include "algo/rank_order.hpp"
#include "core/stats.hpp"
#include "exec/step_kernels.hpp"

namespace zfc {

// Transport::PlaceFn's buffer in k's memory space: a transport cannot take a Status back, so
// a buffer that cannot be had is std::bad_alloc, as for the workspace (zfcOutOfMemory).
template <class K>
char* place_in(StepKernels<K>& k, Slot slot, size_t total) {
  char* at = nullptr;
  if (!scratch_for(k, slot, total, &at).ok()) throw std::bad_alloc();
  return at;
}

struct PairSizes {
  size_t *send_bytes, *send_displs, *recv_bytes, *recv_displs;
};

// The lead of every rank's block -- a pair count, or an owner's report, which starts with its
// key count -- checked to frame the block, so that a malformed message is refused instead of
// read past. The leads are copied side by side in k's memory and fetched at once into out
// (host memory; an entry whose block cannot hold a lead is zeroed, and refused).
template <class K, class Lead>
Status read_leads(StepKernels<K>& k, const char* in, const PairSizes& s,
                  const PairBlock& block, int size, int me, const char* what, Lead* out) {
  static_assert(sizeof(Lead) >= sizeof(uint64_t), "a lead starts with its pair count");
  const size_t G = static_cast<size_t>(size);
  void* side = nullptr;
  ZFC_RETURN_IF_ERROR(k.wire().scratch(Slot::kStepWords, G * sizeof(Lead), &side));
  for (int r = 0; r < size; ++r) {
    if (s.recv_bytes[r] < sizeof(Lead)) continue;
    ZFC_RETURN_IF_ERROR(k.copy(static_cast<char*>(side) + r * sizeof(Lead), in + s.recv_displs[r],
                               sizeof(Lead)));
  }
  ZFC_RETURN_IF_ERROR(k.fetch(out, side, G * sizeof(Lead)));
  for (int r = 0; r < size; ++r) {
    uint64_t n = 0;
    const bool framed = s.recv_bytes[r] >= sizeof(Lead);
    if (!framed) std::memset(&out[r], 0, sizeof(Lead));  // nothing was copied there
    if (framed) std::memcpy(&n, &out[r], sizeof n);
    if (!framed || n > s.recv_bytes[r] || block.bytes(n) != s.recv_bytes[r]) {
      return error(zfcTransportError, "rank %d: the %s from rank %d (%zu bytes) do not frame "
                   "their count", me, what, r, s.recv_bytes[r]);
    }
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

// Each distinct key's owner (*owner_of, in call.kernels' memory) and every owner's key count
// (counts, host memory): the set's, when its load mapped the owners for this many ranks (the
// load's one fetch brought the counts), else mapped here and fetched.
template <class K>
Status owners_of_keys(SparseCall<K>& call, const int32_t** owner_of, uint64_t* counts) {
  StepKernels<K>& k = *call.kernels;
  const int size = call.transport.size();
  const size_t G = static_cast<size_t>(size), ui = call.set.local_unique_count();
  if (call.set.owner_ranks() == size) {
    *owner_of = call.set.owner_of();
    std::memcpy(counts, call.set.owner_counts(), G * sizeof(uint64_t));
    return Status::Ok();
  }
  int32_t* map = nullptr;
  uint64_t* words = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kOwnerOf, ui, &map));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kStepWords, G + 1, &words));
  const uint64_t known = ui;
  ZFC_RETURN_IF_ERROR(k.upload(&words[G], &known, sizeof known));
  ZFC_RETURN_IF_ERROR(k.owner_counts(call.set.local_unique(), ui, &words[G], size, map, words));
  ZFC_RETURN_IF_ERROR(k.fetch(counts, words, G * sizeof(uint64_t)));
  *owner_of = map;
  return Status::Ok();
}

// Step 1: the (key, row) pairs of this rank's distinct keys, rows summed in token order and
// encoded for `wire`, sent to the keys' owners (host_device/key_owner.hpp) in one alltoallv,
// each owner's block led by its pair count (routed as routed_route chooses); *out describes
// what this rank received. The local phases run on call.kernels; the host learns the pair
// counts (with the load's fetch, or one of their own: owners_of_keys) and the counts that
// arrived (another).
template <class K>
Status route_pairs(SparseCall<K>& call, const Wire& wire, RoutedPairs* out) {
  Transport& t = call.transport;
  Workspace& ws = call.ws;
  StepKernels<K>& k = *call.kernels;
  const int size = t.size();
  const size_t G = static_cast<size_t>(size), dim = call.spec.dim;
  const size_t ui = call.set.local_unique_count();
  const PairBlock pairs{sizeof(uint64_t), sizeof(K), wire.row_bytes(dim)};
  size_t* sizes = ws.get<size_t>(Slot::kExchangeSizes, 4 * G);
  const PairSizes s{sizes, sizes + G, sizes + 2 * G, sizes + 3 * G};
  uint64_t* counts = ws.get<uint64_t>(Slot::kCounts, 2 * G);
  uint64_t* from = counts + G;
  const K* keys = call.set.local_unique();
  char* send = nullptr;
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    const int32_t* owner_of = nullptr;
    ZFC_RETURN_IF_ERROR(owners_of_keys(call, &owner_of, counts));
    for (int j = 0; j < size; ++j) s.send_bytes[j] = pairs.bytes(counts[j]);
    pack_displacements(s.send_bytes, s.send_displs, size);
    const size_t total = s.send_displs[size - 1] + s.send_bytes[size - 1];
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kWireSend, total, &send));
    const PairPacking packing{pairs, counts, s.send_displs, size};
    const TokenRows tokens{call.rows, call.spec.row_type, call.set.inverse(), call.set.count(),
                           call.set.grouping()};
    ZFC_RETURN_IF_ERROR(k.sum_into_pairs(*wire.format, tokens, keys, owner_of, ui, dim,
                                         wire.scale, packing, send,
                                         wire.at(kernels::kHopSend, kernels::RowIds::of(keys))));
    ZFC_RETURN_IF_ERROR(k.wire().settle());  // the transport reads it next
  }
  char* in = nullptr;
  {
    PhaseTimer timer(call.op, zfcPhaseRowExchange);
    const Route route = routed_route(call.machine, call.agreed, size, call.nodes.node_count(),
                                     static_cast<double>(sizeof(K) + wire.row_bytes(dim)));
    ZFC_RETURN_IF_ERROR(t.alltoallv_blocks(send, s.send_bytes, s.send_displs, s.recv_bytes,
                                           s.recv_displs, [&](size_t total) {
                                             in = place_in(k, Slot::kRoutedPairs, total);
                                             return in;
                                           }, route));
  }
  ZFC_RETURN_IF_ERROR(read_leads(k, in, s, pairs, size, t.rank(), "key-routed pairs", from));
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

// Step 2: the owner's distinct keys (into *uniq) and their sums (acc, *u x dim), every
// rank's pairs added in the order of sums, on call.kernels (the host learns *u: one fetch).
template <class K>
Status sum_routed(SparseCall<K>& call, const RoutedPairs& routed, const Wire& wire, K** uniq,
                  float** acc, size_t* u) {
  const char* in = routed.in;
  const uint64_t* from = routed.from;
  const PairSizes& s = routed.sizes;
  const PairBlock& block = routed.block;
  StepKernels<K>& k = *call.kernels;
  const int size = call.transport.size();
  const size_t dim = call.spec.dim;
  size_t total = 0;
  for (int r = 0; r < size; ++r) total += from[r];
  // Every sender's keys are sorted and distinct (pack_pairs): one merge of those runs makes
  // the owner's set and places every sender's keys in it.
  const KeyRuns<K> runs = key_runs<K>(call.ws, size);
  {
    PhaseTimer timer(call.op, zfcPhaseMerge);
    int32_t* places = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kPositions, total, &places));
    for (int r = 0; r < size; ++r) {
      runs.keys[r] = reinterpret_cast<const K*>(in + s.recv_displs[r] + block.lead);
      runs.counts[r] = static_cast<size_t>(from[r]);
      runs.places[r] = places;
      places += from[r];
    }
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kOwnerKeys, total, uniq));
    ZFC_RETURN_IF_ERROR(k.merge_runs(runs, static_cast<uint64_t>(call.spec.vocab), *uniq, u));
  }
  PhaseTimer timer(call.op, zfcPhaseScatter);
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kDense, *u * dim, acc));
  return sum_in_rank_order(call.nodes, k, *acc, *u, dim, [&](int r, float* dst) -> Status {
    // A sender packs its keys sorted and distinct (pack_pairs), so their places increase:
    // a device adds the rows as they come, with no sort per sender.
    return k.add_wire_rows(*wire.format, in + s.recv_displs[r] + block.rows_at(runs.counts[r]),
                           runs.places[r], runs.counts[r], dim, dst, *u, /*in_order=*/true);
  });
}

}  // namespace zfc
