// zfcAllReduce: the deterministic (compressed) allreduce of algo/allreduce.hpp, or its two-level
// form, behind one agreement; alone, or one call of a group. In a group, an allreduce of at
// most kRidingValues values on host buffers rides in the group's first exchange: every rank
// gets every rank's values there and sums them itself, in the library's order of sums and
// with the same wire rounding, so the result has the bits the allreduce would give and costs
// no round of its own (the step's loss and token counts, for example).
#pragma once

#include "core/comm.hpp"

namespace zfc {

constexpr size_t kRidingValues = 64;

// Collective, or recorded when a group is open on comm (it then runs at zfcGroupEnd, and
// recv and *overflowed are written there). With `residual`, error feedback
// (zfcAllReduceWithResidual; algo/error_feedback.hpp).
Status allreduce(zfcComm& comm, const void* send, void* recv, size_t count,
                 zfcDataType_t type, const zfcCompression_t* how, int* overflowed,
                 const void* stream, float* residual = nullptr);

}  // namespace zfc
