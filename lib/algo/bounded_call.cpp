// zfcSparseReduceBounded as a call: this rank's checks and local phase, the agreement, the
// exchange (algo/bounded_reduce.cpp) and the verdict's report.
//
// The agreement is made on the host unless the plan's last agreement there had the call's
// capacity and memory space (the operation header and its verdict, as every call makes it;
// a plan's first call also grows its memory, so it is not one to capture in a CUDA graph
// anyway). A call with the remembered pair agrees in its kernels: its header goes out in
// Transport::allgather_fixed_blocks, queued like the rest of the step, and the verdict
// kernel checks the gathered headers with the step's other failures, so the host never
// waits. A rank that agrees on the host -- it changed the capacity or memory space, or its
// own checks failed -- meets such ranks in the headers' round, sees them, and takes part in
// their step's exchanges with nothing of its own, so that none of them waits for ever; its
// call returns the failure, theirs find it in the status.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "algo/bounded_reduce.hpp"
#include "algo/call_group.hpp"
#include "algo/call_path.hpp"
#include "algo/index_set.hpp"
#include "kernels/wire_format.hpp"
#include "algo/sparse_reduce.hpp"
#include "exec/memory_space.hpp"
#include "core/stats.hpp"

namespace zfc {
namespace {

// The header round of a call that agrees in its kernels, in their memory: this rank's size
// word and header, every rank's header and the size it sent.
struct HeaderRound {
  char* send = nullptr;
  OpHeader* headers = nullptr;
  uint64_t* sizes = nullptr;
};

// Reserved by every bounded call on the device (before its agreement), so that the first
// call to agree in its kernels allocates nothing: it may be the one a CUDA graph captures.
// A failure here (the host's workspace throws when memory runs out) is reported in the
// header instead, on the host.
template <class K>
Status header_round_slots(StepKernels<K>& k, int ranks, HeaderRound* out) {
  const size_t G = static_cast<size_t>(ranks);
  try {
    ZFC_RETURN_IF_ERROR(
        scratch_for(k, Slot::kFirstSend, sizeof(uint64_t) + sizeof(OpHeader), &out->send));
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kHeaders, G, &out->headers));
    return scratch_for(k, Slot::kFirstSizes, G, &out->sizes);
  } catch (const std::bad_alloc&) {
    return error(zfcOutOfMemory, "zfcSparseReduceBounded: no memory for the header round");
  }
}

// Whether every rank's header is one of the same call: a header of rank 0's operation and
// sequence number.
bool in_one_call(const OpHeader* h, int ranks) {
  for (int r = 0; r < ranks; ++r) {
    if (h[r].magic != kHeaderMagic || h[r].op != h[0].op || h[r].sequence != h[0].sequence) {
      return false;
    }
  }
  return true;
}

// Whether the ranks of one call that agree in their kernels run one step's transfers: their
// capacity, dim, vocab (the key type) and wire format alike, and every other rank's dim,
// vocab and wire format theirs (it takes part with their capacity). Ranks on host memory
// check it before their exchange, and stop, as the others then do not take part.
bool one_step_size(const OpHeader* h, int ranks) {
  const OpHeader* first = nullptr;
  for (int r = 0; r < ranks && first == nullptr; ++r) {
    if (agrees_in_kernels(h[r])) first = &h[r];
  }
  if (first == nullptr) return true;
  for (int r = 0; r < ranks; ++r) {
    const bool sizes = h[r].dim == first->dim && h[r].vocab == first->vocab &&
                       h[r].compression == first->compression;
    if (!sizes || (agrees_in_kernels(h[r]) && h[r].capacity != first->capacity)) return false;
  }
  return true;
}

// One zfcSparseReduceBounded.
template <class K>
class BoundedReduceCall final : public CollectiveCall {
 public:
  BoundedReduceCall(zfcSparsePlan& plan, const void* indices, size_t count, const void* rows,
                    const BoundedOutput& out, const void* stream)
      : plan_(plan), indices_(indices), count_(count), rows_(rows), out_(out),
        stream_(stream), mine_(plan_header(OpKind::kSparseBounded, plan.spec, count)),
        host_kernels_(plan.ws),
        compression_(take_rounding_step(*plan.comm, plan.spec.compression)) {
    mine_.capacity = static_cast<int64_t>(std::min<size_t>(out.capacity, INT64_MAX));
    mine_.local_unique = 0;  // not known to the host
  }

  void prepare(zfcOpStats_t* op) override {
    op->tokens += count_;
    PhaseTimer timer(op, zfcPhaseLocal);
    header_fail(&mine_, local());
  }
  LocalHeader& header() override { return mine_; }
  Workspace& workspace() override { return plan_.ws; }
  bool reports_async_errors() const override { return false; }
  Status check_agreed(const Agreed& agreed) override;
  Status run(const Agreed& agreed, zfcOpStats_t* op) override;
  void publish() override {}

  // After prepare(): whether the ranks agreed this capacity and memory space before, and
  // this rank's checks passed, so that the call agrees in its kernels. On device buffers the
  // header round must take device memory (NCCL's does; CUDA-aware MPI's block calls pack
  // with the host's memcpy, so there every call agrees on the host).
  bool in_kernels() const {
    return mine_.status == zfcSuccess && plan_.bounded_capacity == mine_.capacity &&
           plan_.bounded_color == mine_.color &&
           (!device_ || plan_.comm->transport->blocks_accept_device_buffers());
  }
  Status run_in_kernels(zfcOpStats_t* op, bool* joined);
  // After the host's agreement failed: when some rank agrees in its kernels, this rank takes
  // part in that step's exchanges with no indices, rows or results of its own.
  Status take_part(const Agreed& agreed, zfcOpStats_t* op);
  // After the host's agreement: what later calls agree in their kernels on.
  void remember_agreement() {
    plan_.bounded_capacity = mine_.capacity;
    plan_.bounded_color = mine_.color;
  }

 private:
  Status local();
  StepKernels<K>& kernels() {
    return device_ ? *device_kernels_ : static_cast<StepKernels<K>&>(host_kernels_);
  }
  BoundedStep step(zfcOpStats_t* op) {
    zfcComm& comm = *plan_.comm;
    return BoundedStep{*comm.transport, &comm.nodes, plan_.ws, plan_.spec, op, compression_};
  }
  Status exchange(zfcOpStats_t* op, const OpHeader* headers, const uint64_t* sizes);

  zfcSparsePlan& plan_;
  const void* indices_;
  size_t count_;
  const void* rows_;
  BoundedOutput out_;
  const void* stream_;
  LocalHeader mine_;
  HostStepKernels<K> host_kernels_;
  std::unique_ptr<StepKernels<K>> device_kernels_;
  bool device_ = false;
  Compression compression_;  // the plan's, with this call's rounding step
  bool queues_ = false;  // the transport queues its calls on the caller's stream
  BoundedLocal<K> local_;
};

// This rank's checks, its memory space, and its local phase.
template <class K>
Status BoundedReduceCall<K>::local() {
  ZFC_RETURN_IF_ERROR(check_plan_call(indices_, count_, rows_, true));
  if (out_.status == nullptr) return error(zfcInvalidArgument, "out_status is NULL");
  if (reinterpret_cast<uintptr_t>(out_.status) % alignof(zfcBoundedStatus_t) != 0) {
    return error(zfcInvalidArgument, "out_status %p is not aligned to %zu bytes",
                 static_cast<void*>(out_.status), alignof(zfcBoundedStatus_t));
  }
  if (out_.capacity > 0 && (out_.indices == nullptr || out_.rows == nullptr)) {
    return error(zfcInvalidArgument, "%s is NULL with capacity %zu",
                 out_.indices == nullptr ? "out_indices" : "out_rows", out_.capacity);
  }
  if (out_.capacity >= static_cast<size_t>(INT32_MAX)) {
    return error(zfcInvalidArgument, "capacity %zu exceeds %d", out_.capacity, INT32_MAX - 1);
  }
  MemorySpace space = MemorySpace::kHost;
  ZFC_RETURN_IF_ERROR(resolve_memory_space({{"indices", indices_},
                                            {"rows", rows_},
                                            {"out_indices", out_.indices},
                                            {"out_rows", out_.rows},
                                            {"out_status", out_.status}},
                                           stream_, &space));
  zfcComm& comm = *plan_.comm;
  if (space == MemorySpace::kDevice) {
    if (!comm.transport->accepts_device_buffers()) {
      return error(zfcUnsupported, "zfcSparseReduceBounded on device buffers needs a "
                   "transport that takes device memory (NCCL, or CUDA-aware MPI); this "
                   "communicator's is %s", comm.transport->name());
    }
    // Refused here, so that every rank agrees before any transfer.
    if (!kernels::wire_format(compression_.kind).element_only() || compression_.stochastic) {
      return error(zfcUnsupported, "zfcSparseReduceBounded on device buffers: compression %s "
                   "has host kernels only in this version", zfcGetCompressionName(
                       compression_.code()));
    }
    // NCCL queues the transfers behind the kernels on the caller's stream, so nothing waits
    // between them (not on the legacy default stream, which NCCL's own stream does not
    // follow: there the kernels' stream is waited for before each transfer).
    queues_ = comm.transport->queues_on_caller_stream() && stream_ != nullptr;
    const QueuedOn queued{queues_ ? comm.transport.get() : nullptr};
    ZFC_RETURN_IF_ERROR(
        make_device_step_kernels(plan_.device_scratch, stream_, &device_kernels_, queued));
    device_ = true;
    mine_.color = kResidentColor;
    HeaderRound slots;
    ZFC_RETURN_IF_ERROR(header_round_slots(*device_kernels_, comm.size(), &slots));
  }
  return bounded_local(kernels(), plan_.spec.vocab, indices_, plan_.spec.index_type, count_,
                       comm.config.bounds_check, &local_);
}

// Checks every rank makes alike: one capacity, one memory space, the padded key exchange
// addressable, and every rank agreeing on the host.
template <class K>
Status BoundedReduceCall<K>::check_agreed(const Agreed& agreed) {
  const int size = plan_.comm->size();
  const OpHeader* h = agreed.headers;
  for (int r = 0; r < size; ++r) {
    // One memory space: a rank's keys are sanitised only as its own kernels read them (a
    // host rank's sort of another rank's out-of-range keys would not be safe).
    if (h[r].color != h[0].color) {
      return error(zfcMismatch, "zfcSparseReduceBounded: rank 0 passes %s buffers, rank %d "
                   "%s buffers; every rank's must be of one kind",
                   h[0].color == kResidentColor ? "device" : "host", r,
                   h[r].color == kResidentColor ? "device" : "host");
    }
    if (h[r].capacity != h[0].capacity) {
      return error(zfcMismatch, "zfcSparseReduceBounded: capacity differs across ranks: rank "
                   "0 has %lld, rank %d has %lld", static_cast<long long>(h[0].capacity), r,
                   static_cast<long long>(h[r].capacity));
    }
  }
  // This rank agrees on the host while a rank in the same capacity and memory space agrees
  // in its kernels: its plan remembers that agreement and this rank's does not (a plan made
  // again on some ranks only). All the same now, so this plan remembers it too, and the
  // next call agrees in the kernels everywhere.
  for (int r = 0; r < size; ++r) {
    if (!agrees_in_kernels(h[r])) continue;
    int host = 0;
    while (agrees_in_kernels(h[host])) ++host;
    remember_agreement();
    return error(zfcMismatch, "zfcSparseReduceBounded: rank %d checks this call's agreement in "
                 "its kernels (its plan agreed capacity %lld before) while rank %d agrees on "
                 "the host (its plan did not: made again on some ranks only?); the next call "
                 "with this capacity agrees in the kernels on every rank", r,
                 static_cast<long long>(h[r].capacity), host);
  }
  const uint64_t room = static_cast<uint64_t>(h[0].capacity);
  if (room * static_cast<uint64_t>(size) > static_cast<uint64_t>(INT32_MAX)) {
    return error(zfcInvalidArgument, "zfcSparseReduceBounded pads every rank's indices to the "
                 "capacity (%llu); %d ranks of them exceed %d",
                 static_cast<unsigned long long>(room), size, INT32_MAX);
  }
  return Status::Ok();
}

// The exchange and the verdict's report, on this call's kernels.
template <class K>
Status BoundedReduceCall<K>::exchange(zfcOpStats_t* op, const OpHeader* headers,
                                      const uint64_t* sizes) {
  zfcComm& comm = *plan_.comm;
  StepKernels<K>& k = kernels();
  const BoundedVerdict* verdict = nullptr;
  const Status ran = bounded_exchange(step(op), k, local_, headers, sizes, rows_, out_, &verdict);
  if (!ran.ok() && device_ &&
      (ran.code() == zfcSystemError || ran.code() == zfcOutOfMemory)) {
    comm.transport->fail(ran);  // as a sparse reduce's device failure between rounds
  }
  ZFC_RETURN_IF_ERROR(ran);
  if (device_) {
    ZFC_RETURN_IF_ERROR(comm.async_errors.note_device(verdict, stream_, plan_.spec.vocab));
  } else {
    comm.async_errors.note(*verdict, plan_.spec.vocab);
  }
  op->algorithm = zfcAlgoUniqueAllReduce;
  note_path(device_ ? CallPath::kResident : CallPath::kHost, k.syncs(), op);
  return Status::Ok();
}

template <class K>
Status BoundedReduceCall<K>::run(const Agreed&, zfcOpStats_t* op) {
  QueueOn queue(queues_ ? plan_.comm->transport.get() : nullptr, stream_);
  return exchange(op, nullptr, nullptr);
}

// The header in the step's own memory space and round (Transport::allgather_fixed_blocks),
// checked by the verdict kernel. A host rank can read the headers at once, and does, to stop
// before exchanging anything when a rank is not in this call at all; a device rank cannot
// without waiting, so it goes on, and the verdict fails the step. *joined: whether the rank
// reached the header round (a failure before it is agreed on the host instead).
template <class K>
Status BoundedReduceCall<K>::run_in_kernels(zfcOpStats_t* op, bool* joined) {
  *joined = false;
  Transport& t = *plan_.comm->transport;
  StepKernels<K>& k = kernels();
  const int G = t.size();
  QueueOn queue(queues_ ? &t : nullptr, stream_);
  HeaderRound round;
  {
    PhaseTimer timer(op, zfcPhaseHeader);
    ZFC_RETURN_IF_ERROR(header_round_slots(k, G, &round));
    *joined = true;
    struct {
      uint64_t bytes;
      OpHeader header;
    } framed;
    static_assert(sizeof framed == sizeof(uint64_t) + sizeof(OpHeader), "no padding");
    framed.bytes = sizeof(OpHeader);
    framed.header = mine_;
    framed.header.key = kAgreedInKernels;
    framed.header.sequence = t.next_sequence();
    Status s = k.upload(round.send, &framed, sizeof framed);
    if (s.ok()) s = k.wire().settle();  // the transport reads it next
    if (!s.ok()) {
      t.fail(s);  // the device failed with the peers in the header round
      return s;
    }
    ZFC_RETURN_IF_ERROR(t.allgather_fixed_blocks(round.send, sizeof(OpHeader), round.sizes,
                                                 round.headers, k.on_device()));
  }
  if (!k.on_device()) {
    if (!in_one_call(round.headers, G)) return agree(round.headers, G);  // fails: out of step
    if (!one_step_size(round.headers, G)) {
      const Status s = agree(round.headers, G);
      return !s.ok() ? s : error(zfcMismatch, "zfcSparseReduceBounded: the ranks that agree "
                                 "in their kernels differ in their capacity");
    }
    for (int r = 0; r < G; ++r) {
      if (round.sizes[r] == sizeof(OpHeader)) continue;
      return error(zfcMismatch, "rank %d sent a block of %llu bytes where an operation header "
                   "has %zu: the ranks are not calling the same zipfcoll operation", r,
                   static_cast<unsigned long long>(round.sizes[r]), sizeof(OpHeader));
    }
  }
  return exchange(op, round.headers, round.sizes);
}

template <class K>
Status BoundedReduceCall<K>::take_part(const Agreed& agreed, zfcOpStats_t* op) {
  const int G = plan_.comm->size();
  const OpHeader& me = agreed.headers[plan_.comm->rank()];
  // Ranks that agree in their kernels on host memory stop, as this one, when some rank is in
  // another call; on device memory they go on, and must be met.
  bool device_peers = false;
  for (int r = 0; r < G; ++r) {
    device_peers |= agrees_in_kernels(agreed.headers[r]) &&
                    agreed.headers[r].color == kResidentColor;
  }
  if (!device_peers &&
      (!in_one_call(agreed.headers, G) || !one_step_size(agreed.headers, G))) {
    return Status::Ok();
  }
  // The capacity of the first rank in this call that agrees in its kernels: every such rank
  // has the one its plan agreed before, and sizes its step by it, the key type (vocab), dim
  // and wire format. A rank on a plan of other sizes (a plan the ranks do not share) cannot
  // be followed; nor can any mismatch a first call would have refused.
  int64_t capacity = -1;
  for (int r = 0; r < G && capacity < 0; ++r) {
    const OpHeader& h = agreed.headers[r];
    const bool same_sizes =
        h.dim == me.dim && h.vocab == me.vocab && h.compression == me.compression;
    if (agrees_in_kernels(h) && h.sequence == me.sequence && same_sizes && h.capacity >= 0 &&
        h.capacity < INT32_MAX) {
      capacity = h.capacity;
    }
  }
  if (capacity < 0) return Status::Ok();
  // The rounds of their step, on the host, with nothing of this rank's: what the other
  // ranks' step exchanges, their verdict failing on this rank's header.
  BoundedLocal<K> none;
  ZFC_RETURN_IF_ERROR(bounded_local<K>(host_kernels_, plan_.spec.vocab, nullptr,
                                       plan_.spec.index_type, 0, false, &none));
  const BoundedOutput nothing{nullptr, plan_.spec.index_type, nullptr,
                              static_cast<size_t>(capacity), nullptr};
  const BoundedVerdict* verdict = nullptr;
  try {
    return bounded_exchange(step(op), static_cast<StepKernels<K>&>(host_kernels_), none,
                            nullptr, nullptr, nullptr, nothing, &verdict);
  } catch (const std::bad_alloc&) {
    // The others' transfers are left unmatched: the transport is of no further use.
    const Status s = error(zfcOutOfMemory, "zfcSparseReduceBounded: no memory to take part in "
                           "the other ranks' step");
    plan_.comm->transport->fail(s);
    return s;
  }
}

// One bounded call: in its kernels when the plan agreed its capacity before, else on the
// host, taking part in the others' step when some agree in their kernels.
template <class K>
Status run_bounded(zfcComm& comm, BoundedReduceCall<K>& call) {
  OpRecorder recorder(&comm, &call.workspace());
  zfcOpStats_t* op = recorder.op();
  call.prepare(op);
  take_pending_error(comm, &call.header());  // a failed header agrees on the host
  if (call.in_kernels()) {
    bool joined = false;
    const Status s = call.run_in_kernels(op, &joined);
    if (joined) {
      ZFC_RETURN_IF_ERROR(s);
      recorder.commit();
      return Status::Ok();
    }
    // Failed before the header round: the others meet this rank's failure there, on the host.
    header_fail(&call.header(), s);
  }
  Agreed agreed;
  Status s = exchange_and_agree(*comm.transport, call.workspace(), call.header(), op, &agreed);
  if (s.ok()) s = call.check_agreed(agreed);
  if (!s.ok()) {
    // Its own failure first: taking part can only add a transport's.
    if (agreed.headers != nullptr) (void)call.take_part(agreed, op);
    return s;
  }
  call.remember_agreement();
  ZFC_RETURN_IF_ERROR(call.run(agreed, op));
  recorder.commit();
  return Status::Ok();
}

}  // namespace

Status sparse_reduce_bounded(zfcSparsePlan& plan, const void* indices, size_t count,
                             const void* rows, const BoundedOutput& out, const void* stream) {
  // Keys of a type that holds vocab itself, the sentinel (a vocab that large is 64-bit).
  const int64_t vocab = plan.spec.vocab;
  return with_key_type(vocab < INT64_MAX ? vocab + 1 : vocab, [&](auto tag) -> Status {
    using K = typename decltype(tag)::type;
    BoundedReduceCall<K> call(plan, indices, count, rows, out, stream);
    return run_bounded(*plan.comm, call);
  });
}

}  // namespace zfc
