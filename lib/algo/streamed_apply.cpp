// The streamed end of a fused reduce-and-apply (zfcSparseReduceApply). Once the owners of a
// key-routed exchange hold the sums of their keys, the sums go to every rank in rounds
// instead of one allgather of U_g rows: in each round each owner sends the next pairs of its
// sorted keys, as many as the plan's stream chunk holds over G (or, when it holds fewer than
// G pairs, owners take turns; see Rounds), and every rank applies each arriving row to its
// table before the next round. Round 0's blocks lead
// with the owners' reports (their key counts, what they received, whether their sums stay
// finite on the wire), so every rank knows the number of rounds, and whether to apply at all,
// before it writes a row. A rank holds one round of rows, not U_g x dim.
//
// The rows are decoded exactly as the unfused exchange decodes them into its result and go
// through the update of zfcApplyUpdate, one row each, so the table gets the same bits.
#include <algorithm>
#include <cstring>

#include "algo/routed_pairs.hpp"
#include "kernels/cast.hpp"

namespace zfc {
namespace {

struct StreamReport {
  uint64_t distinct;        // the owner's keys: its pairs over all rounds
  uint64_t received_bytes;  // what it received from its peers in the routing (ledger)
  uint64_t non_finite;      // 1 when some sum of its is not finite once decoded
};
static_assert(sizeof(StreamReport) == 24, "an owner's report is 24 bytes on the wire");

// Whether every one of the u rows of acc stays finite through the wire and its decode, as
// the unfused exchange would find it after decoding the shared rows.
// The owner's sums of `keys` round as pack_round rounds them.
template <class K>
kernels::Rounding sums_rounding(const Wire& wire, const K* keys) {
  return wire.at(kernels::kHopOwnerSum, kernels::RowIds::of(keys));
}

template <class K>
bool finite_on_wire(const K* keys, const float* acc, size_t u, size_t dim, const Wire& wire,
                    Workspace& ws) {
  if (wire.plain_fp32()) return kernels::all_finite(acc, u * dim);  // scale 1
  char* encoded = ws.get<char>(Slot::kWireRecv, wire.row_bytes(dim));
  float* row = ws.get<float>(Slot::kPartial, dim);
  const kernels::Rounding r = sums_rounding(wire, keys);
  for (size_t p = 0; p < u; ++p) {
    wire.encode(acc + p * dim, 1, dim, 1.0f, encoded, r.from_row(p));  // already scaled
    if (!wire.format->decode_rows(encoded, 1, dim, wire.scale, row)) return false;
  }
  return true;
}

// This owner's block of round c: its lead (round 0: the report; after: the pair count), then
// the keys and rows [first, first + n), encoded for the wire.
template <class K>
size_t pack_round(const K* keys, const float* acc, size_t first, size_t n, size_t dim,
                  const Wire& wire, const PairBlock& block, const void* lead, Workspace& ws,
                  char** out) {
  const size_t bytes = block.bytes(n);
  char* own = ws.get<char>(Slot::kWireSend, bytes);
  std::memset(own, 0, bytes);  // the padding too, so that every byte sent is defined
  std::memcpy(own, lead, block.lead);
  std::copy(keys + first, keys + first + n, reinterpret_cast<K*>(own + block.lead));
  wire.encode(acc + first * dim, n, dim, 1.0f, own + block.rows_at(n),
              sums_rounding(wire, keys).from_row(first));
  *out = own;
  return bytes;
}

// Who sends what in which round. With room for b >= 1 pairs per owner in a round (chunk over
// G pairs), owner j sends its pairs [c b, (c + 1) b) in round c. With room for fewer than G
// pairs (p = floor(chunk / pair), at least 1) the owners take turns in q = ceil(G / p)
// groups: round c is group c mod q's,
// whose owners each send their pair c div q. Every rank computes the same from the reports.
struct Rounds {
  size_t b = 1, q = 1;

  size_t pairs(int j, uint64_t distinct, size_t c) const {
    if (q > 1) {
      return c % q == static_cast<size_t>(j) % q && c / q < distinct ? 1 : 0;
    }
    const uint64_t first = static_cast<uint64_t>(c) * b;
    return distinct > first ? static_cast<size_t>(std::min<uint64_t>(distinct - first, b)) : 0;
  }
  size_t first(size_t c) const { return q > 1 ? c / q : c * b; }
  // The rounds it takes until owner j has sent `distinct` pairs.
  size_t needed(int j, uint64_t distinct) const {
    if (distinct == 0) return 0;
    if (q > 1) return q * static_cast<size_t>(distinct - 1) + static_cast<size_t>(j) % q + 1;
    return static_cast<size_t>((distinct + b - 1) / b);
  }
};

Rounds plan_rounds(size_t chunk, size_t ranks, size_t pair_bytes) {
  Rounds r;
  const size_t per_round = chunk / pair_bytes;  // pairs a rank may receive in a round
  if (per_round >= ranks) {
    r.b = per_round / ranks;
  } else {
    r.q = (ranks + std::max<size_t>(per_round, 1) - 1) / std::max<size_t>(per_round, 1);
  }
  return r;
}

// Round 0's blocks: each owner's report (no more keys than the vocabulary holds), and as many
// pairs as it promises for the round; a block that does not frame them is refused instead of
// read past.
Status read_reports(const char* in, const PairSizes& s, const PairBlock& block,
                    const Rounds& rounds, uint64_t vocab, int size, int me,
                    StreamReport* reports) {
  for (int j = 0; j < size; ++j) {
    const bool framed = s.recv_bytes[j] >= sizeof(StreamReport);
    if (framed) std::memcpy(&reports[j], in + s.recv_displs[j], sizeof(StreamReport));
    if (!framed || reports[j].distinct > vocab ||
        block.bytes(rounds.pairs(j, reports[j].distinct, 0)) != s.recv_bytes[j]) {
      return error(zfcTransportError, "rank %d: the first streamed rows from rank %d (%zu "
                   "bytes) do not frame its report", me, j, s.recv_bytes[j]);
    }
  }
  return Status::Ok();
}

// A later round's blocks: each led by its pair count, which must be what the owner's report
// promised for round c.
Status check_round(const char* in, const PairSizes& s, const PairBlock& block,
                   const StreamReport* reports, const Rounds& rounds, size_t c, int size,
                   int me) {
  for (int j = 0; j < size; ++j) {
    const size_t expected = rounds.pairs(j, reports[j].distinct, c);
    uint64_t n = 0;
    if (s.recv_bytes[j] >= sizeof n) std::memcpy(&n, in + s.recv_displs[j], sizeof n);
    if (s.recv_bytes[j] < sizeof n || n != expected ||
        block.bytes(expected) != s.recv_bytes[j]) {
      return error(zfcTransportError, "rank %d: round %zu of the streamed rows from rank %d "
                   "(%zu bytes) is not the %zu pairs its report promised", me, c, j,
                   s.recv_bytes[j], expected);
    }
  }
  return Status::Ok();
}

// Applies the n pairs of one owner's block to the table: a row at a time as it is decoded
// on the host; on a device, the block's rows decoded together and applied in one launch.
template <class K>
Status apply_block(SparseCall<K>& call, const char* base, size_t n, const Wire& wire,
                   float* row) {
  TableUpdate& target = *call.table_update;
  const size_t dim = call.spec.dim, row_bytes = wire.row_bytes(dim);
  const PairBlock block{0, sizeof(K), row_bytes};  // offsets past the lead
  const K* keys = reinterpret_cast<const K*>(base);
  const char* rows = base + block.rows_at(n);
  for (size_t k = 0; k < n; ++k) {
    const uint64_t key = static_cast<uint64_t>(keys[k]);
    if (key >= static_cast<uint64_t>(call.spec.vocab)) {
      return error(zfcTransportError, "rank %d: a streamed row names index %llu, beyond the "
                   "vocabulary of %lld", call.transport.rank(),
                   static_cast<unsigned long long>(key), static_cast<long long>(call.spec.vocab));
    }
  }
  if (target.on_device()) {
    float* decoded = call.ws.template get<float>(Slot::kAppliedRows, n * dim);
    for (size_t k = 0; k < n; ++k) {
      wire.format->decode_rows(rows + k * row_bytes, 1, dim, wire.scale, decoded + k * dim);
    }
    return target.apply(keys, sizeof(K), decoded, n);
  }
  for (size_t k = 0; k < n; ++k) {
    wire.format->decode_rows(rows + k * row_bytes, 1, dim, wire.scale, row);
    ZFC_RETURN_IF_ERROR(target.apply(keys + k, sizeof(K), row, 1));
  }
  return Status::Ok();
}

}  // namespace

template <class K>
Status stream_and_apply(SparseCall<K>& call, const K* keys, const float* acc, size_t u,
                        uint64_t received_bytes) {
  Transport& t = call.transport;
  Workspace& ws = call.ws;
  const int size = t.size(), me = t.rank();
  const size_t G = static_cast<size_t>(size), dim = call.spec.dim;
  const Wire wire = wire_of(call);
  const size_t pair_bytes = sizeof(K) + wire.row_bytes(dim);
  const Rounds plan = plan_rounds(call.spec.stream_chunk_bytes, G, pair_bytes);
  StreamReport mine{u, received_bytes, 0};
  {
    PhaseTimer timer(call.op, zfcPhaseScatter);
    mine.non_finite = finite_on_wire(keys, acc, u, dim, wire, ws) ? 0 : 1;
  }
  size_t* sizes = ws.get<size_t>(Slot::kExchangeSizes, 2 * G);
  const PairSizes s{nullptr, nullptr, sizes, sizes + G};
  StreamReport* reports = ws.get<StreamReport>(Slot::kOwnerReports, G);
  float* row = ws.get<float>(Slot::kPartial, dim);
  size_t rounds = 1, ug = 0;
  bool finite = true;
  for (size_t c = 0; c < rounds; ++c) {
    const PairBlock block{c == 0 ? sizeof(StreamReport) : sizeof(uint64_t), sizeof(K),
                          wire.row_bytes(dim)};
    const size_t n = plan.pairs(me, u, c);
    const uint64_t count = n;
    char* own = nullptr;
    char* in = nullptr;
    {
      PhaseTimer timer(call.op, zfcPhaseRowExchange);
      const size_t bytes = pack_round(keys, acc, n > 0 ? plan.first(c) : 0, n, dim, wire, block,
                                      c == 0 ? static_cast<const void*>(&mine) : &count, ws,
                                      &own);
      ZFC_RETURN_IF_ERROR(t.allgather_blocks(own, bytes, s.recv_bytes, s.recv_displs,
                                             [&](size_t total) {
                                               in = ws.get<char>(Slot::kGatheredRows, total);
                                               return in;
                                             }));
    }
    if (c == 0) {
      ZFC_RETURN_IF_ERROR(read_reports(in, s, block, plan,
                                       static_cast<uint64_t>(call.spec.vocab), size, me,
                                       reports));
      for (int j = 0; j < size; ++j) {
        finite &= reports[j].non_finite == 0;
        ug += reports[j].distinct;
        rounds = std::max(rounds, plan.needed(j, reports[j].distinct));
        if (j != me) t.note_received(j, reports[j].received_bytes);
      }
      // No rank applies anything of a step some owner cannot represent: all stop here.
      if (!finite) break;
    } else {
      ZFC_RETURN_IF_ERROR(check_round(in, s, block, reports, plan, c, size, me));
    }
    PhaseTimer timer(call.op, zfcPhaseScatter);
    for (int j = 0; j < size; ++j) {
      ZFC_RETURN_IF_ERROR(apply_block(call, in + s.recv_displs[j] + block.lead,
                                      plan.pairs(j, reports[j].distinct, c), wire, row));
    }
  }
  call.applied_unique = ug;
  call.finite = finite;
  return Status::Ok();
}

template Status stream_and_apply<uint32_t>(SparseCall<uint32_t>&, const uint32_t*,
                                           const float*, size_t, uint64_t);
template Status stream_and_apply<uint64_t>(SparseCall<uint64_t>&, const uint64_t*,
                                           const float*, size_t, uint64_t);

}  // namespace zfc
