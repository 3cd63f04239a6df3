// The row exchanges of the fused sparse reduce. Each takes the agreed headers and this
// rank's index set, and leaves the U_g x dim reduced rows in `out_rows`. All of them form
// every reduced value from the p_r, rank r's rows for that index summed from +0 in token
// order, in the one order of algo/rank_order.hpp (with one node: ((+0 + p_0) + p_1) + ...),
// so in fp32 without compression every exchange gives the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "algo/agreement.hpp"
#include "algo/index_set.hpp"
#include "core/config.hpp"
#include "core/machine_model.hpp"
#include "core/node_map.hpp"
#include "exec/step_kernels.hpp"
#include "exec/table_update.hpp"
#include "exec/workspace.hpp"
#include "kernels/row_update.hpp"
#include "transport/transport.hpp"

namespace zfc {

// Bytes of reduced rows a rank receives per round of a streamed apply, unless the plan says.
constexpr size_t kDefaultStreamChunkBytes = size_t{1} << 20;

struct PlanSpec {
  size_t dim = 0;
  int64_t vocab = 0;
  zfcDataType_t row_type = zfcFloat32;
  zfcDataType_t index_type = zfcInt32;
  zfcAlgorithm_t algorithm = zfcAlgoAuto;
  Compression compression;
  size_t stream_chunk_bytes = kDefaultStreamChunkBytes;
  bool overflow_on_device = false;  // a device-resident result alone leaves its flag there
};

// The target of a fused apply: the fp32 vocab x dim table and, for Adagrad, its state.
struct StreamApply {
  float* table = nullptr;
  float* state = nullptr;
  kernels::RowUpdate update;
};

template <class K>
struct SparseCall {
  Transport& transport;
  const NodeMap& nodes;       // of transport's ranks: the order of sums
  Workspace& ws;
  const PlanSpec& spec;
  zfcOpStats_t* op;
  IndexSet<K>& set;
  const Agreed& agreed;       // the headers, and what rode with them (the distinct keys)
  const void* rows;           // this rank's count x dim rows of spec.row_type
  struct Hierarchy {
    Transport* node = nullptr;  // this rank's node (nodes.hierarchical() only)
    Transport* rail = nullptr;  // the ranks of this local index on every node
  } hierarchy;
  // The plan's compression with this call's rounding seed and step (set by the caller; see
  // Compression).
  Compression compression = spec.compression;
  // zfcSparseReduceApply: the replicated table the exchange applies its rows to (the
  // streamed exchanges do as rows arrive, leaving out_rows NULL; the others leave it to the
  // caller of the exchange).
  const StreamApply* apply = nullptr;
  // Where the streamed exchanges apply their rows (the table's memory space), set by the
  // caller with `apply`.
  TableUpdate* table_update = nullptr;
  float* out_rows = nullptr;  // set by the exchange: U_g x dim
  size_t applied_unique = 0;  // set by a streamed exchange: U_g
  bool finite = true;         // set by the exchange
  // zfcSparseReduceInto: the caller's buffer the exchange writes its result to (result_rows);
  // NULL: the plan's workspace.
  float* caller_rows = nullptr;
  // The communicator's agreed machine model, which routes the alltoallv of the routed
  // exchanges (routed_route); NULL: they run direct.
  const MachineModel* machine = nullptr;
  // The kernels of the local phases of the routed exchanges (algo/routed_pairs.hpp) and of
  // the uniqueness technique: the host's, or the device's for a call whose buffers stay on
  // the device. Set by the caller.
  StepKernels<K>* kernels = nullptr;
  // Set by the caller of a device-resident exchange: the exchange leaves the overflow flag in
  // the kernels' word (kernels->wire().flag_word()) for the caller, without waiting to read
  // it, and `finite` stays true.
  bool leave_flag = false;
  // Set by an exchange that leaves a count its kernels wrote unread (two words in the
  // kernels' memory, the second free; on the host the exchange reads it at once): the caller
  // reads it with the step's last read, the overflow flag's (read_unread), and fails the
  // call, saying `what`, unless it is `expected`. Every rank computes it from the same
  // blocks, so all fail alike.
  struct Unread {
    uint64_t* word = nullptr;
    uint64_t expected = 0;
    const char* what = "";
  };
  Unread unread = {};
};

// The read of a count an exchange left unread (call.unread; cleared once read) and, with
// `flag`, of the overflow flag the device kernels set, in one fetch: on a device, one wait
// for both. With nothing unread it reads the flag alone, or nothing. Fails the call, saying
// call.unread.what, when the count is not the one expected.
template <class K>
Status read_unread(SparseCall<K>& call, bool flag) {
  StepKernels<K>& k = *call.kernels;
  const typename SparseCall<K>::Unread unread = call.unread;
  if (unread.word == nullptr) return flag ? k.wire().all_finite(&call.finite) : Status::Ok();
  call.unread = {};
  int raised = 0;
  if (flag) ZFC_RETURN_IF_ERROR(k.copy(unread.word + 1, k.wire().flag_word(), sizeof raised));
  uint64_t got[2] = {0, 0};
  ZFC_RETURN_IF_ERROR(k.fetch(got, unread.word, (flag ? 2 : 1) * sizeof(uint64_t)));
  if (flag) {
    std::memcpy(&raised, &got[1], sizeof raised);
    call.finite = raised == 0;
  }
  if (got[0] != unread.expected) {
    return error(zfcTransportError, "rank %d: %s (%llu distinct of %llu)",
                 call.transport.rank(), unread.what, static_cast<unsigned long long>(got[0]),
                 static_cast<unsigned long long>(unread.expected));
  }
  return Status::Ok();
}

// The route of an alltoallv in which each rank sends one item of `item_bytes` per distinct
// key: chosen from the most distinct keys any rank has (the headers), so alike on every rank.
Route routed_route(const MachineModel* machine, const Agreed& agreed, int ranks, int nodes,
                   double item_bytes);

// Where an exchange writes its U_g x dim result: the caller's buffer (zfcSparseReduceInto,
// alone) or the plan's workspace (in `slot`), once every rank's room for the result (its
// header's capacity, in a zfcSparseReduceInto) holds ug rows. Every rank asks with the same
// ug and the same headers, so a room too small fails every rank alike, before anything of
// the caller's is written.
Status result_rows(Workspace& ws, const Agreed& agreed, int ranks, float* caller_rows,
                   size_t ug, size_t dim, Slot slot, float** out);
// The room check alone.
Status check_result_room(const Agreed& agreed, int ranks, size_t ug);
// The same for an exchange: a call whose kernels are on the device takes its rows from their
// scratch (the plan's device memory), after the same check of every rank's room.
template <class K>
Status result_rows(SparseCall<K>& call, size_t ug, float** out,
                   Slot slot = Slot::kResultRows) {
  if (call.kernels != nullptr && call.kernels->on_device()) {
    ZFC_RETURN_IF_ERROR(check_result_room(call.agreed, call.transport.size(), ug));
    return scratch_for(*call.kernels, slot, ug * call.spec.dim, out);
  }
  return result_rows(call.ws, call.agreed, call.transport.size(), call.caller_rows, ug,
                     call.spec.dim, slot, out);
}

// Baseline: allgather all K indices and K x dim rows; every rank reduces all of them.
template <class K>
Status exchange_allgather(SparseCall<K>& call);

// Scatter into V x dim plus a presence column and allreduce it, with no index exchange: the
// global set is where the reduced presence is not zero. For vocabularies of a few hundred.
template <class K>
Status exchange_dense_vocab(SparseCall<K>& call);

// No index allgather: each rank sends the (key, row) pairs of its distinct keys to the owner
// a fixed function of the key names; owners sum them and share the sums, which every rank
// puts in key order (algo/key_routed_exchange.cpp). Sets the global set itself.
template <class K>
Status exchange_key_routed(SparseCall<K>& call);

// The last step of a streamed apply: this owner's `u` summed keys and rows (acc, scaled for
// the wire) go to every rank in rounds of at most spec.stream_chunk_bytes per receiver, each
// applied to call.apply's table as it arrives (algo/streamed_apply.cpp). `received_bytes`:
// what this owner received from its peers (for their ledgers).
template <class K>
Status stream_and_apply(SparseCall<K>& call, const K* keys, const float* acc, size_t u,
                        uint64_t received_bytes);

// The exchanges below need set.gather() and set.merge_gathered() first.
// Scatter into U_g x dim and allreduce it (the paper's uniqueness technique), on
// call.kernels; the global set is then in their memory too (IndexSet::place_global).
template <class K>
Status exchange_unique_allreduce(SparseCall<K>& call);
// Allgather each rank's U_i locally summed rows; every rank adds them at their positions.
template <class K>
Status exchange_unique_allgather(SparseCall<K>& call);
// Send each locally summed row to the owner of its range of the global set, which sums
// them; allgather the owners' ranges (algo/owner_exchange.cpp).
template <class K>
Status exchange_owner_partitioned(SparseCall<K>& call);
// The same inside each node, then across nodes between ranks of equal local index, then
// shared inside the node. Needs the node and cross-node transports.
template <class K>
Status exchange_hierarchical(SparseCall<K>& call, Transport& node, Transport& rail);

}  // namespace zfc
