#include "algo/bounded_reduce.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>

#include "algo/allreduce.hpp"
#include "algo/call_group.hpp"
#include "algo/call_path.hpp"
#include "algo/index_set.hpp"
#include "algo/sparse_reduce.hpp"
#include "core/memory_space.hpp"
#include "core/stats.hpp"

namespace zfc {

template <class K>
Status bounded_local(StepKernels<K>& k, int64_t vocab, const void* indices,
                     zfcDataType_t index_type, size_t count, bool check, BoundedLocal<K>* out) {
  BoundedLocal<K> l;
  l.count = count;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kStepWords, 3, &l.words));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kKeys, count, &l.keys));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kLocalUnique, count, &l.uniq));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kInverse, count, &l.inverse));
  ZFC_RETURN_IF_ERROR(k.load_keys(indices, index_type, count, vocab, check, l.keys, &l.words[0]));
  // A bad index leaves keys the kernels can still sort; the verdict drops the result.
  ZFC_RETURN_IF_ERROR(k.unique_with_inverse(l.keys, count, static_cast<uint64_t>(vocab), l.uniq,
                                            l.inverse, &l.words[1]));
  *out = l;
  return Status::Ok();
}

namespace {

// Rank r's block in the key allgather: its lead, then `room` keys (its distinct keys, then
// the sentinel), padded to 8 bytes.
struct KeyBlock {
  size_t room, key_bytes;
  size_t bytes() const { return sizeof(BoundedLead) + pad8(room * key_bytes); }
};

// This rank's block into `send`: the lead (its first bad index and count) and its distinct
// keys padded with the sentinel; every byte defined.
template <class K>
Status pack_key_block(StepKernels<K>& k, const BoundedLocal<K>& local, const KeyBlock& b,
                      K sentinel, char* send) {
  ZFC_RETURN_IF_ERROR(k.copy(send, &local.words[0], sizeof(uint64_t)));
  const uint64_t count = local.count;
  ZFC_RETURN_IF_ERROR(k.upload(send + sizeof(uint64_t), &count, sizeof count));
  K* keys = reinterpret_cast<K*>(send + sizeof(BoundedLead));
  ZFC_RETURN_IF_ERROR(k.copy(keys, local.uniq, local.count * sizeof(K)));
  ZFC_RETURN_IF_ERROR(k.fill_keys_after(keys, b.room, &local.words[1], sentinel));
  const size_t used = sizeof(BoundedLead) + b.room * sizeof(K);
  return k.zero(send + used, b.bytes() - used);
}

}  // namespace

namespace {

// What the merge leaves in k's memory: the global set (all_keys sorted keys, the sentinel
// past the set), the verdict, and the global positions of this rank's distinct keys.
template <class K>
struct Merged {
  K* global = nullptr;
  BoundedVerdict* verdict = nullptr;
  int32_t* located = nullptr;
};

// Every rank's block of keys merged into the global set, the verdict, and this rank's keys
// located in the set.
template <class K>
Status merge_blocks(const BoundedStep& s, StepKernels<K>& k, const BoundedLocal<K>& local,
                    const char* gathered, const KeyBlock& block, size_t capacity,
                    Merged<K>* out) {
  Transport& t = s.transport;
  const size_t G = static_cast<size_t>(t.size()), all_keys = G * block.room;
  const K sentinel = bounded_sentinel<K>(s.spec.vocab);
  Merged<K> m;
  K* keys = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGatheredKeys, all_keys, &keys));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGlobalUnique, all_keys, &m.global));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kOwnerReports, 1, &m.verdict));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kLocate, local.count, &m.located));
  for (size_t r = 0; r < G; ++r) {
    ZFC_RETURN_IF_ERROR(k.copy(keys + r * block.room,
                               gathered + r * block.bytes() + sizeof(BoundedLead),
                               block.room * sizeof(K)));
  }
  uint64_t* global_count = &local.words[2];
  ZFC_RETURN_IF_ERROR(k.sorted_unique(keys, all_keys, static_cast<uint64_t>(s.spec.vocab) + 1,
                                      m.global, global_count));
  // Past the set, the sentinel: the lookups below see a sorted array of all_keys keys.
  ZFC_RETURN_IF_ERROR(k.fill_keys_after(m.global, all_keys, global_count, sentinel));
  ZFC_RETURN_IF_ERROR(k.bounded_verdict(gathered, block.bytes(), t.size(), m.global,
                                        global_count, sentinel, capacity, m.verdict));
  // This rank's distinct keys as it sent them (sorted, then the sentinel, which the global
  // array holds whenever this rank padded).
  const K* mine =
      reinterpret_cast<const K*>(gathered + t.rank() * block.bytes() + sizeof(BoundedLead));
  ZFC_RETURN_IF_ERROR(k.locate_sorted(mine, local.count, m.global, all_keys, m.located));
  *out = m;
  return Status::Ok();
}

// This rank's rows summed at their global positions into *dense ((cap + 1) x dim; row cap
// takes what has no row below the capacity, only when U_g exceeds it and the verdict then
// drops the result, so every write stays in the matrix).
template <class K>
Status scatter_rows(const BoundedStep& s, StepKernels<K>& k, const BoundedLocal<K>& local,
                    const int32_t* located, const void* rows, size_t cap, float** dense) {
  const size_t dim = s.spec.dim;
  int32_t* positions = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kPositions, local.count, &positions));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kDense, (cap + 1) * dim, dense));
  ZFC_RETURN_IF_ERROR(k.compose_clamped(local.inverse, local.count, located,
                                        static_cast<int32_t>(cap), positions));
  ZFC_RETURN_IF_ERROR(k.zero(*dense, (cap + 1) * dim * sizeof(float)));
  return k.scatter_add_rows(rows, s.spec.row_type, positions, local.count, dim, *dense,
                            cap + 1);
}

}  // namespace

template <class K>
Status bounded_exchange(const BoundedStep& s, StepKernels<K>& k, const BoundedLocal<K>& local,
                        const OpHeader* headers, const void* rows, const BoundedOutput& out,
                        const BoundedVerdict** verdict) {
  Transport& t = s.transport;
  const size_t G = static_cast<size_t>(t.size()), dim = s.spec.dim, cap = out.capacity;
  size_t room = 0;
  for (size_t r = 0; r < G; ++r) room = std::max(room, static_cast<size_t>(headers[r].count));
  const KeyBlock block{room, sizeof(K)};
  char* gathered = nullptr;
  {
    PhaseTimer timer(s.op, zfcPhaseIndexExchange);
    char* send = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kRoutedPairs, block.bytes(), &send));
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGatheredRows, G * block.bytes(), &gathered));
    ZFC_RETURN_IF_ERROR(
        pack_key_block(k, local, block, bounded_sentinel<K>(s.spec.vocab), send));
    ZFC_RETURN_IF_ERROR(k.wire().settle());  // the transport reads it next
    ZFC_RETURN_IF_ERROR(t.allgather(send, block.bytes(), gathered));
  }
  Merged<K> m;
  {
    PhaseTimer timer(s.op, zfcPhaseMerge);
    ZFC_RETURN_IF_ERROR(merge_blocks(s, k, local, gathered, block, cap, &m));
  }
  float* dense = nullptr;
  {
    PhaseTimer timer(s.op, zfcPhaseScatter);
    ZFC_RETURN_IF_ERROR(scatter_rows(s, k, local, m.located, rows, cap, &dense));
  }
  {
    PhaseTimer timer(s.op, zfcPhaseRowExchange);
    // The overflow flag stays in k's memory for bounded_finish (finite == nullptr).
    ZFC_RETURN_IF_ERROR(allreduce_sum(t, s.ws, k.wire(), dense, dense, cap * dim,
                                      s.spec.compression, nullptr, s.nodes,
                                      RecvWrites::kInPlace));
  }
  ZFC_RETURN_IF_ERROR(k.bounded_finish(m.verdict, m.global, dense, dim, out));
  *verdict = m.verdict;
  return Status::Ok();
}

namespace {

// One zfcSparseReduceBounded, run alone.
template <class K>
class BoundedReduceCall final : public CollectiveCall {
 public:
  BoundedReduceCall(zfcSparsePlan& plan, const void* indices, size_t count, const void* rows,
                    const BoundedOutput& out, const void* stream)
      : plan_(plan), indices_(indices), count_(count), rows_(rows), out_(out),
        stream_(stream), mine_(plan_header(OpKind::kSparseBounded, plan.spec, count)),
        host_kernels_(plan.ws) {
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

 private:
  Status local();
  StepKernels<K>& kernels() {
    return device_ ? *device_kernels_ : static_cast<StepKernels<K>&>(host_kernels_);
  }

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
    // NCCL queues the transfers behind the kernels on the caller's stream, so nothing waits
    // between them (not on the legacy default stream, which NCCL's own stream does not
    // follow: there the kernels' stream is waited for before each transfer).
    queues_ = comm.transport->queues_on_caller_stream() && stream_ != nullptr;
    ZFC_RETURN_IF_ERROR(make_device_step_kernels(plan_.device_scratch, stream_,
                                                 &device_kernels_, queues_));
    device_ = true;
    mine_.color = kResidentColor;
  }
  return bounded_local(kernels(), plan_.spec.vocab, indices_, plan_.spec.index_type, count_,
                       comm.config.bounds_check, &local_);
}

// Checks every rank makes alike: one capacity, and the padded key exchange addressable.
template <class K>
Status BoundedReduceCall<K>::check_agreed(const Agreed& agreed) {
  const int size = plan_.comm->size();
  const OpHeader* h = agreed.headers;
  uint64_t room = 0;
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
    room = std::max(room, static_cast<uint64_t>(h[r].count));
  }
  if (room * static_cast<uint64_t>(size) > static_cast<uint64_t>(INT32_MAX)) {
    return error(zfcInvalidArgument, "zfcSparseReduceBounded pads every rank's indices to the "
                 "largest count (%llu); %d ranks of them exceed %d",
                 static_cast<unsigned long long>(room), size, INT32_MAX);
  }
  return Status::Ok();
}

template <class K>
Status BoundedReduceCall<K>::run(const Agreed& agreed, zfcOpStats_t* op) {
  zfcComm& comm = *plan_.comm;
  StepKernels<K>& k = kernels();
  const BoundedStep step{*comm.transport, &comm.nodes, plan_.ws, plan_.spec, op};
  const BoundedVerdict* verdict = nullptr;
  // Queued on the caller's stream for this call only, whatever leaves it.
  struct Queue {
    Transport* t;
    Queue(Transport* t, const void* stream) : t(t) {
      if (t != nullptr) t->set_queue_stream(stream);
    }
    ~Queue() {
      if (t != nullptr) t->set_queue_stream(nullptr);
    }
  } queue(queues_ ? comm.transport.get() : nullptr, stream_);
  const Status ran = bounded_exchange(step, k, local_, agreed.headers, rows_, out_, &verdict);
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

}  // namespace

Status sparse_reduce_bounded(zfcSparsePlan& plan, const void* indices, size_t count,
                             const void* rows, const BoundedOutput& out, const void* stream) {
  // Keys of a type that holds vocab itself, the sentinel (a vocab that large is 64-bit).
  const int64_t vocab = plan.spec.vocab;
  return with_key_type(vocab < INT64_MAX ? vocab + 1 : vocab, [&](auto tag) -> Status {
    using K = typename decltype(tag)::type;
    BoundedReduceCall<K> call(plan, indices, count, rows, out, stream);
    return run_alone(*plan.comm, call);
  });
}

#define ZFC_INSTANTIATE_BOUNDED(K)                                                           \
  template Status bounded_local<K>(StepKernels<K>&, int64_t, const void*, zfcDataType_t,     \
                                   size_t, bool, BoundedLocal<K>*);                          \
  template Status bounded_exchange<K>(const BoundedStep&, StepKernels<K>&,                   \
                                      const BoundedLocal<K>&, const OpHeader*, const void*,  \
                                      const BoundedOutput&, const BoundedVerdict**);
ZFC_INSTANTIATE_BOUNDED(uint32_t)
ZFC_INSTANTIATE_BOUNDED(uint64_t)
#undef ZFC_INSTANTIATE_BOUNDED

}  // namespace zfc
