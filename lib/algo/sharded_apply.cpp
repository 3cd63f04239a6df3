// The update of a sharded table, in two rounds after the header:
//   1. the (id, row) pairs of each rank's distinct ids go to their owners, rows summed in
//      token order and encoded for the wire: the first round of the key-routed exchange
//      (algo/routed_pairs.hpp);
//   2. each owner sums what it received in the order of sums, and every rank learns every
//      owner's report in one allgather of 16 bytes each: whether its sums are finite, and
//      what it received (for the ledger).
// Owners write their shards only at publish, once every report is in and every call of a
// group has run: a non-finite sum on any owner, or in any call of the group, leaves every
// shard as it was.
#include <memory>

#include "algo/routed_pairs.hpp"
#include "algo/sharded_call.hpp"
#include "exec/table_update.hpp"
#include "kernels/cast.hpp"

namespace zfc {
namespace {

struct ApplyReport {
  uint64_t received_bytes;  // what the owner received from its peers in round 1
  uint64_t non_finite;      // 1 when some sum is not finite
};
static_assert(sizeof(ApplyReport) == 16, "the owner's report is 16 bytes on the wire");

template <class K>
class ShardedApplyCall final : public ShardedCall<K> {
  using Base = ShardedCall<K>;

 public:
  ShardedApplyCall(zfcSparsePlan& plan, const void* indices, size_t count, const void* rows,
                   const kernels::RowUpdate& update, const ShardBuffers& shard,
                   const Status& caller_check, int* overflowed, const void* stream)
      : Base(plan, OpKind::kShardedApply, shard, indices, count, rows, caller_check, stream),
        update_(update), overflowed_(overflowed) {
    this->mine_.color = static_cast<int32_t>(update.kind);
    this->mine_.node = kernels::pack_update_values(update);
  }

  void prepare(zfcOpStats_t* op) override {
    this->load(op, true, kernels::update_has_state(update_));
  }
  Status run(const Agreed& agreed, zfcOpStats_t* op) override;
  bool overflowed() const override { return overflow_; }
  // Another call of the group overflowed: the step is skipped, this shard with it.
  void hold_updates() override { overflow_ = true; }
  void publish() override;

 private:
  Status sum_at_owner(SparseCall<K>& call, const RoutedPairs& routed, ApplyReport* report);
  Status update_shard();

  kernels::RowUpdate update_;
  int* overflowed_;
  const K* owned_ = nullptr;  // the ids this rank owns that some rank sent, sorted
  const float* sums_ = nullptr;  // their summed rows
  size_t owned_count_ = 0;
  bool overflow_ = false;
};

// Round 2's local part: the sums of this owner's ids, unscaled, and its report.
template <class K>
Status ShardedApplyCall<K>::sum_at_owner(SparseCall<K>& call, const RoutedPairs& routed,
                                         ApplyReport* report) {
  const Wire wire = wire_of(call);
  K* ids = nullptr;
  float* acc = nullptr;
  size_t u = 0;
  ZFC_RETURN_IF_ERROR(sum_routed(call, routed, wire, &ids, &acc, &u));
  *report = ApplyReport{routed.from_peers, 0};
  PhaseTimer timer(call.op, zfcPhaseScatter);
  const size_t n = u * call.spec.dim;
  // The sums of scaled wire rows, scaled back as a decode would.
  if (wire.scale != 1.0f) kernels::divide(acc, n, wire.scale);
  report->non_finite = kernels::all_finite(acc, n) ? 0 : 1;
  owned_ = ids;
  sums_ = acc;
  owned_count_ = u;
  return Status::Ok();
}

template <class K>
Status ShardedApplyCall<K>::run(const Agreed& agreed, zfcOpStats_t* op) {
  Transport& t = this->transport();
  const int size = t.size(), me = t.rank();
  SparseCall<K> call = this->sparse_call(agreed, op);
  RoutedPairs routed;
  ZFC_RETURN_IF_ERROR(route_pairs(call, wire_of(call), &routed));
  ApplyReport mine{};
  ZFC_RETURN_IF_ERROR(sum_at_owner(call, routed, &mine));
  ApplyReport* reports =
      this->plan_.ws.template get<ApplyReport>(Slot::kOwnerReports, static_cast<size_t>(size));
  {
    PhaseTimer timer(op, zfcPhaseRowExchange);
    ZFC_RETURN_IF_ERROR(t.allgather(&mine, sizeof mine, reports));
  }
  bool overflow = false;
  for (int j = 0; j < size; ++j) {
    overflow |= reports[j].non_finite != 0;
    if (j != me) t.note_received(j, reports[j].received_bytes);
  }
  overflow_ = overflow;
  // A device shard is updated here, the call being alone (ShardedCall): no other call of a
  // group can hold it back, and a failure of the device is this call's.
  if (this->staging_.on_device() && !overflow_) ZFC_RETURN_IF_ERROR(update_shard());
  this->note_where(op);
  op->local_unique += this->set_.local_unique_count();
  op->algorithm = zfcAlgoKeyRouted;
  op->overflows += overflow ? 1 : 0;
  return Status::Ok();
}

template <class K>
Status ShardedApplyCall<K>::update_shard() {
  const size_t dim = this->plan_.spec.dim;
  const int size = this->transport().size();
  uint64_t* rows = this->plan_.ws.template get<uint64_t>(Slot::kTableRows, owned_count_);
  for (size_t p = 0; p < owned_count_; ++p) rows[p] = shard_local_row(owned_[p], size);
  TableUpdate shard(MemorySpace::kDevice, this->shard_.table, this->shard_.state,
                    static_cast<int64_t>(this->shard_.rows), dim, update_, this->stream_);
  const Status done = shard.apply(rows, sizeof(uint64_t), sums_, owned_count_);
  this->device_waits_ += shard.waits();
  return done;
}

template <class K>
void ShardedApplyCall<K>::publish() {
  if (overflowed_ != nullptr) *overflowed_ = overflow_ ? 1 : 0;
  if (overflow_ || this->staging_.on_device()) return;
  const size_t dim = this->plan_.spec.dim;
  const int size = this->transport().size();
  const bool with_state = kernels::update_has_state(update_);
  for (size_t p = 0; p < owned_count_; ++p) {
    const size_t at = shard_local_row(owned_[p], size) * dim;
    kernels::update_row(this->shard_.table + at, with_state ? this->shard_.state + at : nullptr,
                        sums_ + p * dim, dim, update_);
  }
}

}  // namespace

Status sharded_reduce_apply(zfcSparsePlan& plan, const void* indices, size_t count,
                            const void* rows, const kernels::RowUpdate& update,
                            const ShardBuffers& shard, const Status& caller_check,
                            int* overflowed, const void* stream) {
  return with_key_type(plan.spec.vocab, [&](auto tag) -> Status {
    using K = typename decltype(tag)::type;
    return run_or_record<ShardedApplyCall<K>>(*plan.comm, &plan, plan, indices, count, rows,
                                              update, shard, caller_check, overflowed, stream);
  });
}

}  // namespace zfc
