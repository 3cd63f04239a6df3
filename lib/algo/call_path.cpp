#include "algo/call_path.hpp"

#include "kernels/wire_format.hpp"

namespace zfc {

bool some_rank_resident(const Agreed& agreed, int ranks) {
  for (int r = 0; r < ranks; ++r) {
    const OpHeader& h = agreed.headers[r];
    if (h.op == static_cast<uint32_t>(OpKind::kSparseReduce) && h.color == kResidentColor) {
      return true;
    }
  }
  return false;
}

bool stays_on_device(const zfcComm& comm, const PlanSpec& spec, bool fused, bool into) {
  // The eight-bit formats and stochastic rounding have host kernels only: their device
  // buffers go through host memory (the staged path), where every algorithm runs them.
  const bool device_wire =
      kernels::wire_format(spec.compression.kind).element_only() && !spec.compression.stochastic;
  return comm.transport->blocks_accept_device_buffers() && !fused && !into && device_wire &&
         (resident_unique_allreduce(spec) || spec.algorithm == zfcAlgoKeyRouted);
}

bool resident_unique_allreduce(const PlanSpec& spec) {
  return spec.algorithm == zfcAlgoAuto || spec.algorithm == zfcAlgoUniqueAllReduce;
}

void note_path(CallPath path, uint32_t waits, zfcOpStats_t* op) {
  const int32_t where = path == CallPath::kResident ? zfcPathDevice
                        : path == CallPath::kStaged ? zfcPathStaged
                                                    : zfcPathHost;
  for (int p = 0; p < zfcNumPhases; ++p) op->path[p] = where;
  op->path[zfcPhaseHeader] = zfcPathHost;
  op->host_syncs += waits;
}

}  // namespace zfc
