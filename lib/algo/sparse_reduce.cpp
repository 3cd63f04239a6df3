#include "algo/sparse_reduce.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>

#include "algo/algorithms.hpp"
#include "algo/call_group.hpp"
#include "algo/call_path.hpp"
#include "algo/collectives.hpp"
#include "algo/cost_model.hpp"
#include "exec/memory_space.hpp"
#include "exec/table_update.hpp"
#include "kernels/cast.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
namespace {

// The sizes of zfcSparsePlanConfig_t in every release since 0.1.0, oldest first.
const size_t kPlanConfigLayouts[] = {offsetof(zfcSparsePlanConfig_t, stream_chunk_bytes),
                                     offsetof(zfcSparsePlanConfig_t, overflow_on_device),
                                     sizeof(zfcSparsePlanConfig_t)};

bool is_row_type(zfcDataType_t t) {
  return t == zfcFloat32 || t == zfcFloat16 || t == zfcBFloat16;
}

CostInputs cost_inputs(const OpHeader* all, int size, int nodes, const PlanSpec& spec,
                       size_t key_bytes) {
  CostInputs in;
  in.ranks = size;
  in.nodes = nodes;
  for (int r = 0; r < size; ++r) {
    in.tokens += static_cast<uint64_t>(all[r].count);
    in.max_tokens = std::max(in.max_tokens, static_cast<uint64_t>(all[r].count));
    in.local_unique += static_cast<uint64_t>(all[r].local_unique);
    in.max_local_unique =
        std::max(in.max_local_unique, static_cast<uint64_t>(all[r].local_unique));
  }
  in.vocab = spec.vocab;
  in.dim = spec.dim;
  in.key_bytes = key_bytes;
  in.row_bytes = kernels::wire_format(spec.compression.kind).value_bytes(spec.dim);
  in.input_bytes = kernels::float_type_bytes(spec.row_type);
  return in;
}

// Whether `a` merges the global index set before its row exchange (the table says).
bool merges_global_set_first(zfcAlgorithm_t a) {
  const AlgorithmInfo* info = find_algorithm(a);
  return info != nullptr && info->merges_first;
}

// Whether this rank's distinct keys ride with its header: for the algorithms that gather
// them (they then cost no round of their own), and for zfcAlgoAuto as the plan last chose.
// A fused apply's zfcAlgoAuto is the key-routed exchange, the one that streams.
bool keys_ride(const zfcSparsePlan& plan, bool fused) {
  const zfcAlgorithm_t a = plan.spec.algorithm;
  if (a == zfcAlgoAuto) return !fused && plan.auto_keys_ride;
  return merges_global_set_first(a);
}

// Runs the exchange, resolving zfcAlgoAuto; returns the algorithm that ran in *ran.
template <class K>
Status run_exchange(SparseCall<K>& call, const MachineModel& machine, zfcAlgorithm_t* ran) {
  Transport& t = call.transport;
  zfcAlgorithm_t algorithm = call.spec.algorithm;
  // The exchange that streams; and the one a device runs waiting once, on every rank alike.
  if (algorithm == zfcAlgoAuto && call.apply != nullptr) algorithm = zfcAlgoKeyRouted;
  if (algorithm == zfcAlgoAuto && some_rank_resident(call.agreed, t.size())) {
    algorithm = zfcAlgoUniqueAllReduce;
  }
  CostInputs costs =
      cost_inputs(call.agreed.headers, t.size(), call.nodes.node_count(), call.spec, sizeof(K));
  if (algorithm == zfcAlgoAuto) algorithm = choose_before_index_exchange(costs, machine);
  *ran = algorithm;
  const AlgorithmInfo* info = find_algorithm(algorithm);
  if (info != nullptr && !info->merges_first) return info->run(call);
  {
    PhaseTimer timer(call.op, zfcPhaseIndexExchange);
    ZFC_RETURN_IF_ERROR(call.set.gather(t, call.agreed));
  }
  {
    PhaseTimer timer(call.op, zfcPhaseMerge);
    call.set.merge_gathered(t.rank());
  }
  if (algorithm == zfcAlgoAuto) {
    costs.global_unique = call.set.global_count();
    algorithm = choose_after_index_exchange(costs, machine, call.nodes.hierarchical());
    *ran = algorithm;
    info = find_algorithm(algorithm);
  }
  return info->run(call);
}

// Whether the host needs this rank's distinct keys: for the algorithms that gather them,
// and for zfcAlgoAuto unless it is the streamed key-routed exchange.
bool gathers_keys(const PlanSpec& spec, bool fused) {
  return merges_global_set_first(spec.algorithm) || (spec.algorithm == zfcAlgoAuto && !fused);
}

// The local phase: this rank's checks, where its buffers go (*path; staged inputs are copied
// to the host), and its index set, on `host` or on the device kernels made into *device. The
// status is agreed with the other ranks next; *rows are the rows to send. The host learns the
// sizes (and the distinct keys, which ride with the header) in one read.
template <class K>
Status load_local(zfcSparsePlan& plan, HostStaging& staging, const void* indices, size_t count,
                  const void* rows, const Status& caller_check, const void* stream,
                  bool fused, bool into, IndexSet<K>& set, StepKernels<K>& host,
                  std::unique_ptr<StepKernels<K>>* device, CallPath* path, bool* queues,
                  const void** rows_out) {
  const PlanSpec& spec = plan.spec;
  ZFC_RETURN_IF_ERROR(staging.begin({{"indices", indices}, {"rows", rows}}, stream));
  ZFC_RETURN_IF_ERROR(caller_check);
  ZFC_RETURN_IF_ERROR(check_plan_call(indices, count, rows, true));
  // The baseline exchanges every token, so it has no use for the local distinct set.
  const AlgorithmInfo* info = find_algorithm(spec.algorithm);
  const bool dedupe = info == nullptr || info->dedupes;
  const bool check = plan.comm->config.bounds_check;
  const bool keys_to_host = gathers_keys(spec, fused);
  // The key-routed exchange's owner map rides with the load's one read (IndexSet::load).
  const bool routes =
      spec.algorithm == zfcAlgoKeyRouted || (spec.algorithm == zfcAlgoAuto && fused);
  const int owner_ranks = routes ? plan.comm->transport->size() : 0;
  if (staging.on_device() && stays_on_device(*plan.comm, spec, fused, into)) {
    *path = CallPath::kResident;
    // The uniqueness technique's transfers queue behind the kernels on the caller's stream
    // (NCCL; not on the legacy default stream, which NCCL's own stream does not follow), so
    // nothing waits between them.
    *queues = resident_unique_allreduce(spec) &&
              plan.comm->transport->queues_on_caller_stream() && stream != nullptr;
    zfcComm& comm = *plan.comm;
    const QueuedOn queued{*queues ? comm.transport.get() : nullptr};
    ZFC_RETURN_IF_ERROR(make_device_step_kernels(plan.device_scratch, stream, device, queued));
    *rows_out = rows;
    return set.load(**device, indices, spec.index_type, count, check, dedupe, keys_to_host,
                    owner_ranks);
  }
  *path = staging.on_device() ? CallPath::kStaged : CallPath::kHost;
  const size_t index_bytes = spec.index_type == zfcInt32 ? 4 : 8;
  const size_t row_bytes = spec.dim * kernels::float_type_bytes(spec.row_type);
  const void* host_indices = nullptr;
  ZFC_RETURN_IF_ERROR(staging.input(0, indices, count * index_bytes, &host_indices));
  ZFC_RETURN_IF_ERROR(staging.input(1, rows, count * row_bytes, rows_out));
  return set.load(host, host_indices, spec.index_type, count, check, dedupe, keys_to_host,
                  owner_ranks);
}

// Checks of an algorithm asked for by name against what every rank knows alike (so all
// ranks fail together, after the agreement).
Status check_algorithm(const zfcComm& comm, const PlanSpec& spec) {
  const AlgorithmInfo* a = find_algorithm(spec.algorithm);
  if (a == nullptr) return Status::Ok();  // auto
  if (a->needs_int32_positions && spec.vocab > INT32_MAX) {
    return error(zfcUnsupported, "algorithm %s needs vocab_size <= %d, not %lld", a->name,
                 INT32_MAX, static_cast<long long>(spec.vocab));
  }
  if (a->needs_node_map && !comm.nodes.hierarchical()) {
    return error(zfcUnsupported,
                 "algorithm %s needs several nodes holding several ranks each, "
                 "the same number on every node; this communicator of %d ranks has %d nodes "
                 "(%s): set the config's ranks_per_node to group ranks", a->name, comm.size(),
                 comm.nodes.node_count(),
                 comm.nodes.uniform() ? "of equal size" : "of unequal sizes");
  }
  return Status::Ok();
}

// This rank's checks of a fused apply's table (and Adagrad's state), there, and where they
// live (*space): host memory, or device memory the rows are applied to on the call's stream.
// The exchange is the same either way; only where its rows are applied differs.
Status check_apply_target(const StreamApply& apply, MemorySpace* space) {
  const bool with_state = kernels::update_has_state(apply.update);
  // Only where the table lives: the call's stream goes with its (maybe device) inputs.
  ZFC_RETURN_IF_ERROR(resolve_memory_space(
      {{"table", apply.table}, {"state", with_state ? apply.state : nullptr}}, nullptr,
      space));
  if (apply.table == nullptr) return error(zfcInvalidArgument, "table is NULL");
  if (with_state && apply.state == nullptr) {
    return error(zfcInvalidArgument, "state is NULL, but an Adagrad update needs the "
                 "accumulator rows of the table");
  }
  return Status::Ok();
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (a == nullptr || b == nullptr || a_bytes == 0 || b_bytes == 0) return false;
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

// The header of a call: a fused apply's also carries its update and stream chunk.
OpHeader call_header(const PlanSpec& spec, size_t count, const StreamApply* apply) {
  if (apply == nullptr) return plan_header(OpKind::kSparseReduce, spec, count);
  OpHeader h = plan_header(OpKind::kSparseApply, spec, count);
  h.color = static_cast<int32_t>(apply->update.kind);
  h.node = kernels::pack_update_values(apply->update);
  h.capacity = static_cast<int64_t>(spec.stream_chunk_bytes);
  return h;
}

// One zfcSparseReduce (alone, or one call of a group), or one zfcSparseReduceApply, which
// applies the reduced rows to `apply`'s table instead of returning them.
template <class K>
class SparseReduceCall final : public CollectiveCall {
 public:
  SparseReduceCall(zfcSparsePlan& plan, const void* indices, size_t count, const void* rows,
                   const Status& caller_check, zfcSparseResult_t* out, const void* stream,
                   const StreamApply* apply = nullptr, int* overflowed = nullptr,
                   const CallerOutput* into = nullptr)
      : plan_(plan), indices_(indices), count_(count), rows_(rows),
        caller_check_(caller_check), out_(out), stream_(stream),
        mine_(call_header(plan.spec, count, apply)), set_(plan.ws, plan.spec.vocab),
        staging_(plan.staging), host_kernels_(plan.ws), apply_(apply), overflowed_(overflowed),
        into_(into != nullptr ? *into : CallerOutput{}), has_into_(into != nullptr),
        alone_(plan.comm->group_depth == 0),
        direct_(has_into_ && alone_ &&
                !overlaps(into_.rows, into_.capacity * plan.spec.dim * sizeof(float), rows,
                          count * plan.spec.dim *
                              kernels::float_type_bytes(plan.spec.row_type))) {
    if (has_into_) {  // every rank's room, which every rank checks against U_g
      mine_.capacity = static_cast<int64_t>(std::min<size_t>(into_.capacity, INT64_MAX));
    }
    compression_ = take_rounding_step(*plan.comm, plan.spec.compression);
  }

  void prepare(zfcOpStats_t* op) override {
    op->tokens += count_;
    PhaseTimer timer(op, zfcPhaseLocal);
    header_fail(&mine_, load_local(plan_, staging_, indices_, count_, rows_, caller_check_,
                                   stream_, apply_ != nullptr, has_into_, set_, host_kernels_,
                                   &device_kernels_, &path_, &queues_, &host_rows_));
    if (path_ == CallPath::kResident) mine_.color = kResidentColor;
    if (apply_ != nullptr && mine_.status == zfcSuccess) {
      MemorySpace table_space = MemorySpace::kHost;
      header_fail(&mine_, check_apply_target(*apply_, &table_space));
      table_update_.emplace(table_space, apply_->table, apply_->state, plan_.spec.vocab,
                            plan_.spec.dim, apply_->update, stream_);
    }
    if (has_into_ && mine_.status == zfcSuccess) {
      header_fail(&mine_, check_into());
      // Device outputs are written at the end of run(), the result passing through the plan.
      into_device_ = mine_.status == zfcSuccess && staging_.on_device();
      if (into_device_) direct_ = false;
    }
    mine_.local_unique = static_cast<int64_t>(set_.local_unique_count());
    // A device-resident rank's keys ride for the uniqueness technique (its zfcAlgoAuto);
    // the key-routed exchange needs none.
    const bool rides = path_ == CallPath::kResident ? resident_unique_allreduce(plan_.spec)
                                                    : keys_ride(plan_, apply_ != nullptr);
    ride_ = mine_.status == zfcSuccess && rides && set_.local_unique_host() != nullptr;
  }
  LocalHeader& header() override { return mine_; }
  const void* payload() const override { return ride_ ? set_.local_unique_host() : nullptr; }
  size_t payload_bytes() const override {
    return ride_ ? set_.local_unique_count() * sizeof(K) : 0;
  }
  Workspace& workspace() override { return plan_.ws; }
  Status check_agreed(const Agreed&) override { return check_algorithm(*plan_.comm, plan_.spec); }
  Status run(const Agreed& agreed, zfcOpStats_t* op) override;
  bool overflowed() const override { return result_.overflowed; }
  void publish() override {
    if (apply_ != nullptr) {
      if (overflowed_ != nullptr) *overflowed_ = result_.overflowed ? 1 : 0;
      return;
    }
    if (has_into_ && !direct_ && !into_device_) copy_to_caller();
    out_->indices = result_.indices;
    out_->rows = result_.rows;
    out_->num_unique = result_.num_unique;
    out_->dim = plan_.spec.dim;
    out_->overflowed = result_.overflow_flag != nullptr ? -1 : result_.overflowed ? 1 : 0;
    out_->algorithm = result_.algorithm;
    if (out_->size > kSparseResultSize011) out_->overflow_flag = result_.overflow_flag;
  }

 private:
  Status check_into() const;
  Status place_indices(StepKernels<K>& k, size_t ug, void** indices);
  void copy_to_caller();

  zfcSparsePlan& plan_;
  const void* indices_;
  size_t count_;
  const void* rows_;
  Status caller_check_;
  zfcSparseResult_t* out_;
  const void* stream_;
  LocalHeader mine_;
  IndexSet<K> set_;
  HostStaging staging_;
  HostStepKernels<K> host_kernels_;
  std::unique_ptr<StepKernels<K>> device_kernels_;  // a device-resident call's
  CallPath path_ = CallPath::kHost;
  bool queues_ = false;  // a resident call's transport queues on the caller's stream
  const void* host_rows_ = nullptr;  // the rows the exchange sends (device memory: resident)
  bool ride_ = false;
  const StreamApply* apply_;
  std::optional<TableUpdate> table_update_;  // where apply_'s rows go (prepare)
  int* overflowed_;
  CallerOutput into_;
  bool has_into_;
  bool into_device_ = false;  // zfcSparseReduceInto's buffers are device memory
  bool alone_;  // not recorded in a group
  Compression compression_;  // the plan's, with this call's rounding step
  // Alone, the exchange writes the caller's buffers itself. In a group the result passes
  // through the plan and is copied at publish, so that a call of the group that fails
  // leaves every buffer as it was; it does too when the result's rows overlap the input
  // rows, which some exchanges still read after they begin to write the result.
  bool direct_;
  SparseOutput result_;
};

// zfcSparseReduceInto's own checks, before anything is exchanged.
template <class K>
Status SparseReduceCall<K>::check_into() const {
  if (into_.capacity > 0 && into_.indices == nullptr) {
    return error(zfcInvalidArgument, "out_indices is NULL with capacity %zu", into_.capacity);
  }
  if (into_.capacity > 0 && plan_.spec.dim > 0 && into_.rows == nullptr) {
    return error(zfcInvalidArgument, "out_rows is NULL with capacity %zu", into_.capacity);
  }
  // The outputs are in the inputs' memory space (the stream, if any, was checked with them).
  MemorySpace space = MemorySpace::kHost;
  ZFC_RETURN_IF_ERROR(resolve_memory_space({{"out_indices", into_.indices},
                                            {"out_rows", into_.rows}},
                                           stream_, &space));
  const bool writes = into_.indices != nullptr || into_.rows != nullptr;
  if (writes && (space == MemorySpace::kDevice) != staging_.on_device()) {
    return error(zfcInvalidArgument, "out_indices and out_rows are %s memory but indices and "
                 "rows are %s memory: a call's buffers must all be on the device or all on "
                 "the host", space == MemorySpace::kDevice ? "device" : "host",
                 staging_.on_device() ? "device" : "host");
  }
  if (space == MemorySpace::kDevice && !alone_) {
    // A group writes its outputs only once every call succeeded (publish), and a copy to
    // the device can fail.
    return error(zfcUnsupported, "zfcSparseReduceInto on device buffers runs alone, not "
                 "recorded in a group, in this version");
  }
  return Status::Ok();
}

// The result's indices: in the caller's buffer with zfcSparseReduceInto alone, else in the
// plan's workspace (k's: the device scratch of a device-resident call). Every exchange took
// its rows from result_rows, which checked every rank's room against U_g and, alone, gave it
// the caller's rows (or, on the device, the plan's device memory).
template <class K>
Status SparseReduceCall<K>::place_indices(StepKernels<K>& k, size_t ug, void** indices) {
  const size_t index_bytes = plan_.spec.index_type == zfcInt32 ? 4 : 8;
  if (direct_) {
    *indices = into_.indices;
  } else {
    char* at = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kResultIndices, ug * index_bytes, &at));
    *indices = at;
  }
  return k.store_keys(set_.global(), ug, plan_.spec.index_type, *indices);
}

// A zfcSparseReduceInto whose result passed through the plan (in a group, or over its
// input rows), once the exchange and the group ran: the result into the caller's buffers.
template <class K>
void SparseReduceCall<K>::copy_to_caller() {
  const size_t ug = result_.num_unique;
  const size_t index_bytes = plan_.spec.index_type == zfcInt32 ? 4 : 8;
  if (ug > 0) {
    std::memcpy(into_.indices, result_.indices, ug * index_bytes);
    std::memcpy(into_.rows, result_.rows, ug * plan_.spec.dim * sizeof(float));
  }
  result_.indices = into_.indices;
  result_.rows = into_.rows;
}

template <class K>
Status SparseReduceCall<K>::run(const Agreed& agreed, zfcOpStats_t* op) {
  zfcComm* comm = plan_.comm;
  const PlanSpec& spec = plan_.spec;
  Workspace& ws = plan_.ws;
  SparseCall<K> call{*comm->transport, comm->nodes, ws,  spec, op, set_, agreed, host_rows_,
                     {comm->node_transport.get(), comm->rail_transport.get()}};
  call.compression = compression_;
  call.apply = apply_;
  if (apply_ != nullptr) call.table_update = &*table_update_;
  call.caller_rows = direct_ ? into_.rows : nullptr;
  call.machine = &comm->machine;
  StepKernels<K>& k =
      path_ == CallPath::kResident ? *device_kernels_ : static_cast<StepKernels<K>&>(host_kernels_);
  call.kernels = &k;
  // A device-resident exchange leaves the overflow flag to this call, which reads it once
  // the result is in place -- the step's last wait -- or, alone on a plan that asks, hands it
  // to the caller (not in a group, whose calls tell each other whether one overflowed, nor
  // for a zfcSparseResult_t that predates overflow_flag).
  call.leave_flag = path_ == CallPath::kResident && k.wire().flag_word() != nullptr;
  const bool flag_to_caller = call.leave_flag && spec.overflow_on_device && alone_ &&
                              out_ != nullptr && out_->size > kSparseResultSize011;
  zfcAlgorithm_t algorithm = spec.algorithm;
  Status ran;
  {
    QueueOn queue(queues_ ? comm->transport.get() : nullptr, stream_);
    ran = run_exchange(call, comm->machine, &algorithm);
  }
  if (!ran.ok() && path_ == CallPath::kResident &&
      (ran.code() == zfcSystemError || ran.code() == zfcOutOfMemory)) {
    // A device failure of this rank's between two rounds: its peers may wait in the next
    // one (up to timeout_ms), and this communicator cannot be trusted to be in step.
    comm->transport->fail(ran);
  }
  ZFC_RETURN_IF_ERROR(ran);
  if (spec.algorithm == zfcAlgoAuto && apply_ == nullptr) {
    plan_.auto_keys_ride = merges_global_set_first(algorithm);
  }
  const bool streamed = apply_ != nullptr && call.out_rows == nullptr;
  const size_t ug = streamed ? call.applied_unique : set_.global_count();
  const size_t index_bytes = spec.index_type == zfcInt32 ? 4 : 8;
  void* result_indices = nullptr;
  if (!streamed) ZFC_RETURN_IF_ERROR(place_indices(k, ug, &result_indices));
  // The step's last wait, once its whole result is queued: complete when the call returns.
  ZFC_RETURN_IF_ERROR(read_unread(call, call.leave_flag && !flag_to_caller));
  if (apply_ != nullptr) {
    PhaseTimer timer(op, zfcPhaseScatter);
    if (!streamed && call.finite) {
      // An exchange that does not stream: its whole result, as zfcApplyUpdate would apply
      // it (the indices, sorted and below the vocabulary, read as unsigned keys).
      ZFC_RETURN_IF_ERROR(
          table_update_->apply(result_indices, index_bytes, call.out_rows, ug));
    }
  }
  if (into_device_) {
    // The caller's device buffers, from the host's result, once the exchange succeeded (a
    // failure of these copies themselves may leave out_indices written).
    ZFC_RETURN_IF_ERROR(staging_.copy_out(into_.indices, result_indices, ug * index_bytes));
    ZFC_RETURN_IF_ERROR(
        staging_.copy_out(into_.rows, call.out_rows, ug * spec.dim * sizeof(float)));
    ZFC_RETURN_IF_ERROR(staging_.finish());
    result_indices = into_.indices;
    call.out_rows = into_.rows;
  }
  result_.indices = result_indices;
  result_.rows = call.out_rows;
  uint32_t waits = k.syncs() + staging_.waits() +
                   (table_update_.has_value() ? table_update_->waits() : 0);
  plan_.last_reads = path_ == CallPath::kResident ? k.syncs() : host_kernels_.fetches();
  if (path_ == CallPath::kStaged && apply_ == nullptr && !has_into_) {
    ZFC_RETURN_IF_ERROR(plan_.device_result.store(result_indices, ug * index_bytes,
                                                  call.out_rows, ug * spec.dim * sizeof(float),
                                                  stream_, &result_.indices, &result_.rows));
    ++waits;  // store waits for its copies
  }
  if (algorithm != zfcAlgoAllGather) op->local_unique += set_.local_unique_count();
  op->global_unique += ug;
  op->algorithm = algorithm;
  op->overflows += call.finite ? 0 : 1;  // a flag left on the device is not counted
  result_.num_unique = ug;
  result_.overflowed = !call.finite;
  result_.overflow_flag = flag_to_caller ? k.wire().flag_word() : nullptr;
  if (flag_to_caller && queues_) {
    // Nothing waited for the transfers queued on the stream: the next call, or
    // zfcCommGetAsyncError, waits for them and reports their failure.
    ZFC_RETURN_IF_ERROR(comm->async_errors.note_device_end(stream_));
  }
  result_.algorithm = algorithm;
  note_path(path_, waits, op);
  return Status::Ok();
}

}  // namespace

OpHeader plan_header(OpKind op, const PlanSpec& spec, size_t count) {
  OpHeader h = make_header(op);
  h.count = static_cast<int64_t>(count);
  h.dim = static_cast<int64_t>(spec.dim);
  h.vocab = spec.vocab;
  h.row_type = spec.row_type;
  h.index_type = spec.index_type;
  h.algorithm = spec.algorithm;
  h.compression = spec.compression.code();
  h.scale = spec.compression.scale;
  return h;
}

Status check_plan_call(const void* indices, size_t count, const void* rows, bool with_rows) {
  if (count > 0 && indices == nullptr) {
    return error(zfcInvalidArgument, "indices is NULL with count %zu", count);
  }
  if (with_rows && count > 0 && rows == nullptr) {
    return error(zfcInvalidArgument, "rows is NULL with count %zu", count);
  }
  if (count > static_cast<size_t>(INT32_MAX)) {
    return error(zfcInvalidArgument, "count %zu exceeds %d", count, INT32_MAX);
  }
  return Status::Ok();
}

Status parse_plan_config(const zfcSparsePlanConfig_t* user, const Config& comm_config,
                         PlanSpec* out) {
  if (user == nullptr) return error(zfcInvalidArgument, "plan config is NULL");
  if (user->magic != ZFC_SPARSE_PLAN_MAGIC) {
    return error(zfcInvalidUsage, "plan config has magic 0x%x, expected 0x%x: initialise it "
                 "with ZFC_SPARSE_PLAN_CONFIG_INITIALIZER", user->magic, ZFC_SPARSE_PLAN_MAGIC);
  }
  if (user->version > static_cast<unsigned>(ZFC_VERSION_CODE) || user->version < 100) {
    return error(zfcInvalidUsage, "plan config version %u is not one this library (%d) knows",
                 user->version, ZFC_VERSION_CODE);
  }
  zfcSparsePlanConfig_t full = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  ZFC_RETURN_IF_ERROR(copy_versioned(user, user->size, kPlanConfigLayouts,
                                     sizeof kPlanConfigLayouts / sizeof kPlanConfigLayouts[0],
                                     "plan config", "ZFC_SPARSE_PLAN_CONFIG_INITIALIZER", &full,
                                     sizeof full));
  user = &full;
  if (user->dim == 0) return error(zfcInvalidArgument, "plan dim must be > 0");
  if (!is_row_type(user->row_type)) {
    return error(zfcInvalidArgument, "plan row_type %d must be zfcFloat32, zfcFloat16 or "
                 "zfcBFloat16", static_cast<int>(user->row_type));
  }
  ZFC_RETURN_IF_ERROR(check_index_space(user->index_type, user->vocab_size));
  if (user->algorithm < zfcAlgoDefault || user->algorithm >= zfcNumAlgorithms) {
    return error(zfcInvalidArgument, "plan algorithm %d is not a zfcAlgorithm_t",
                 user->algorithm);
  }
  PlanSpec spec;
  spec.dim = user->dim;
  spec.vocab = user->vocab_size;
  spec.row_type = user->row_type;
  spec.index_type = user->index_type;
  spec.algorithm = user->algorithm == zfcAlgoDefault
                       ? comm_config.algorithm
                       : static_cast<zfcAlgorithm_t>(user->algorithm);
  if (user->compression == -1) {
    spec.compression = comm_config.compression;
  } else {
    ZFC_RETURN_IF_ERROR(
        make_compression(user->compression, user->compress_scale, &spec.compression));
  }
  if (spec.compression.kind == zfcCompressNone) spec.compression.scale = 1.0f;
  if (user->stream_chunk_bytes != 0) spec.stream_chunk_bytes = user->stream_chunk_bytes;
  if (user->overflow_on_device != 0 && user->overflow_on_device != 1) {
    return error(zfcInvalidArgument, "plan overflow_on_device %d must be 0 or 1",
                 user->overflow_on_device);
  }
  spec.overflow_on_device = user->overflow_on_device == 1;
  *out = spec;
  return Status::Ok();
}

Status sparse_reduce(zfcSparsePlan& plan, const void* indices, size_t count, const void* rows,
                     const Status& caller_check, zfcSparseResult_t* out, const void* stream,
                     const CallerOutput* into) {
  return with_key_type(plan.spec.vocab, [&](auto tag) -> Status {
    using K = typename decltype(tag)::type;
    return run_or_record<SparseReduceCall<K>>(*plan.comm, &plan, plan, indices, count, rows,
                                              caller_check, out, stream, nullptr, nullptr,
                                              into);
  });
}

Status sparse_reduce_apply(zfcSparsePlan& plan, const void* indices, size_t count,
                           const void* rows, const StreamApply& apply,
                           const Status& caller_check, int* overflowed, const void* stream) {
  return with_key_type(plan.spec.vocab, [&](auto tag) -> Status {
    using K = typename decltype(tag)::type;
    return run_or_record<SparseReduceCall<K>>(*plan.comm, &plan, plan, indices, count, rows,
                                              caller_check, nullptr, stream, &apply,
                                              overflowed);
  });
}

}  // namespace zfc
