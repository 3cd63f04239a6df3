// The bounded sparse reduce (zfcSparseReduceBounded): the uniqueness technique in fixed
// sizes, so that no size has to reach the host. Each rank sends its distinct keys padded to
// the capacity (a plain allgather, each block led by the rank's bad-index word and counts),
// every rank merges them into the global set, scatters its rows into a capacity x dim matrix
// at their global positions and allreduces it. The verdict (a disagreement, a bad index
// somewhere, or U_g above the capacity) is formed from the gathered blocks by a kernel, so
// alike on every rank, and the last kernel writes the caller's buffers only when it is a
// success. Written once against exec/step_kernels.hpp: the host runs it on lib/kernels, a
// device on cuda/, and neither reads a size back (fetch) on the way. The call around it
// (algo/bounded_call.cpp) agrees on the host the first time a plan sees a capacity, and in
// the kernels after that.
#pragma once

#include <cstddef>

#include "algo/agreement.hpp"
#include "algo/sparse_exchange.hpp"
#include "core/node_map.hpp"
#include "exec/step_kernels.hpp"
#include "exec/workspace.hpp"
#include "transport/transport.hpp"

struct zfcSparsePlan;

namespace zfc {

// This rank's keys and distinct keys, in the step kernels' memory space. words[0] is the
// first bad index (count when none), words[1] U_i, words[2] the global set's size.
template <class K>
struct BoundedLocal {
  size_t count = 0;
  K* keys = nullptr;
  K* uniq = nullptr;      // sorted, room for count
  int32_t* inverse = nullptr;
  KeyGrouping grouping;  // the unique's, for the scatter (StepKernels::scatter_to_dense)
  uint64_t* words = nullptr;
};

// The keys' sentinel: above every index of the plan (keys are of a type that holds vocab).
template <class K>
K bounded_sentinel(int64_t vocab) {
  return static_cast<K>(vocab);
}

// The local phase, with no read back: the keys (range-checked when `check`) and their
// distinct set.
template <class K>
Status bounded_local(StepKernels<K>& k, int64_t vocab, const void* indices,
                     zfcDataType_t index_type, size_t count, bool check, BoundedLocal<K>* out);

struct BoundedStep {
  Transport& transport;
  const NodeMap* nodes;  // the order of sums
  Workspace& ws;         // the host-side size lists
  const PlanSpec& spec;
  zfcOpStats_t* op;
  Compression compression;  // spec's, with the call's rounding step
};

// The exchanges and the result, every rank's block holding out.capacity keys. `headers`
// and `sizes` (t.size() of each, in k's memory space), when the step agrees in its kernels,
// are checked by the verdict; nullptr when the host agreed. Without out.status (a rank that
// only takes part, its call having failed), nothing is written but k's scratch. *verdict
// points at the verdict in k's memory space.
template <class K>
Status bounded_exchange(const BoundedStep& s, StepKernels<K>& k, const BoundedLocal<K>& local,
                        const OpHeader* headers, const uint64_t* sizes, const void* rows,
                        const BoundedOutput& out, const BoundedVerdict** verdict);

// zfcSparseReduceBounded on a plan (run alone; the caller refuses it in a group).
Status sparse_reduce_bounded(zfcSparsePlan& plan, const void* indices, size_t count,
                             const void* rows, const BoundedOutput& out, const void* stream);

}  // namespace zfc
