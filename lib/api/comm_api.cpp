// Communicator life cycle.
#include "algo/collectives.hpp"
#include "api/api_guard.hpp"
#include "topo/topology.hpp"

using zfc::error;
using zfc::Status;

extern "C" {

zfcResult_t zfcCommInitMpi(zfcComm_t* comm, const void* mpi_comm, const zfcConfig_t* config) {
  return zfc::guarded(nullptr, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (mpi_comm == nullptr) return zfc::null_handle("mpi_comm");
    zfc::Config parsed;
    const Status local = zfc::parse_config(config, &parsed);
    std::unique_ptr<zfcComm> created;
    ZFC_RETURN_IF_ERROR(zfc::comm_create_mpi(mpi_comm, parsed, &created));
    // The duplicate exists on every rank now; agree before handing it out, so a config
    // refused on one rank fails every rank (each then frees its duplicate collectively).
    zfc::NodePlacement placement;
    ZFC_RETURN_IF_ERROR(
        zfc::agree_init(*created->transport, local, zfc::host_id(), &placement));
    zfc::place_comm(created.get(), placement, zfc::bind_requested());
    ZFC_LOG(kInfo, created->rank(), "communicator '%s' of %d ranks over %s; %s",
            created->config.name.c_str(), created->size(), created->transport->name(),
            created->topology.c_str());
    *comm = created.release();
    return Status::Ok();
  });
}

zfcResult_t zfcCommSplit(zfcComm_t comm, int color, int key, zfcComm_t* newcomm) {
  return zfc::guarded(comm, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    std::unique_ptr<zfcComm> child;
    ZFC_RETURN_IF_ERROR(zfc::comm_split(*comm, color, key, newcomm ? &child : nullptr));
    *newcomm = child.release();
    return Status::Ok();
  });
}

zfcResult_t zfcCommDestroy(zfcComm_t comm) {
  if (comm == nullptr) return zfcSuccess;
  if (comm->live_plans > 0) {
    return zfc::finish_call(comm, error(zfcInvalidUsage,
                                        "communicator still has %d sparse plans: destroy them "
                                        "first", comm->live_plans));
  }
  delete comm;
  return zfcSuccess;
}

zfcResult_t zfcCommAbort(zfcComm_t comm) {
  if (comm == nullptr) return zfcSuccess;
  comm->transport->abandon();
  if (comm->live_plans == 0) {
    delete comm;
  } else {
    comm->aborted = true;  // the plans still point here; the last one destroyed frees it
  }
  return zfcSuccess;
}

zfcResult_t zfcCommRank(zfcComm_t comm, int* rank) {
  return zfc::guarded(comm, [&] {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (rank == nullptr) return zfc::null_handle("rank");
    *rank = comm->rank();
    return Status::Ok();
  });
}

zfcResult_t zfcCommCount(zfcComm_t comm, int* count) {
  return zfc::guarded(comm, [&] {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (count == nullptr) return zfc::null_handle("count");
    *count = comm->size();
    return Status::Ok();
  });
}

zfcResult_t zfcCommLocalRank(zfcComm_t comm, int* local_rank, int* local_count) {
  return zfc::guarded(comm, [&] {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (local_rank != nullptr) *local_rank = comm->local_rank;
    if (local_count != nullptr) *local_count = comm->local_size;
    return Status::Ok();
  });
}

const char* zfcCommGetTopology(zfcComm_t comm) {
  return comm == nullptr ? "" : comm->topology.c_str();
}

}  // extern "C"
