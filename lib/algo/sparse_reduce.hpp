// The fused embedding-gradient exchange behind zfcSparsePlan_t.
#pragma once

#include <cstddef>

#include "algo/sparse_exchange.hpp"
#include "core/comm.hpp"

struct zfcSparsePlan {
  zfcComm* comm = nullptr;
  zfc::PlanSpec spec;
  zfc::Workspace ws;
  zfc::StagingBuffers staging;  // inputs of calls on device buffers, through the host
  zfc::DeviceResult device_result;  // results of staged calls on device buffers
  // Scratch of the calls whose buffers stay on the device, their results among it (valid
  // until the plan's next call, like the host result).
  zfc::DeviceScratch device_scratch;
  // zfcAlgoAuto: whether the distinct keys ride with the next call's headers, which pays when
  // the algorithm chosen needs them (as the last call's did; the first call assumes so).
  bool auto_keys_ride = true;
  // zfcSparseReduceBounded: the capacity and memory space (the header's color) every rank
  // last agreed on the host; a call with both checks its agreement in its kernels
  // (algo/bounded_call.cpp). -1: none yet.
  int64_t bounded_capacity = -1;
  int32_t bounded_color = -1;
  // How many times the last sparse reduce read something back from its kernels' memory
  // (StepKernels::fetch; on a device each read, and each other wait for the stream, counts):
  // what the suite's host runs check of the step a device runs.
  uint32_t last_reads = 0;
};

namespace zfc {

// Validates a plan config (NULL is refused) against the communicator's defaults.
Status parse_plan_config(const zfcSparsePlanConfig_t* user, const Config& comm_config,
                         PlanSpec* out);

// This rank's view of everything the ranks must agree on, for a call of `op` on a plan of
// `spec` with `count` indices.
OpHeader plan_header(OpKind op, const PlanSpec& spec, size_t count);

// This rank's own checks of a plan call's buffers, before anything is exchanged (the
// memory space is checked apart): NULL indices (and, `with_rows`, rows) with count > 0, and
// a count int32 positions cannot address.
Status check_plan_call(const void* indices, size_t count, const void* rows, bool with_rows);

// sizeof(zfcSparseResult_t) of 0.11, before overflow_flag: still accepted.
constexpr size_t kSparseResultSize011 = offsetof(zfcSparseResult_t, overflow_flag);

struct SparseOutput {
  const void* indices = nullptr;
  const float* rows = nullptr;
  size_t num_unique = 0;
  bool overflowed = false;
  // A device-resident result whose overflow flag stayed on the device (overflowed unknown).
  const int* overflow_flag = nullptr;
  zfcAlgorithm_t algorithm = zfcAlgoAuto;
};

// zfcSparseReduceInto: the caller's buffers for the result, room for `capacity` indices (of
// the plan's index type) and capacity x dim rows.
struct CallerOutput {
  void* indices = nullptr;
  float* rows = nullptr;
  size_t capacity = 0;
};

// Collective, or recorded when a group is open on the plan's communicator (it then runs at
// zfcGroupEnd, and *out is set there). On success *out points into the plan's workspace,
// or, with `into`, at the caller's buffers (which the exchange writes directly when the call
// runs alone and they do not overlap its input rows, else they are copied from the plan).
// `caller_check` is what the entry point found wrong with its own arguments (agreed with the
// other ranks like the checks made here); out must be valid when it is ok.
Status sparse_reduce(zfcSparsePlan& plan, const void* indices, size_t count, const void* rows,
                     const Status& caller_check, zfcSparseResult_t* out, const void* stream,
                     const CallerOutput* into = nullptr);

// zfcSparseReduceApply: the same exchange, its rows applied to apply's table (streamed by
// the key-routed exchange, which zfcAlgoAuto then is) instead of returned; *overflowed (may
// be NULL) is set on success. Not for a group: the caller refuses it there.
Status sparse_reduce_apply(zfcSparsePlan& plan, const void* indices, size_t count,
                           const void* rows, const StreamApply& apply,
                           const Status& caller_check, int* overflowed, const void* stream);

}  // namespace zfc
