// What the cost model knows of the machine: the alpha-beta parameters of the links inside
// and between nodes, and how fast one rank streams through its own memory. Each figure is
// given (in the config or ZIPFCOLL_MACHINE_MODEL) or measured once when a communicator is
// made; then agreed (given figures must be equal on every rank, measured ones are each
// figure's median over ranks), so that every rank predicts the same times and makes the
// same choices.
#pragma once

#include <string>

#include "host_device/status.hpp"
#include "core/config.hpp"

struct zfcComm;

namespace zfc {

// How the routed exchanges' alltoallvs reach their peers (algo/cost_model.hpp's
// choose_route): as the model predicts faster, or always one way. ZIPFCOLL_ROUTE=auto,
// direct or forwarded sets it; every rank must set the same.
enum class RoutePolicy { kAuto = 0, kDirect = 1, kForwarded = 2 };

struct MachineModel {
  LinkParams intra;               // between ranks of one node
  LinkParams inter;               // between nodes (the same as intra on one node)
  double local_bytes_per_s = 0.0; // bytes read plus written per second by one rank
  // Ranks per core on the most crowded host, at least 1. The figures above are those of a
  // rank with a core to itself; ranks that share cores share their time, so each byte a rank
  // copies (its local passes, and the copies of a transfer, which the CPU makes over shared
  // memory and sockets) costs this many times more. Latencies are waits and do not scale.
  double ranks_per_core = 1.0;
  RoutePolicy route = RoutePolicy::kAuto;
  // Whether gathers of blocks whose sizes only their senders know (Transport::
  // allgather_blocks: the headers' round, key_routed's summed pairs, the streamed rounds)
  // learn each message's length by a probe, as on MPI and UCX (transport/block_gather.hpp:
  // every block straight to each peer up to kDirectBlockGatherRanks ranks, Bruck's
  // ceil(log2 G) steps past it); else (NCCL) the sizes are gathered first, then the blocks in
  // an allgatherv, which steps as log_depth_gather says. zfcPredict* and zfc_model keep the
  // default: they price MPI or UCX, as they do the forwarded route.
  bool probed_block_gathers = true;
};

// Reads ZIPFCOLL_ROUTE (unset or empty: auto). *out is set only on success.
Status read_route_policy(RoutePolicy* out);

// The cost model's parameters from figures in the C API's units. Given and measured figures
// go through this one conversion, so a model printed and given back predicts the same.
MachineModel model_from_figures(const ModelFigures& f);

// "intra=LAT:GBS,inter=LAT:GBS,local=GBS", each number in its shortest form that reads back
// as the same double: the value of ZIPFCOLL_MACHINE_MODEL that gives this model.
std::string format_model(const ModelFigures& f);

// Parses the text of ZIPFCOLL_MACHINE_MODEL: any of intra=, inter= (latency_us:bandwidth_gbs)
// and local= (GB/s), separated by commas, each at most once. *out holds the figures named
// (the others 0) and is set only on success.
Status parse_model_text(const char* text, ModelFigures* out);

// Fills the figures `figures` does not give from ZIPFCOLL_MACHINE_MODEL, when it is set.
Status apply_model_env(ModelFigures* figures);

// Collective over the communicator's transports (the node and cross-node transports too,
// when it has them). Measures what the config does not give, agrees, and fills
// comm->machine and comm->machine_figures.
Status calibrate_machine(zfcComm* comm);

}  // namespace zfc
