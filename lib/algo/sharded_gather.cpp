// The forward lookup of a sharded table, in two rounds after the header:
//   1. each rank sends its distinct ids to their owners (an alltoallv whose sizes only the
//      senders know: Transport::alltoallv_blocks);
//   2. each owner answers every rank with the rows asked for, in the order asked, encoded in
//      the plan's wire type, led by what the owner received in round 1 (8 bytes, for the
//      ledger). Every size of this round is known to both ends: a plain alltoallv.
// A rank sends and receives O(U_i) ids and O(U_i * dim) row values; nothing grows with G.
// Both rounds run direct or forwarded as the cost model chooses (choose_route).
#include <algorithm>
#include <cstring>
#include <memory>

#include "algo/owner_ranges.hpp"
#include "algo/sharded_call.hpp"
#include "algo/sparse_reduce.hpp"
#include "exec/table_update.hpp"
#include "kernels/index_keys.hpp"

namespace zfc {
namespace {

// What leads an owner's reply to each rank: what it received from its peers in round 1.
using ReplyHead = uint64_t;

// Per-rank byte sizes and displacements of one round, both ways (4 x G values).
struct RoundSizes {
  size_t* v;
  size_t G;
  size_t* send_bytes() const { return v; }
  size_t* send_displs() const { return v + G; }
  size_t* recv_bytes() const { return v + 2 * G; }
  size_t* recv_displs() const { return v + 3 * G; }
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
        out_(out), positions_(positions) {
    this->output_ = {"positions", positions};
  }

  void prepare(zfcOpStats_t* op) override;
  Status run(const Agreed& agreed, zfcOpStats_t* op) override;
  void publish() override {
    out_->indices = indices_out_;
    out_->rows = rows_out_;
    out_->num_unique = this->set_.local_unique_count();
    out_->dim = this->plan_.spec.dim;
    out_->overflowed = 0;
    if (out_->size > kSparseResultSize011) out_->overflow_flag = nullptr;
    out_->algorithm = zfcAlgoKeyRouted;
    // Device positions were written at the end of run().
    if (positions_ != nullptr && !this->staging_.on_device()) {
      std::copy(this->set_.inverse(), this->set_.inverse() + this->set_.count(), positions_);
    }
  }

 private:
  Status ask_owners(const Agreed& agreed, zfcOpStats_t* op, int32_t** order, char** asked);
  Status answer(const Agreed& agreed, zfcOpStats_t* op, const char* asked, char** replies);
  Status read_asked_rows(const char* asked, int size, const float** rows);
  Status to_device();

  zfcSparseResult_t* out_;
  int32_t* positions_;
  int32_t* owner_of_ = nullptr;  // the owner of each of this rank's distinct ids
  size_t* owned_by_ = nullptr;   // how many of them each rank owns (G)
  RoundSizes ids_{};             // round 1
  RoundSizes replies_{};         // round 2
  const void* indices_out_ = nullptr;
  const float* rows_out_ = nullptr;
};

template <class K>
void ShardedGatherCall<K>::prepare(zfcOpStats_t* op) {
  this->load(op, false, false);
  Workspace& ws = this->plan_.ws;
  const int size = this->transport().size(), me = this->transport().rank();
  const size_t ui = this->set_.local_unique_count();
  const K* keys = this->set_.local_unique();
  owner_of_ = ws.get<int32_t>(Slot::kLocate, ui);
  owned_by_ = ws.get<size_t>(Slot::kPeerReceived, static_cast<size_t>(size));
  std::fill(owned_by_, owned_by_ + size, 0);
  for (size_t i = 0; i < ui; ++i) {
    owner_of_[i] = key_owner(keys[i], size);
    ++owned_by_[owner_of_[i]];
  }
  // The ids this rank owns itself travel nowhere: the others need their count to know what
  // this rank receives in round 2.
  this->mine_.capacity = static_cast<int64_t>(owned_by_[me]);
}

// Round 1. *order lists this rank's distinct ids (by their place among them) in the order
// sent, owner by owner; *asked is what arrived.
template <class K>
Status ShardedGatherCall<K>::ask_owners(const Agreed& agreed, zfcOpStats_t* op, int32_t** order,
                                        char** asked) {
  Transport& t = this->transport();
  Workspace& ws = this->plan_.ws;
  const int size = t.size();
  const size_t G = static_cast<size_t>(size), ui = this->set_.local_unique_count();
  const K* keys = this->set_.local_unique();
  ids_ = RoundSizes{ws.get<size_t>(Slot::kExchangeSizes, 4 * G), G};
  *order = ws.get<int32_t>(Slot::kRankPositions, ui);
  K* send = ws.get<K>(Slot::kGatheredKeys, ui);
  {
    PhaseTimer timer(op, zfcPhaseLocal);
    for (int j = 0; j < size; ++j) ids_.send_bytes()[j] = owned_by_[j] * sizeof(K);
    pack_displacements(ids_.send_bytes(), ids_.send_displs(), size);
    size_t* cursor = owned_by_;  // counted; from here on the next place of each owner's ids
    for (int j = 0; j < size; ++j) cursor[j] = ids_.send_displs()[j] / sizeof(K);
    for (size_t i = 0; i < ui; ++i) {
      const size_t at = cursor[owner_of_[i]]++;
      send[at] = keys[i];
      (*order)[at] = static_cast<int32_t>(i);
    }
  }
  PhaseTimer timer(op, zfcPhaseIndexExchange);
  return t.alltoallv_blocks(send, ids_.send_bytes(), ids_.send_displs(), ids_.recv_bytes(),
                            ids_.recv_displs(), [&](size_t total) {
                              *asked = ws.get<char>(Slot::kRoutedPairs, total);
                              return *asked;
                            }, this->route(agreed, sizeof(K)));
}

// Round 2: every rank's ids answered with their rows; *replies is what this rank got back.
template <class K>
Status ShardedGatherCall<K>::answer(const Agreed& agreed, zfcOpStats_t* op, const char* asked,
                                    char** replies) {
  Transport& t = this->transport();
  Workspace& ws = this->plan_.ws;
  const PlanSpec& spec = this->plan_.spec;
  const int size = t.size(), me = t.rank();
  const size_t G = static_cast<size_t>(size), dim = spec.dim;
  const Wire wire = wire_of(this->compression_, me);
  const size_t row_bytes = wire.row_bytes(dim);
  replies_ = RoundSizes{ws.get<size_t>(Slot::kReduceSizes, 4 * G), G};
  uint64_t* received = ws.get<uint64_t>(Slot::kCounts, G);
  ReplyHead head = 0;
  for (int j = 0; j < size; ++j) {
    const size_t asked_bytes = ids_.recv_bytes()[j];
    if (asked_bytes % sizeof(K) != 0) {
      return error(zfcTransportError, "rank %d: the ids from rank %d (%zu bytes) are not "
                   "whole ids", me, j, asked_bytes);
    }
    if (j != me) head += asked_bytes;
    replies_.send_bytes()[j] = sizeof head + asked_bytes / sizeof(K) * row_bytes;
    replies_.recv_bytes()[j] = sizeof head + ids_.send_bytes()[j] / sizeof(K) * row_bytes;
    // Rank j receives from each peer a head and the rows of its ids that peer owns.
    const OpHeader& h = agreed.headers[j];
    received[j] = (G - 1) * sizeof head +
                  static_cast<uint64_t>(h.local_unique - h.capacity) * row_bytes;
  }
  pack_displacements(replies_.send_bytes(), replies_.send_displs(), size);
  pack_displacements(replies_.recv_bytes(), replies_.recv_displs(), size);
  char* send = ws.get<char>(Slot::kWireSend,
                            replies_.send_displs()[size - 1] + replies_.send_bytes()[size - 1]);
  {
    PhaseTimer timer(op, zfcPhaseLocal);
    // A device shard: the rows asked for, read back to the host in one gather.
    const float* read = nullptr;
    if (this->staging_.on_device()) {
      ZFC_RETURN_IF_ERROR(read_asked_rows(asked, size, &read));
    }
    size_t p = 0;
    for (int j = 0; j < size; ++j) {
      const K* ids = reinterpret_cast<const K*>(asked + ids_.recv_displs()[j]);
      const size_t n = ids_.recv_bytes()[j] / sizeof(K);
      char* out = send + replies_.send_displs()[j];
      std::memcpy(out, &head, sizeof head);
      for (size_t c = 0; c < n; ++c, ++p) {
        const float* from = read != nullptr
                                ? read + p * dim
                                : this->shard_.table + shard_local_row(ids[c], size) * dim;
        wire.encode(from, 1, dim, 1.0f, out + sizeof head + c * row_bytes,
                    wire.at(kernels::kHopTable, kernels::RowIds::of(ids + c)));
      }
    }
  }
  *replies = ws.get<char>(Slot::kGatheredRows,
                          replies_.recv_displs()[size - 1] + replies_.recv_bytes()[size - 1]);
  PhaseTimer timer(op, zfcPhaseRowExchange);
  return t.alltoallv(send, replies_.send_bytes(), replies_.send_displs(), *replies,
                     replies_.recv_bytes(), replies_.recv_displs(), received,
                     this->route(agreed, static_cast<double>(row_bytes)));
}

// The rows of a device shard every rank asked for, in the order asked, in host memory.
template <class K>
Status ShardedGatherCall<K>::read_asked_rows(const char* asked, int size, const float** rows) {
  Workspace& ws = this->plan_.ws;
  const size_t dim = this->plan_.spec.dim;
  size_t total = 0;
  for (int j = 0; j < size; ++j) total += ids_.recv_bytes()[j] / sizeof(K);
  uint64_t* local = ws.get<uint64_t>(Slot::kTableRows, total);
  size_t p = 0;
  for (int j = 0; j < size; ++j) {
    const K* ids = reinterpret_cast<const K*>(asked + ids_.recv_displs()[j]);
    const size_t n = ids_.recv_bytes()[j] / sizeof(K);
    for (size_t c = 0; c < n; ++c) local[p++] = shard_local_row(ids[c], size);
  }
  float* out = ws.get<float>(Slot::kAppliedRows, total * dim);
  ZFC_RETURN_IF_ERROR(read_table_rows(MemorySpace::kDevice, this->shard_.table, dim, local,
                                      total, out, this->stream_));
  if (total > 0 && dim > 0) ++this->device_waits_;
  *rows = out;
  return Status::Ok();
}

// A call on device buffers: its result in the plan's device memory, its positions in the
// caller's device buffer.
template <class K>
Status ShardedGatherCall<K>::to_device() {
  const PlanSpec& spec = this->plan_.spec;
  const size_t ui = this->set_.local_unique_count();
  const size_t index_bytes = spec.index_type == zfcInt32 ? 4 : 8;
  ZFC_RETURN_IF_ERROR(this->plan_.device_result.store(
      indices_out_, ui * index_bytes, rows_out_, ui * spec.dim * sizeof(float), this->stream_,
      &indices_out_, &rows_out_));
  ++this->device_waits_;  // the store waits for its copies
  if (positions_ == nullptr || this->set_.count() == 0) return Status::Ok();
  ZFC_RETURN_IF_ERROR(this->staging_.copy_out(positions_, this->set_.inverse(),
                                              this->set_.count() * sizeof(int32_t)));
  return this->staging_.finish();
}

template <class K>
Status ShardedGatherCall<K>::run(const Agreed& agreed, zfcOpStats_t* op) {
  Transport& t = this->transport();
  Workspace& ws = this->plan_.ws;
  const PlanSpec& spec = this->plan_.spec;
  const int size = t.size(), me = t.rank();
  const size_t dim = spec.dim, ui = this->set_.local_unique_count();
  int32_t* order = nullptr;
  char* asked = nullptr;
  ZFC_RETURN_IF_ERROR(ask_owners(agreed, op, &order, &asked));
  char* replies = nullptr;
  ZFC_RETURN_IF_ERROR(answer(agreed, op, asked, &replies));
  for (int j = 0; j < size; ++j) {
    ReplyHead head;
    std::memcpy(&head, replies + replies_.recv_displs()[j], sizeof head);
    if (j != me) t.note_received(j, head);
  }
  PhaseTimer timer(op, zfcPhaseScatter);
  Wire wire = wire_of(this->compression_, me);
  wire.scale = 1.0f;  // weights travel unscaled
  float* rows = ws.get<float>(Slot::kResultRows, ui * dim);
  for (int j = 0; j < size; ++j) {
    const size_t n = ids_.send_bytes()[j] / sizeof(K);
    const size_t first = ids_.send_displs()[j] / sizeof(K);
    decode_rows_to(replies + replies_.recv_displs()[j] + sizeof(ReplyHead), order + first, n,
                   dim, wire, rows);
  }
  const size_t index_bytes = spec.index_type == zfcInt32 ? 4 : 8;
  void* ids = ws.get<char>(Slot::kResultIndices, ui * index_bytes);
  kernels::store_keys(this->set_.local_unique(), ui, spec.index_type, ids);
  indices_out_ = ids;
  rows_out_ = rows;
  if (this->staging_.on_device()) ZFC_RETURN_IF_ERROR(to_device());
  this->note_where(op);
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
    return run_or_record<ShardedGatherCall<K>>(*plan.comm, &plan, plan, shard, indices, count,
                                               caller_check, out, positions, stream);
  });
}

}  // namespace zfc
