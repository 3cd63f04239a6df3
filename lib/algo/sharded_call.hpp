// What the two collectives of a sharded table share: the local checks of a call (buffers,
// ids, the shard's shape) and the index set of this rank's distinct ids.
#pragma once

#include "algo/call_group.hpp"
#include "algo/call_path.hpp"
#include "algo/shard_layout.hpp"
#include "algo/sharded_table.hpp"
#include "exec/host_staging.hpp"
#include "exec/memory_space.hpp"
#include "kernels/cast.hpp"

namespace zfc {

template <class K>
class ShardedCall : public CollectiveCall {
 public:
  LocalHeader& header() override { return mine_; }
  Workspace& workspace() override { return plan_.ws; }

 protected:
  ShardedCall(zfcSparsePlan& plan, OpKind op, const ShardBuffers& shard, const void* indices,
              size_t count, const void* rows, const Status& caller_check, const void* stream)
      : plan_(plan), shard_(shard), indices_(indices), count_(count), rows_(rows),
        caller_check_(caller_check), stream_(stream),
        mine_(plan_header(op, plan.spec, count)), set_(plan.ws, plan.spec.vocab),
        host_kernels_(plan.ws), staging_(plan.staging),
        alone_(plan.comm->group_depth == 0),
        compression_(take_rounding_step(*plan.comm, plan.spec.compression)) {}

  // This rank's checks and its distinct ids; a failure goes into the header.
  void load(zfcOpStats_t* op, bool with_rows, bool with_state) {
    op->tokens += count_;
    PhaseTimer timer(op, zfcPhaseLocal);
    header_fail(&mine_, check_and_load(with_rows, with_state));
    mine_.local_unique = static_cast<int64_t>(set_.local_unique_count());
  }

  // The view of the call the routed exchanges take (algo/routed_pairs.hpp).
  SparseCall<K> sparse_call(const Agreed& agreed, zfcOpStats_t* op) {
    zfcComm& comm = *plan_.comm;
    SparseCall<K> call{*comm.transport, comm.nodes, plan_.ws, plan_.spec, op, set_, agreed,
                       rows_, {}};
    call.machine = &comm.machine;
    call.kernels = &host_kernels_;  // sharded tables are host memory
    call.compression = compression_;
    return call;
  }

  Transport& transport() { return *plan_.comm->transport; }

  // zfcOpStats_t's path: staged for device buffers (the ids and rows copied to the host, the
  // shard's rows read or updated on the device), with the waits for the stream.
  void note_where(zfcOpStats_t* op) {
    note_path(staging_.on_device() ? CallPath::kStaged : CallPath::kHost,
              staging_.waits() + device_waits_, op);
  }

  // The route of an alltoallv of one item of `item_bytes` per distinct id (routed_route).
  Route route(const Agreed& agreed, double item_bytes) {
    zfcComm& comm = *plan_.comm;
    return routed_route(&comm.machine, agreed, comm.transport->size(), comm.nodes.node_count(),
                        item_bytes);
  }

  zfcSparsePlan& plan_;
  ShardBuffers shard_;
  const void* indices_;
  size_t count_;
  const void* rows_;
  Status caller_check_;
  const void* stream_;
  LocalHeader mine_;
  IndexSet<K> set_;
  HostStepKernels<K> host_kernels_;
  // Device buffers: the ids and rows are copied to the host, where the exchange runs; the
  // shard stays on the device, its rows read (gather) and updated (apply) there.
  HostStaging staging_;
  bool alone_;  // not recorded in a group
  Compression compression_;  // the plan's, with this call's rounding step
  NamedBuffer output_{"output", nullptr};  // a caller's buffer the call writes (the gather's)
  uint32_t device_waits_ = 0;  // for the shard's rows, besides the staging's

  MemorySpace shard_space() const {
    return staging_.on_device() ? MemorySpace::kDevice : MemorySpace::kHost;
  }

 private:
  Status check_and_load(bool with_rows, bool with_state) {
    ZFC_RETURN_IF_ERROR(staging_.begin({{"indices", indices_},
                                        {"rows", with_rows ? rows_ : nullptr},
                                        {"shard", shard_.table},
                                        {"state", with_state ? shard_.state : nullptr},
                                        output_},
                                       stream_));
    if (staging_.on_device() && !alone_) {
      // A group writes its outputs at zfcGroupEnd, once every call succeeded, and a write
      // to the device can fail.
      return error(zfcUnsupported, "sharded-table calls on device buffers run alone, not "
                   "recorded in a group, in this version");
    }
    ZFC_RETURN_IF_ERROR(caller_check_);
    ZFC_RETURN_IF_ERROR(check_plan_call(indices_, count_, rows_, with_rows));
    const Transport& t = *plan_.comm->transport;
    const PlanSpec& spec = plan_.spec;
    const size_t index_bytes = spec.index_type == zfcInt32 ? 4 : 8;
    ZFC_RETURN_IF_ERROR(staging_.input(0, indices_, count_ * index_bytes, &indices_));
    if (with_rows) {
      ZFC_RETURN_IF_ERROR(staging_.input(
          1, rows_, count_ * spec.dim * kernels::float_type_bytes(spec.row_type), &rows_));
    }
    const uint64_t rows = shard_row_count(spec.vocab, t.size(), t.rank());
    if (shard_.rows != rows) {
      return error(zfcInvalidArgument, "shard_rows is %zu, but this rank's shard of a "
                   "%lld-row table over %d ranks has %llu rows (see zfcShardRows)", shard_.rows,
                   static_cast<long long>(spec.vocab), t.size(),
                   static_cast<unsigned long long>(rows));
    }
    if (rows > 0 && shard_.table == nullptr) {
      return error(zfcInvalidArgument, "shard is NULL with shard_rows %zu", shard_.rows);
    }
    if (with_state && rows > 0 && shard_.state == nullptr) {
      return error(zfcInvalidArgument, "state is NULL, but an Adagrad update needs the "
                   "accumulator rows of the shard");
    }
    ZFC_RETURN_IF_ERROR(
        set_.load(indices_, spec.index_type, count_, plan_.comm->config.bounds_check, true));
    // Unchecked ids (bounds_check 0) may still not name a row: a shard has none beyond V, and
    // the largest distinct id, last in sorted order, is the one to look at.
    const size_t ui = set_.local_unique_count();
    if (ui > 0 && static_cast<uint64_t>(set_.local_unique()[ui - 1]) >=
                      static_cast<uint64_t>(spec.vocab)) {
      return error(zfcInvalidArgument, "an index is outside [0, %lld): a sharded table has no "
                   "row for it", static_cast<long long>(spec.vocab));
    }
    return Status::Ok();
  }
};

}  // namespace zfc
