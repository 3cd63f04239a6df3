// The forward lookup of a sharded table, in two rounds after the header:
//   1. each rank sends its distinct ids to their owners (an alltoallv whose sizes only the
//      senders know: Transport::alltoallv_blocks);
//   2. each owner answers every rank with the rows asked for, in the order asked, encoded in
//      the plan's wire type, led by a reply head (what the owner received in round 1, for the
//      ledger, and how many ids it could not serve). Every size of this round is known to
//      both ends, so it is a plain alltoallv.
// A rank sends and receives O(U_i) ids and O(U_i * dim) row values; nothing grows with G.
#include <algorithm>
#include <cstring>
#include <memory>

#include "algo/owner_ranges.hpp"
#include "algo/sharded_call.hpp"
#include "kernels/index_keys.hpp"

namespace zfc {
namespace {

// What leads an owner's reply to each rank.
struct ReplyHead {
  uint64_t received_bytes;  // what the owner received from its peers in round 1
  uint64_t refused;         // ids it was asked for that are not its own (malformed input)
};

template <class K>
class ShardedGatherCall final : public ShardedCall<K> {
  using Base = ShardedCall<K>;

 public:
  ShardedGatherCall(zfcSparsePlan& plan, const ShardBuffers& shard, const void* indices,
                    size_t count, const Status& caller_check, zfcSparseResult_t* out,
                    int32_t* positions, const void* stream)
      : Base(plan, OpKind::kShardedGather, shard, indices, count, nullptr, caller_check,
             stream),
        out_(out), positions_(positions) {}

  void prepare(zfcOpStats_t* op) override {
    this->load(op, false, false);
    // The ids this rank owns itself travel nowhere: the others need their count to know what
    // this rank receives in round 2.
    const int size = this->transport().size(), me = this->transport().rank();
    const K* keys = this->set_.local_unique();
    int64_t own = 0;
    for (size_t i = 0; i < this->set_.local_unique_count(); ++i) {
      own += key_owner(keys[i], size) == me ? 1 : 0;
    }
    this->mine_.capacity = own;
  }
  Status run(const Agreed& agreed, zfcOpStats_t* op) override;
  void publish() override {
    out_->indices = indices_out_;
    out_->rows = rows_out_;
    out_->num_unique = this->set_.local_unique_count();
    out_->dim = this->plan_.spec.dim;
    out_->overflowed = 0;
    out_->algorithm = zfcAlgoKeyRouted;
    if (positions_ != nullptr) {
      std::copy(this->set_.inverse(), this->set_.inverse() + this->set_.count(), positions_);
    }
  }

 private:
  Status ask_owners(zfcOpStats_t* op, int32_t** order, char** asked);
  Status answer(const Agreed& agreed, zfcOpStats_t* op, const char* asked,
                const char** replies);

  zfcSparseResult_t* out_;
  int32_t* positions_;
  const void* indices_out_ = nullptr;
  const float* rows_out_ = nullptr;
};

// Round 1. *order lists this rank's distinct ids (by their place among them) in the order
// sent, owner by owner; *asked is what arrived.
template <class K>
Status ShardedGatherCall<K>::ask_owners(zfcOpStats_t* op, int32_t** order, char** asked) {
  Transport& t = this->transport();
  Workspace& ws = this->plan_.ws;
  const int size = t.size();
  const size_t G = static_cast<size_t>(size), ui = this->set_.local_unique_count();
  const K* keys = this->set_.local_unique();
  size_t* s = ws.get<size_t>(Slot::kExchangeSizes, 4 * G);
  size_t* counts = ws.get<size_t>(Slot::kPeerReceived, G);
  int32_t* owner_of = ws.get<int32_t>(Slot::kLocate, ui);
  *order = ws.get<int32_t>(Slot::kRankPositions, ui);
  K* send = ws.get<K>(Slot::kGatheredKeys, ui);
  {
    PhaseTimer timer(op, zfcPhaseLocal);
    std::fill(counts, counts + G, 0);
    for (size_t i = 0; i < ui; ++i) {
      owner_of[i] = key_owner(keys[i], size);
      ++counts[owner_of[i]];
    }
    for (int j = 0; j < size; ++j) s[j] = counts[j] * sizeof(K);
    pack_displacements(s, s + G, size);
    for (int j = 0; j < size; ++j) counts[j] = s[G + j] / sizeof(K);  // now cursors
    for (size_t i = 0; i < ui; ++i) {
      const size_t at = counts[owner_of[i]]++;
      send[at] = keys[i];
      (*order)[at] = static_cast<int32_t>(i);
    }
  }
  PhaseTimer timer(op, zfcPhaseIndexExchange);
  return t.alltoallv_blocks(send, s, s + G, s + 2 * G, s + 3 * G, [&](size_t total) {
    *asked = ws.get<char>(Slot::kRoutedPairs, total);
    return *asked;
  });
}

// Round 2: every rank's ids answered with their rows; *replies is what this rank got back.
template <class K>
Status ShardedGatherCall<K>::answer(const Agreed& agreed, zfcOpStats_t* op, const char* asked,
                                    const char** replies) {
  Transport& t = this->transport();
  Workspace& ws = this->plan_.ws;
  const PlanSpec& spec = this->plan_.spec;
  const int size = t.size(), me = t.rank();
  const size_t G = static_cast<size_t>(size), dim = spec.dim;
  const Wire wire = wire_of(spec);
  const size_t row_bytes = dim * wire.bytes;
  const size_t* s = ws.get<size_t>(Slot::kExchangeSizes, 4 * G);
  const size_t *asked_bytes = s + 2 * G, *asked_displs = s + 3 * G;
  // Sizes of the replies: 8 x G values, sent then received, bytes then displacements.
  size_t* r = ws.get<size_t>(Slot::kReduceSizes, 4 * G);
  uint64_t* received = ws.get<uint64_t>(Slot::kCounts, G);
  ReplyHead head{0, 0};
  for (int j = 0; j < size; ++j) {
    if (asked_bytes[j] % sizeof(K) != 0) {
      return error(zfcTransportError, "rank %d: the ids from rank %d (%zu bytes) are not "
                   "whole ids", me, j, asked_bytes[j]);
    }
    if (j != me) head.received_bytes += asked_bytes[j];
    r[j] = sizeof(ReplyHead) + asked_bytes[j] / sizeof(K) * row_bytes;
    r[2 * G + j] = sizeof(ReplyHead) + (s[j] / sizeof(K)) * row_bytes;
    // Rank j receives from each peer a head and the rows of its ids that peer owns.
    const OpHeader& h = agreed.headers[j];
    received[j] = (G - 1) * sizeof(ReplyHead) +
                  static_cast<uint64_t>(h.local_unique - h.capacity) * row_bytes;
  }
  pack_displacements(r, r + G, size);
  pack_displacements(r + 2 * G, r + 3 * G, size);
  char* send = ws.get<char>(Slot::kWireSend, r[G + size - 1] + r[size - 1]);
  {
    PhaseTimer timer(op, zfcPhaseLocal);
    const uint64_t rows = this->shard_.rows;
    for (int j = 0; j < size; ++j) {
      const K* ids = reinterpret_cast<const K*>(asked + asked_displs[j]);
      const size_t n = asked_bytes[j] / sizeof(K);
      for (size_t c = 0; c < n; ++c) {
        head.refused += key_owner(ids[c], size) != me || shard_local_row(ids[c], size) >= rows;
      }
    }
    for (int j = 0; j < size; ++j) {
      const K* ids = reinterpret_cast<const K*>(asked + asked_displs[j]);
      const size_t n = asked_bytes[j] / sizeof(K);
      char* out = send + r[G + j];
      std::memcpy(out, &head, sizeof head);
      for (size_t c = 0; c < n; ++c) {
        char* dst = out + sizeof head + c * row_bytes;
        const uint64_t row = shard_local_row(ids[c], size);
        if (head.refused != 0) {
          std::memset(dst, 0, row_bytes);  // defined bytes; every rank fails on the head
        } else {
          kernels::encode(this->shard_.table + row * dim, dim, wire.type, 1.0f, dst);
        }
      }
    }
  }
  char* in = ws.get<char>(Slot::kGatheredRows, r[3 * G + size - 1] + r[2 * G + size - 1]);
  PhaseTimer timer(op, zfcPhaseRowExchange);
  ZFC_RETURN_IF_ERROR(t.alltoallv(send, r, r + G, in, r + 2 * G, r + 3 * G, received));
  *replies = in;
  return Status::Ok();
}

template <class K>
Status ShardedGatherCall<K>::run(const Agreed& agreed, zfcOpStats_t* op) {
  Transport& t = this->transport();
  Workspace& ws = this->plan_.ws;
  const PlanSpec& spec = this->plan_.spec;
  const int size = t.size(), me = t.rank();
  const size_t G = static_cast<size_t>(size), dim = spec.dim;
  const size_t ui = this->set_.local_unique_count();
  const Wire wire{wire_of(spec).type, 1.0f, wire_of(spec).bytes};
  int32_t* order = nullptr;
  char* asked = nullptr;
  ZFC_RETURN_IF_ERROR(ask_owners(op, &order, &asked));
  const char* replies = nullptr;
  ZFC_RETURN_IF_ERROR(answer(agreed, op, asked, &replies));
  const size_t* r = ws.get<size_t>(Slot::kReduceSizes, 4 * G);
  const size_t* s = ws.get<size_t>(Slot::kExchangeSizes, 4 * G);
  for (int j = 0; j < size; ++j) {
    ReplyHead head;
    std::memcpy(&head, replies + r[3 * G + j], sizeof head);
    if (head.refused != 0) {
      return error(zfcInvalidArgument, "rank %d was asked for %llu rows it does not hold: "
                   "some rank's ids are outside [0, %lld) (bounds_check is off)", j,
                   static_cast<unsigned long long>(head.refused),
                   static_cast<long long>(spec.vocab));
    }
    if (j != me) t.note_received(j, head.received_bytes);
  }
  PhaseTimer timer(op, zfcPhaseScatter);
  float* rows = ws.get<float>(Slot::kResultRows, ui * dim);
  for (int j = 0; j < size; ++j) {
    const size_t n = s[j] / sizeof(K), first = s[G + j] / sizeof(K);
    decode_rows_to(replies + r[3 * G + j] + sizeof(ReplyHead), order + first, n, dim, wire,
                   rows);
  }
  const size_t index_bytes = spec.index_type == zfcInt32 ? 4 : 8;
  void* ids = ws.get<char>(Slot::kResultIndices, ui * index_bytes);
  kernels::store_keys(this->set_.local_unique(), ui, spec.index_type, ids);
  indices_out_ = ids;
  rows_out_ = rows;
  op->local_unique += ui;
  op->algorithm = zfcAlgoKeyRouted;
  return Status::Ok();
}

}  // namespace

Status sharded_gather(zfcSparsePlan& plan, const ShardBuffers& shard, const void* indices,
                      size_t count, const Status& caller_check, zfcSparseResult_t* out,
                      int32_t* positions, const void* stream) {
  return with_key_type(plan.spec.vocab, [&](auto tag) -> Status {
    using K = typename decltype(tag)::type;
    return run_or_record(*plan.comm, &plan, [&] {
      return std::make_unique<ShardedGatherCall<K>>(plan, shard, indices, count, caller_check,
                                                    out, positions, stream);
    });
  });
}

}  // namespace zfc
