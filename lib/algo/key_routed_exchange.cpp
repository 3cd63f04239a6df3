// The key-routed exchange, for large G: no rank learns every rank's keys. The owner of a key
// is a fixed function of the key (host_device/key_owner.hpp), so each rank can send the (key, row)
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
// Fused with an update (zfcSparseReduceApply), step 2's allgather becomes the rounds of
// algo/streamed_apply.cpp, and no rank holds the U_g x dim result.
#include <algorithm>
#include <cstring>

#include "algo/algorithms.hpp"
#include "algo/cost_terms.hpp"
#include "algo/routed_pairs.hpp"

namespace zfc {
namespace {

// What each owner tells every rank after summing: the sizes of the shared blocks, and what
// it received in the routing (for the ledger, which no other rank could know).
struct OwnerReport {
  uint64_t distinct;
  uint64_t received_bytes;
};

// Step 2's end: the owners' blocks, gathered, become the global set and the U_g x dim result
// in key order; *finite: whether every value is. On call.kernels; the host learns U_g from
// the reports; the global set's size, which only confirms it, is read at once on the host and
// with the step's last read on a device.
template <class K>
Status place_shared(SparseCall<K>& call, const char* gathered, const OwnerReport* reports,
                    const size_t* displs, const PairBlock& block, const Wire& wire, float** out,
                    bool* finite) {
  StepKernels<K>& k = *call.kernels;
  const int size = call.transport.size();
  const size_t dim = call.spec.dim;
  size_t ug = 0, largest = 0;
  for (int j = 0; j < size; ++j) {
    ug += reports[j].distinct;
    largest = std::max(largest, static_cast<size_t>(reports[j].distinct));
  }
  const KeyRuns<K> runs = key_runs<K>(call.ws, size);
  {
    PhaseTimer timer(call.op, zfcPhaseMerge);
    int32_t* places = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kPositions, ug, &places));
    for (int j = 0; j < size; ++j) {
      runs.keys[j] = reinterpret_cast<const K*>(gathered + displs[j] + block.lead);
      runs.counts[j] = static_cast<size_t>(reports[j].distinct);
      runs.places[j] = places;
      places += reports[j].distinct;
    }
    // The owners' sets are disjoint (each key has one owner), so the merge keeps all of them;
    // fewer would mean a peer sent keys it does not own. A device checks the count with the
    // step's last read (SparseCall::unread), which it makes anyway, rather than wait here.
    // The host, whose read is no wait, checks it at once: nothing of the caller's
    // (zfcSparseReduceInto) is written before it.
    uint64_t* distinct = nullptr;
    ZFC_RETURN_IF_ERROR(call.set.merge_disjoint_runs(k, runs, ug, &distinct));
    call.unread = {distinct, ug, "the owners' summed keys overlap"};
    if (!k.on_device()) ZFC_RETURN_IF_ERROR(read_unread(call, false));
  }
  PhaseTimer timer(call.op, zfcPhaseScatter);
  // Every rank's room is checked, a device call's included: another rank may have called
  // zfcSparseReduceInto with too little.
  ZFC_RETURN_IF_ERROR(result_rows(call, ug, out));
  for (int j = 0; j < size; ++j) {
    const size_t n = runs.counts[j];
    ZFC_RETURN_IF_ERROR(k.decode_wire_rows_to(*wire.format,
                                              gathered + displs[j] + block.rows_at(n),
                                              runs.places[j], n, dim, wire.scale, *out));
  }
  // A device's flag is left for the caller, which reads it last or hands it on.
  return call.leave_flag ? Status::Ok() : k.wire().all_finite(finite);
}

}  // namespace

template <class K>
Status exchange_key_routed(SparseCall<K>& call) {
  Transport& t = call.transport;
  Workspace& ws = call.ws;
  StepKernels<K>& k = *call.kernels;
  const int size = t.size(), me = t.rank();
  const size_t G = static_cast<size_t>(size), dim = call.spec.dim;
  const Wire wire = wire_of(call);
  RoutedPairs routed;
  ZFC_RETURN_IF_ERROR(route_pairs(call, wire, &routed));
  const PairSizes& s = routed.sizes;
  K* uniq = nullptr;
  float* acc = nullptr;
  size_t u = 0;
  ZFC_RETURN_IF_ERROR(sum_routed(call, routed, wire, &uniq, &acc, &u));
  if (call.apply != nullptr) return stream_and_apply(call, uniq, acc, u, routed.from_peers);

  PhaseTimer timer(call.op, zfcPhaseRowExchange);
  const PairBlock shared{sizeof(OwnerReport), sizeof(K), wire.row_bytes(dim)};
  const OwnerReport mine{u, routed.from_peers};
  char* own = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kWireSend, shared.bytes(u), &own));
  ZFC_RETURN_IF_ERROR(k.upload(own, &mine, sizeof mine));
  ZFC_RETURN_IF_ERROR(k.copy(own + shared.lead, uniq, u * sizeof(K)));
  const size_t rows_end = shared.rows_at(u) + u * wire.row_bytes(dim);
  // The padding too, so that every byte sent is defined.
  ZFC_RETURN_IF_ERROR(k.zero(own + shared.lead + u * sizeof(K),
                             shared.rows_at(u) - shared.lead - u * sizeof(K)));
  ZFC_RETURN_IF_ERROR(k.zero(own + rows_end, shared.bytes(u) - rows_end));
  // Already scaled: the pairs were summed as they came off the wire.
  ZFC_RETURN_IF_ERROR(
      k.wire().encode_rows(*wire.format, acc, u, dim, 1.0f, own + shared.rows_at(u),
                           wire.at(kernels::kHopOwnerSum, kernels::RowIds::of(uniq))));
  ZFC_RETURN_IF_ERROR(k.wire().settle());  // the transport reads it next
  char* gathered = nullptr;
  ZFC_RETURN_IF_ERROR(t.allgather_blocks(own, shared.bytes(u), s.recv_bytes, s.recv_displs,
                                         [&](size_t total) {
                                           gathered = place_in(k, Slot::kGatheredRows, total);
                                           return gathered;
                                         }));
  OwnerReport* reports = ws.get<OwnerReport>(Slot::kOwnerReports, G);
  ZFC_RETURN_IF_ERROR(read_leads(k, gathered, s, shared, size, me, "summed pairs", reports));
  for (int r = 0; r < size; ++r) {
    if (r != me) t.note_received(r, reports[r].received_bytes);
  }
  timer.stop();
  float* out = nullptr;
  ZFC_RETURN_IF_ERROR(
      place_shared(call, gathered, reports, s.recv_displs, shared, wire, &out, &call.finite));
  call.out_rows = out;
  return Status::Ok();
}

template Status exchange_key_routed<uint32_t>(SparseCall<uint32_t>&);
template Status exchange_key_routed<uint64_t>(SparseCall<uint64_t>&);

// ---- the cost model's formula (algo/algorithms.hpp, docs/algorithms.md) ----
namespace cost {

// No index exchange: the routing above, then the summed pairs to every rank (each owner's
// block led by its 16-byte report), which merges them into key order; the shared blocks are
// U_g / G each on average.
void price_key_routed(Cost& c) {
  const CostInputs& in = c.in;
  const double d = static_cast<double>(in.dim), w = in.row_bytes;
  const double kb = static_cast<double>(in.key_bytes);
  const double ug = in.global_unique;
  route_to_owners(c);
  c.local(encode_bytes(c, ug / c.g() * d));
  if (in.stream_chunk > 0) {
    streamed_share(c);
    return;
  }
  c.gather_blocks(Level::kFlat, ug * (kb + d * w) + 16.0 * c.g(),
                  ug / c.g() * (kb + d * w) + 16.0);
  c.local(kMergeBytesPerKey * ug + kLocateBytesPerKey * ug +
          (w < 4 ? ug * d * (w + 4.0) : 8.0 * ug * d));
  c.scratch(ug * (2.0 * kb + d * w) + 4.0 * ug * d);
}

}  // namespace cost

}  // namespace zfc
