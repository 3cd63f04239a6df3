// Where a sparse reduce's local phases run and its buffers go -- host, staged through host
// memory, or kept on the device -- and how every rank learns it: a device-resident rank says
// so in its header, and zfcAlgoAuto is then the key-routed exchange on every rank (the one
// the device backend implements, algo/routed_pairs.hpp).
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
// its exchange (key-routed, which zfcAlgoAuto then is), and its result is the plan's (not a
// caller's host buffers, nor a host table).
bool stays_on_device(const zfcComm& comm, const PlanSpec& spec, bool fused, bool into);

// zfcOpStats_t's path of every phase of a sparse reduce that took `path` (all of them, the
// ones its algorithm skips too; the headers always travel from host memory), and `waits`
// for the caller's stream.
void note_path(CallPath path, uint32_t waits, zfcOpStats_t* op);

}  // namespace zfc
