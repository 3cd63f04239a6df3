#include "core/comm.hpp"

#include "transport/mpi/mpi_transport.hpp"

namespace zfc {

Status comm_create_mpi(const void* mpi_comm, const Config& config,
                       std::unique_ptr<zfcComm>* out) {
  if (config.transport != zfcTransportAuto && config.transport != zfcTransportMpi) {
    return error(zfcUnsupported,
                 "config transport %d cannot be initialised from an MPI communicator in "
                 "this build (use zfcTransportMpi or zfcTransportAuto)",
                 static_cast<int>(config.transport));
  }
  std::unique_ptr<Transport> transport;
  ZFC_RETURN_IF_ERROR(create_mpi_transport(mpi_comm, &transport));
  *out = comm_wrap(std::move(transport), config);
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
  ws_->begin_call();
  op_.calls = 1;
}

void OpRecorder::commit() {
  total_.stop();
  const TrafficCounters& now = comm_->transport->traffic();
  op_.bytes_sent = now.bytes_sent - start_.bytes_sent;
  op_.bytes_received = now.bytes_received - start_.bytes_received;
  op_.peak_workspace_bytes = ws_->call_bytes();
  comm_->stats.record(op_);
}

}  // namespace zfc
