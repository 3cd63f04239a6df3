// Where a sparse reduce's local phases run and its buffers go -- host, staged through host
// memory, or kept on the device -- and how every rank learns it: a device-resident rank says
// so in its header, and zfcAlgoAuto is then the uniqueness technique on every rank (the
// device step that waits once, algo/sparse_exchange.cpp).
#pragma once

#include <cstdint>

#include "algo/agreement.hpp"
#include "algo/sparse_exchange.hpp"
#include "core/comm.hpp"

namespace zfc {

enum class CallPath {
  kHost,      // host buffers, host kernels
  kStaged,    // device buffers copied to the host, host kernels, the result copied back
  kResident,  // device buffers kept there: device kernels, device memory to the transport
};

// The `color` of a sparse reduce's header when the rank is resident (a sparse reduce has
// no other use for it; a sparse apply's carries its update there).
constexpr int32_t kResidentColor = 1;

// Whether some rank's sparse-reduce header says it is resident.
bool some_rank_resident(const Agreed& agreed, int ranks);

// Whether a call on device buffers stays on the device: the transport's block exchanges take
// device memory (NCCL; not yet MPI or UCX, CUDA-aware or not), the device kernels implement
// its exchange (unique_allreduce, which zfcAlgoAuto then is, or key_routed), and its result
// is the plan's (not a caller's host buffers, nor a host table).
bool stays_on_device(const zfcComm& comm, const PlanSpec& spec, bool fused, bool into);

// Whether a device-resident call runs the uniqueness technique (its algorithm, or
// zfcAlgoAuto), whose transfers the transport may queue on the caller's stream.
bool resident_unique_allreduce(const PlanSpec& spec);

// Queues the transport's calls on `stream` for one call's life, whatever leaves it (t NULL:
// nothing).
class QueueOn {
 public:
  QueueOn(Transport* t, const void* stream) : t_(t) {
    if (t_ != nullptr) t_->set_queue_stream(stream);
  }
  ~QueueOn() {
    if (t_ != nullptr) t_->set_queue_stream(nullptr);
  }
  QueueOn(const QueueOn&) = delete;
  QueueOn& operator=(const QueueOn&) = delete;

 private:
  Transport* t_;
};

// zfcOpStats_t's path of every phase of a sparse reduce that took `path` (all of them, the
// ones its algorithm skips too; the headers always travel from host memory), and `waits`
// for the caller's stream.
void note_path(CallPath path, uint32_t waits, zfcOpStats_t* op);

}  // namespace zfc
