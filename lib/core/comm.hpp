// The communicator behind a zfcComm_t: a validated config, a transport, statistics, the
// scratch (and pinned staging memory) used by standalone collectives, and the text of the
// last error.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/async_errors.hpp"
#include "core/config.hpp"
#include "exec/host_staging.hpp"
#include "core/machine_model.hpp"
#include "core/node_map.hpp"
#include "core/stats.hpp"
#include "exec/wire_kernels.hpp"
#include "exec/workspace.hpp"
#include "transport/transport.hpp"

namespace zfc {
// The calls recorded between zfcGroupStart and zfcGroupEnd. They are defined by the layer
// above (algo/call_group.hpp), so the communicator holds them through this base.
class GroupRecord {
 public:
  virtual ~GroupRecord() = default;
};
}  // namespace zfc

struct zfcComm {
  zfc::Config config;
  std::unique_ptr<zfc::Transport> transport;
  zfc::StatsBook stats;
  zfc::Workspace workspace;
  zfc::StagingBuffers staging;  // device buffers of standalone collectives, through the host
  zfc::DeviceScratch device_scratch;  // or on the device, when the transport takes them
  std::string last_error;
  zfc::AsyncErrors async_errors;  // of the bounded calls, reported after they return
  int local_rank = 0;     // among this communicator's ranks on the same machine
  int local_size = 1;
  std::string topology;   // one line: the machine and this rank's share of it
  int live_plans = 0;     // plans created on this comm and not yet destroyed
  // The collective calls begun that round values on the wire: the step of stochastic
  // rounding's random bits. Every rank begins the same calls in the same order, so it agrees.
  uint64_t rounding_calls = 0;
  bool aborted = false;   // aborted while plans were alive: the last plan frees it
  zfc::NodeMap nodes;     // the nodes of the order of sums and of the hierarchical exchange
  // Only when nodes.hierarchical(): the ranks of this rank's node, and the ranks of the
  // same local index on every node (ordered by node). Both count into `transport`'s bytes.
  std::unique_ptr<zfc::Transport> node_transport;
  std::unique_ptr<zfc::Transport> rail_transport;
  zfc::MachineModel machine;  // the cost model's view of the links and memory
  zfc::ModelFigures machine_figures;  // the same in the C API's units, as agreed
  int group_depth = 0;    // zfcGroupStart calls not yet ended
  std::unique_ptr<zfc::GroupRecord> group;  // what the open group recorded (kept between
                                            // groups for its buffers)
  // zfcCommSetLocalError's error, not yet taken: the next collective call (or group) on
  // this rank enters its agreement with it as this rank's verdict.
  zfc::Status pending_error;

  int rank() const { return transport->rank(); }
  int size() const { return transport->size(); }
};

namespace zfc {

// c with the communicator's rounding seed and the next rounding step (Compression), taken by
// every call that rounds values on the wire as it is made, on every rank alike.
inline Compression take_rounding_step(zfcComm& comm, Compression c) {
  c.seed = comm.config.rounding_seed;
  c.step = comm.rounding_calls++;
  return c;
}

// Creates a communicator over an MPI communicator (collective). Config already parsed. For
// zfcTransportNccl the MPI transport is the bootstrap of open_transport.
Status comm_create_mpi(const void* mpi_comm, const Config& config,
                       std::unique_ptr<zfcComm>* out);

// How long ranks started without MPI wait for each other: the config's timeout, or 60 s when
// it sets none.
inline int meeting_ms(const Config& config) {
  return config.timeout_ms > 0 ? config.timeout_ms : 60000;
}

// Where ranks launched without MPI meet: rank 0's address and port, and (on rank 0, when
// zfcGetUniqueId or the torchrun store meeting opened it) the socket already listening there,
// else -1. comm_create_bootstrap takes that socket over, and closes it on any failure.
struct MeetingPoint {
  std::string addr;
  int port = 0;
  int listen_fd = -1;
};

// Creates a communicator for `size` processes that meet at `where` (collective; every wait
// bounded by config.timeout_ms, or 60 s when it is 0). Config already parsed. It runs over
// the rendezvous until open_transport starts UCX or NCCL, so the ranks agree on the config
// before either is loaded.
Status comm_create_bootstrap(const MeetingPoint& where, int rank, int size,
                             const Config& config, std::unique_ptr<zfcComm>* out);

// Local: Ok when the plugin of the transport open_transport will start loads here (NCCL for
// zfcTransportNccl; UCX for a communicator started on the rendezvous; nothing else), else
// zfcUnsupported naming what is missing. It is part of this rank's verdict at agree_init, so
// a rank without the plugin fails every rank alike, before any of them loads it.
Status check_transport_plugin(const Config& config, bool on_bootstrap);

// Collective, after the ranks agreed on the config and on check_transport_plugin: replaces
// the transport the communicator was started on by the one it runs on, started over it: NCCL
// (zfcTransportNccl) over MPI or the rendezvous, else UCX over the rendezvous.
Status open_transport(zfcComm* comm, bool on_bootstrap);

// Local (zfcQueryTransport): Ok with the zfcMemoryKind_t flags of `transport`'s buffers when
// this installation can run it, else why not.
Status query_transport(int transport, int* memory_kinds);

// Collective. Records the node map in the communicator, marks which peers are on other
// nodes, and, when the map is hierarchical, splits off the node and cross-node transports.
Status setup_nodes(zfcComm* comm, NodeMap nodes);

// Whether an operation of the communicator's transports that timed out is still in flight
// (MPI cannot withdraw one): it may still write into the communicator's buffers and its
// plans' workspaces when its peer wakes up, so they must be kept until the process ends.
bool transfers_in_flight(const zfcComm& comm);

// Wraps an existing transport (used by split) with a copy of `config`.
std::unique_ptr<zfcComm> comm_wrap(std::unique_ptr<Transport> transport, const Config& config);

// Accounting for one collective call: snapshots the transport's counters and resets the
// workspace accounting at construction; commit() folds the call into the comm's stats.
class OpRecorder {
 public:
  OpRecorder(zfcComm* comm, Workspace* ws);
  zfcOpStats_t* op() { return &op_; }
  // Counts another workspace's scratch in the call's peak (a group's calls each have one).
  void add_workspace(Workspace* ws);
  void commit();

 private:
  zfcComm* comm_;
  Workspace* ws_;
  std::vector<Workspace*> more_;  // a group's calls' (empty, unallocated, for one call)
  TrafficCounters start_;
  zfcOpStats_t op_;
  PhaseTimer total_;
};

}  // namespace zfc
