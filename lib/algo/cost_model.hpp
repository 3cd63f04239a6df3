// The alpha-beta cost model behind zfcAlgoAuto, and the scale model of zfc_model. From a
// step's sizes it predicts, per algorithm, the bytes a rank sends plus receives (the figure
// zfcCommGetStats reports, averaged over ranks), the bytes that cross between nodes, the
// workspace, and the time: each collective step costs a link's latency and each byte its
// inverse bandwidth; each local pass over memory costs its bytes over the rank's memory
// throughput. Every input is known identically on every rank (the headers, then the index
// exchange; the machine model is agreed when the communicator is made), so every rank makes
// the same choice. docs/algorithms.md gives the formulas.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/machine_model.hpp"
#include "transport/transport.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {

struct CostInputs {
  int ranks = 1;                  // G
  int nodes = 1;                  // N; hierarchical only when N > 1 and G = N * L
  uint64_t tokens = 0;            // sum over ranks of K_i
  uint64_t max_tokens = 0;        // max over ranks of K_i
  uint64_t local_unique = 0;      // sum over ranks of U_i
  uint64_t max_local_unique = 0;  // max over ranks of U_i: a lower bound on U_g
  uint64_t global_unique = 0;     // U_g, once known
  int64_t vocab = 0;              // V
  size_t dim = 0;                 // D
  size_t key_bytes = 4;           // bytes per index on the wire
  double row_bytes = 4;           // bytes per row element on the wire (a per-row part
                                  // spread over the row's values)
  size_t input_bytes = 4;         // bytes per element of the caller's rows
  size_t stream_chunk = 0;        // > 0: fused with the update (zfcSparseReduceApply), whose
                                  // key-routed exchange streams in rounds of this many bytes
};

struct Prediction {
  double seconds = 0.0;          // the step, header and index exchange included
  double bytes = 0.0;            // sent + received per rank, averaged over ranks
  double internode_bytes = 0.0;  // the part of `bytes` between nodes
  double workspace_bytes = 0.0;  // the library's scratch on one rank
};

// Distinct indices on one node of L ranks, interpolated on the Heaps curve through the mean
// U_i (K tokens) and U_g (G K tokens): U_node = mean U_i * L^beta.
double node_unique(const CostInputs& in, int ranks_per_node);

// The prediction for `algorithm` (not auto). zfcAlgoHierarchical needs in.nodes to divide
// in.ranks with several ranks per node; otherwise it is predicted as owner_partitioned.
Prediction predict(zfcAlgorithm_t algorithm, const CostInputs& in, const MachineModel& m);

// How an alltoallv over `ranks` ranks on `nodes` nodes, in which a rank sends at most
// `bytes` bytes, reaches its peers: forwarded when that is predicted faster, its
// ceil(log2 G) latencies and its relays against the direct exchange's G - 1 latencies
// (transport.hpp), unless the model's RoutePolicy (ZIPFCOLL_ROUTE) fixes it. `bytes` must be
// known identically on every rank (the headers give it), so that every rank chooses the same.
Route choose_route(const MachineModel& m, int ranks, int nodes, double bytes);

// One step of a sharded table: zfcShardedGather and zfcShardedReduceApply together.
Prediction predict_sharded(const CostInputs& in, const MachineModel& m);

// Before the index exchange (U_g unknown): an algorithm that needs no index exchange
// (allgather, dense_vocab, key_routed) when it is faster than every other even at the
// smallest possible U_g; else zfcAlgoAuto (decide after the exchange).
zfcAlgorithm_t choose_before_index_exchange(const CostInputs& in, const MachineModel& m);

// After the index exchange: the fastest of unique_allreduce, unique_allgather,
// owner_partitioned and, when `hierarchical`, hierarchical (ties to the earlier one).
zfcAlgorithm_t choose_after_index_exchange(const CostInputs& in, const MachineModel& m,
                                           bool hierarchical);

}  // namespace zfc
