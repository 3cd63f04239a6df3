#include "core/comm.hpp"

#include <algorithm>

#include "bootstrap/rendezvous_transport.hpp"
#include "bootstrap/tcp_rendezvous.hpp"
#include "exec/memory_space.hpp"
#include "transport/mpi/mpi_transport.hpp"
#include "transport/nccl/nccl_transport.hpp"
#include "transport/ucx/ucx_transport.hpp"

#include <unistd.h>

namespace zfc {

Status comm_create_mpi(const void* mpi_comm, const Config& config,
                       std::unique_ptr<zfcComm>* out) {
  if (config.transport == zfcTransportUcx) {
    return error(zfcUnsupported,
                 "config transport zfcTransportUcx cannot be initialised from an MPI "
                 "communicator (use zfcCommInitRank or zfcCommInitFromEnv for UCX)");
  }
  std::unique_ptr<Transport> transport;
  ZFC_RETURN_IF_ERROR(create_mpi_transport(mpi_comm, config.timeout_ms, &transport));
  *out = comm_wrap(std::move(transport), config);
  return Status::Ok();
}

Status comm_create_bootstrap(const MeetingPoint& where, int rank, int size,
                             const Config& config, std::unique_ptr<zfcComm>* out) {
  Status refused = Status::Ok();
  if (config.transport == zfcTransportMpi) {
    refused = error(zfcUnsupported, "config transport zfcTransportMpi cannot start without "
                    "MPI (use zfcCommInitMpi, or zfcTransportUcx, zfcTransportNccl or "
                    "zfcTransportAuto here)");
  } else if (size < 1 || rank < 0 || rank >= size) {
    refused = error(zfcInvalidArgument, "rank %d is not in [0, %d)", rank, size);
  }
  if (!refused.ok()) {
    if (where.listen_fd >= 0) close(where.listen_fd);
    return refused;
  }
  std::unique_ptr<Rendezvous> meeting;
  if (where.listen_fd >= 0) {
    ZFC_RETURN_IF_ERROR(Rendezvous::create_with_listener(where.listen_fd, where.addr,
                                                         where.port, rank, size,
                                                         meeting_ms(config), &meeting));
  } else {
    ZFC_RETURN_IF_ERROR(Rendezvous::create(where.addr, where.port, rank, size,
                                           meeting_ms(config), &meeting));
  }
  *out = comm_wrap(make_rendezvous_transport(std::move(meeting)), config);
  return Status::Ok();
}

Status check_transport_plugin(const Config& config, bool on_bootstrap) {
  if (config.transport == zfcTransportNccl) return nccl_transport_check();
  return on_bootstrap ? ucx_transport_check() : Status::Ok();
}

Status open_transport(zfcComm* comm, bool on_bootstrap) {
  const bool nccl = comm->config.transport == zfcTransportNccl;
  if (!nccl && !on_bootstrap) return Status::Ok();
  Transport& bootstrap = *comm->transport;
  std::unique_ptr<Transport> made;
  if (nccl) {
    ZFC_RETURN_IF_ERROR(create_nccl_transport(bootstrap, comm->config.device,
                                              comm->config.timeout_ms, &made));
  } else {
    ZFC_RETURN_IF_ERROR(create_ucx_transport(bootstrap, comm->config.timeout_ms, &made));
  }
  // The bootstrap's sockets close here.
  comm->transport = std::move(made);
  return Status::Ok();
}

Status query_transport(int transport, int* memory_kinds) {
  // Device buffers reach every transport: NCCL takes them, the others through the host.
  int kinds = zfcMemoryHost | (device_support_built() ? zfcMemoryDevice : 0);
  Status usable;
  switch (transport) {
    case zfcTransportMpi: usable = mpi_transport_check(); break;
    case zfcTransportUcx: usable = ucx_transport_check(); break;
    case zfcTransportNccl:
      usable = nccl_transport_check();
      kinds = zfcMemoryHost | zfcMemoryDevice;
      break;
    default:
      return error(zfcInvalidArgument, "transport %d is not zfcTransportMpi (%d), "
                   "zfcTransportNccl (%d) or zfcTransportUcx (%d)", transport, zfcTransportMpi,
                   zfcTransportNccl, zfcTransportUcx);
  }
  ZFC_RETURN_IF_ERROR(usable);
  *memory_kinds = kinds;
  return Status::Ok();
}

bool transfers_in_flight(const zfcComm& comm) {
  const auto in_flight = [](const std::unique_ptr<Transport>& t) {
    return t && t->has_unfinished_operation();
  };
  return in_flight(comm.transport) || in_flight(comm.node_transport) ||
         in_flight(comm.rail_transport);
}

Status setup_nodes(zfcComm* comm, NodeMap nodes) {
  Transport& t = *comm->transport;
  const int me = t.rank();
  t.set_peer_nodes(nodes.grouped() || nodes.node_count() > 1 ? nodes.node_of_rank()
                                                             : std::vector<int>{});
  std::unique_ptr<Transport> node, rail;
  if (nodes.hierarchical()) {
    ZFC_RETURN_IF_ERROR(t.split(nodes.node_of(me), me, &node));
    ZFC_RETURN_IF_ERROR(t.split(nodes.local_index(me), nodes.node_of(me), &rail));
    node->report_into(t);
    rail->report_into(t);
    node->ledger_rounds_only();
    rail->ledger_rounds_only();
    // Every peer on the rail is on another node, none on the node transport.
    std::vector<int> rail_nodes;
    for (int n = 0; n < nodes.node_count(); ++n) rail_nodes.push_back(n);
    rail->set_peer_nodes(std::move(rail_nodes));
  }
  comm->nodes = std::move(nodes);
  comm->node_transport = std::move(node);
  comm->rail_transport = std::move(rail);
  return Status::Ok();
}

std::unique_ptr<zfcComm> comm_wrap(std::unique_ptr<Transport> transport, const Config& config) {
  auto comm = std::make_unique<zfcComm>();
  comm->config = config;
  comm->transport = std::move(transport);
  return comm;
}

OpRecorder::OpRecorder(zfcComm* comm, Workspace* ws)
    : comm_(comm),
      ws_(ws),
      start_(comm->transport->traffic()),
      op_(empty_op_stats()),
      total_(&op_, zfcPhaseTotal) {
  ws->begin_call();
  comm_->transport->ledger().start(comm_->size());
  op_.calls = 1;
}

void OpRecorder::add_workspace(Workspace* ws) {
  if (ws == ws_ || std::find(more_.begin(), more_.end(), ws) != more_.end()) return;
  ws->begin_call();
  more_.push_back(ws);
}

void OpRecorder::commit() {
  total_.stop();
  const TrafficCounters& now = comm_->transport->traffic();
  op_.bytes_sent = now.bytes_sent - start_.bytes_sent;
  op_.bytes_received = now.bytes_received - start_.bytes_received;
  op_.internode_bytes_sent = now.internode_sent - start_.internode_sent;
  op_.internode_bytes_received = now.internode_received - start_.internode_received;
  op_.peak_workspace_bytes = ws_->call_bytes();
  for (Workspace* w : more_) op_.peak_workspace_bytes += w->call_bytes();
  const ReceiveLedger& ledger = comm_->transport->ledger();
  op_.rounds = static_cast<int32_t>(ledger.rounds);
  for (uint64_t b : ledger.by_rank) {
    op_.bytes_received_max = std::max(op_.bytes_received_max, b);
    op_.bytes_received_sum += b;
  }
  comm_->stats.record(op_);
}

}  // namespace zfc
