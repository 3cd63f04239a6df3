#include "algo/allreduce_call.hpp"

#include <cstring>
#include <memory>
#include <vector>

#include "algo/allreduce.hpp"
#include "algo/call_group.hpp"
#include "algo/error_feedback.hpp"
#include "algo/hierarchical_allreduce.hpp"
#include "algo/rank_order.hpp"
#include "base/enum_value.hpp"
#include "kernels/cast.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
namespace {

// The dense allreduce runs in two levels on a communicator grouped into equal nodes, when
// the node and cross-node transports take the buffers where they are.
bool two_levels(const zfcComm& comm, bool device_buffers) {
  if (!comm.nodes.hierarchical() || !comm.node_transport || !comm.rail_transport) return false;
  return !device_buffers || (comm.node_transport->accepts_device_buffers() &&
                             comm.rail_transport->accepts_device_buffers());
}

class AllReduceCall final : public CollectiveCall {
 public:
  AllReduceCall(zfcComm& comm, StagingBuffers& staging, bool in_group, const void* send,
                void* recv, size_t count, zfcDataType_t type, const zfcCompression_t* how,
                int* overflowed, const void* stream, float* residual)
      : comm_(comm), in_group_(in_group), send_(send), recv_(recv), count_(count),
        type_(type), overflowed_(overflowed), stream_(stream), residual_(residual),
        mine_(make_header(OpKind::kAllReduce)), staging_(staging) {
    kind_ = how != nullptr ? enum_value(how->kind) : zfcCompressNone;
    scale_ = how != nullptr ? how->scale : 1.0f;
    rounding_step_ = comm.rounding_calls++;
  }

  void prepare(zfcOpStats_t* op) override;
  LocalHeader& header() override { return mine_; }
  const void* payload() const override { return riding_.empty() ? nullptr : riding_.data(); }
  size_t payload_bytes() const override { return riding_.size(); }
  Workspace& workspace() override { return comm_.workspace; }
  // The values ride only when every rank's did (a rank with device buffers sends none); all
  // ranks see the same sizes, so all decide alike, and order the group's calls alike.
  Status check_agreed(const Agreed& agreed) override {
    const size_t riding_bytes =
        count_ * kernels::wire_format(compression_.kind).element_bytes;
    rides_ = in_group_ && count_ > 0 && count_ <= kRidingValues && agreed.payload != nullptr;
    for (int r = 0; r < comm_.size() && rides_; ++r) rides_ = agreed.bytes[r] == riding_bytes;
    return Status::Ok();
  }
  bool writes_while_running() const override { return !rides_; }
  Status run(const Agreed& agreed, zfcOpStats_t* op) override;
  bool overflowed() const override { return !finite_; }
  void hold_updates() override { held_ = true; }
  void publish() override {
    if (rides_ && count_ > 0) std::memcpy(recv_, result_.data(), count_ * sizeof(float));
    // What the encode left out, once every transfer is done and the sum finite.
    if (residual_ != nullptr && finite_ && !held_ && count_ > 0) {
      std::memcpy(residual_, left_out_, count_ * sizeof(float));
    }
    if (overflowed_ != nullptr) *overflowed_ = finite_ ? 0 : 1;
  }

 private:
  Status check_local();
  Status run_riding(const Agreed& agreed);

  zfcComm& comm_;
  bool in_group_;
  const void* send_;
  void* recv_;
  size_t count_;
  zfcDataType_t type_;
  int kind_;
  float scale_;
  int* overflowed_;
  const void* stream_;
  float* residual_;                           // error feedback's, the caller's; or NULL
  const float* left_out_ = nullptr;           // its next value (workspace, or own_left_out_)
  std::vector<float> own_left_out_;           // a grouped call's
  bool held_ = false;                         // a call of its group overflowed
  LocalHeader mine_;
  HostStaging staging_;
  Compression compression_;
  uint64_t rounding_step_ = 0;
  bool direct_ = false;                       // device buffers straight to the transport
  const void* host_send_ = nullptr;
  std::unique_ptr<WireKernels> device_kernels_;
  std::vector<char> riding_;                  // this rank's values on the wire, when they ride
  bool rides_ = false;                        // every rank's did (check_agreed)
  std::vector<float> result_;                 // the riding result, until publish
  bool finite_ = true;
};

Status AllReduceCall::check_local() {
  const Status parsed = make_compression(kind_, scale_, &compression_);
  if (compression_.kind == zfcCompressNone) compression_.scale = 1.0f;
  compression_.seed = comm_.config.rounding_seed;
  compression_.step = rounding_step_;
  ZFC_RETURN_IF_ERROR(staging_.begin({{"send", send_}, {"recv", recv_}}, stream_));
  ZFC_RETURN_IF_ERROR(parsed);
  if (type_ != zfcFloat32) {
    return error(zfcUnsupported, "type %d: zfcAllReduce sums zfcFloat32 data",
                 static_cast<int>(type_));
  }
  if (count_ > 0 && (send_ == nullptr || recv_ == nullptr)) {
    return error(zfcInvalidArgument, "%s is NULL with count %zu",
                 send_ == nullptr ? "send" : "recv", count_);
  }
  // Device buffers stay on the device when the transport takes them (NCCL, CUDA-aware
  // MPI); otherwise they go through host memory.
  // The eight-bit formats and stochastic rounding have host kernels only: their device
  // buffers go through host memory.
  const bool device_wire = kernels::wire_format(compression_.kind).element_only() &&
                           !compression_.stochastic;
  direct_ = staging_.on_device() && comm_.transport->accepts_device_buffers() && device_wire;
  host_send_ = send_;
  if (!direct_) {
    ZFC_RETURN_IF_ERROR(staging_.input(0, send_, count_ * sizeof(float), &host_send_));
  }
  if (direct_) {
    ZFC_RETURN_IF_ERROR(make_device_wire_kernels(comm_.device_scratch, stream_,
                                                 &device_kernels_));
  }
  if (residual_ != nullptr && staging_.on_device()) {
    return error(zfcUnsupported, "error feedback (a residual) takes host buffers in this "
                 "version");
  }
  return Status::Ok();
}

void AllReduceCall::prepare(zfcOpStats_t* op) {
  PhaseTimer timer(op, zfcPhaseLocal);
  mine_.count = static_cast<int64_t>(count_);
  mine_.row_type = type_;
  mine_.compression = kind_;
  mine_.scale = kind_ == zfcCompressNone ? 1.0f : scale_;
  header_fail(&mine_, check_local());
  // A format with a per-row part (the eight-bit ones) does not ride: its rows are cut by the
  // allreduce of rows; nor does stochastic rounding, whose bits are the sending rank's, nor
  // error feedback.
  if (mine_.status != zfcSuccess || !in_group_ || staging_.on_device() || count_ == 0 ||
      count_ > kRidingValues || !kernels::wire_format(compression_.kind).element_only() ||
      compression_.stochastic || residual_ != nullptr) {
    return;
  }
  // The values as the allreduce would send them: on the wire, scaled.
  const zfcDataType_t wire = kernels::wire_type(compression_.kind);
  riding_.resize(count_ * kernels::float_type_bytes(wire));
  HostWireKernels k(comm_.workspace);
  header_fail(&mine_, k.encode(static_cast<const float*>(host_send_), count_, wire,
                               compression_.scale, riding_.data()));
}

// Every rank's values came with the headers: sum them in the order of sums and round the
// sum as the allreduce's gather would (algo/allreduce.cpp).
Status AllReduceCall::run_riding(const Agreed& agreed) {
  const int size = comm_.size();
  const zfcDataType_t wire = kernels::wire_type(compression_.kind);
  const size_t bytes = riding_.size();
  HostWireKernels k(comm_.workspace);
  char* blocks = comm_.workspace.get<char>(Slot::kWireRecv, static_cast<size_t>(size) * bytes);
  for (int r = 0; r < size; ++r) {
    std::memcpy(blocks + static_cast<size_t>(r) * bytes, agreed.payload + agreed.displs[r],
                bytes);
  }
  result_.resize(count_);
  ZFC_RETURN_IF_ERROR(sum_rank_blocks(&comm_.nodes, size, k, blocks, count_, wire,
                                      result_.data()));
  if (wire == zfcFloat32) {
    ZFC_RETURN_IF_ERROR(k.check_finite(result_.data(), count_));
  } else {
    ZFC_RETURN_IF_ERROR(k.encode(result_.data(), count_, wire, 1.0f, blocks));
    ZFC_RETURN_IF_ERROR(k.decode(blocks, count_, wire, compression_.scale, result_.data()));
  }
  return k.all_finite(&finite_);
}

// zfcOpStats_t's path of an allreduce's phases (local, header, row exchange) and its waits.
void note_allreduce_path(int32_t where, uint32_t syncs, zfcOpStats_t* op) {
  op->path[zfcPhaseLocal] = where;
  op->path[zfcPhaseHeader] = zfcPathHost;
  op->path[zfcPhaseRowExchange] = where;
  op->path[zfcPhaseTotal] = where;
  op->host_syncs += syncs;
}

Status AllReduceCall::run(const Agreed& agreed, zfcOpStats_t* op) {
  PhaseTimer timer(op, zfcPhaseRowExchange);
  if (rides_) {
    ZFC_RETURN_IF_ERROR(run_riding(agreed));
    op->overflows += finite_ ? 0 : 1;
    note_allreduce_path(zfcPathHost, 0, op);
    return Status::Ok();
  }
  Transport& t = *comm_.transport;
  Workspace& ws = comm_.workspace;
  HostWireKernels host_kernels(ws);
  WireKernels& k = direct_ ? *device_kernels_ : host_kernels;
  const float* in = static_cast<const float*>(direct_ ? send_ : host_send_);
  float* fed = nullptr;  // send + residual, then what its encode leaves out
  if (residual_ != nullptr && count_ > 0) {
    // Kept until publish(): a group's later calls use the workspace, so a call of a group
    // keeps its own.
    if (in_group_) {
      own_left_out_.resize(count_);
      fed = own_left_out_.data();
    } else {
      fed = ws.get<float>(Slot::kFeedback, count_);
    }
    add_residual(in, residual_, count_, fed);
    in = fed;
  }
  void* out = recv_;
  if (!direct_) ZFC_RETURN_IF_ERROR(staging_.output(1, recv_, count_ * sizeof(float), &out));
  if (two_levels(comm_, direct_) && kernels::wire_format(compression_.kind).element_only() &&
      !compression_.stochastic) {
    ZFC_RETURN_IF_ERROR(hierarchical_allreduce_sum(t, *comm_.node_transport,
                                                   *comm_.rail_transport, comm_.nodes, ws, k,
                                                   in, static_cast<float*>(out), count_,
                                                   compression_, &finite_));
  } else {
    ZFC_RETURN_IF_ERROR(allreduce_sum(t, ws, k, in, static_cast<float*>(out), count_,
                                      compression_, &finite_, &comm_.nodes,
                                      RecvWrites::kAfterLastTransfer));
  }
  if (fed != nullptr) {
    left_out_ = fed;
    left_by_encode(ws, compression_, t.rank(), kAllReduceRowValues, fed, count_);
  }
  if (!direct_) ZFC_RETURN_IF_ERROR(staging_.finish());
  op->overflows += finite_ ? 0 : 1;
  note_allreduce_path(direct_ ? zfcPathDevice : staging_.on_device() ? zfcPathStaged : zfcPathHost,
                      k.syncs() + staging_.waits(), op);
  return Status::Ok();
}

}  // namespace

Status allreduce(zfcComm& comm, const void* send, void* recv, size_t count,
                 zfcDataType_t type, const zfcCompression_t* how, int* overflowed,
                 const void* stream, float* residual) {
  if (comm.group_depth == 0) {
    AllReduceCall call(comm, comm.staging, false, send, recv, count, type, how, overflowed,
                       stream, residual);
    return run_alone(comm, call);
  }
  // Each call of a group keeps its staged host copies until the group runs.
  CallGroup& group = open_group(comm);
  group.record([&] {
    return std::make_unique<AllReduceCall>(comm, group.next_staging(), true, send, recv, count,
                                           type, how, overflowed, stream, residual);
  }, nullptr);
  return Status::Ok();
}

}  // namespace zfc
