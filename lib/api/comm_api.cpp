// Communicator life cycle.
#include "algo/call_group.hpp"
#include "algo/collectives.hpp"
#include "api/api_guard.hpp"
#include "bootstrap/launch_env.hpp"
#include "bootstrap/torch_store.hpp"
#include "bootstrap/unique_id.hpp"
#include "topo/topology.hpp"

using zfc::error;
using zfc::Status;

namespace {

// The caller's config with the machine model's figures it leaves out taken from
// ZIPFCOLL_MACHINE_MODEL. A refusal is this rank's verdict, agreed at init.
Status parse_init_config(const zfcConfig_t* config, zfc::Config* parsed) {
  ZFC_RETURN_IF_ERROR(zfc::parse_config(config, parsed));
  return zfc::apply_model_env(&parsed->model);
}

// Runs a communicator, made from MPI or started on the rendezvous (`on_bootstrap`), through
// the agreement and placement. This rank's verdict is its config's, then whether the plugin
// of the transport it will run on loads here: one agreement for both.
Status finish_init(std::unique_ptr<zfcComm> created, const Status& config_verdict,
                   bool on_bootstrap, zfcComm_t* comm) {
  const Status local = config_verdict.ok()
                           ? zfc::check_transport_plugin(created->config, on_bootstrap)
                           : config_verdict;
  zfc::NodePlacement placement;
  ZFC_RETURN_IF_ERROR(zfc::agree_init(*created->transport, local, created->config,
                                      zfc::host_id(), &placement));
  ZFC_RETURN_IF_ERROR(zfc::open_transport(created.get(), on_bootstrap));
  zfc::place_comm(created.get(), placement, zfc::bind_requested());
  ZFC_RETURN_IF_ERROR(zfc::finish_comm_setup(created.get(), placement));
  ZFC_LOG(kInfo, created->rank(), "communicator '%s' of %d ranks over %s; %s",
          created->config.name.c_str(), created->size(), created->transport->name(),
          created->topology.c_str());
  *comm = created.release();
  return Status::Ok();
}

// `local` is this rank's verdict on its config: a refused config still joins the meeting, so
// that every rank fails alike instead of the others waiting for it.
Status init_bootstrap(zfcComm_t* comm, const zfc::MeetingPoint& where, int rank, int size,
                      const zfc::Config& parsed, const Status& local) {
  std::unique_ptr<zfcComm> created;
  ZFC_RETURN_IF_ERROR(zfc::comm_create_bootstrap(where, rank, size, parsed, &created));
  return finish_init(std::move(created), local, true, comm);
}

}  // namespace

extern "C" {

zfcResult_t zfcCommInitMpi(zfcComm_t* comm, const void* mpi_comm, const zfcConfig_t* config) {
  return zfc::guarded(nullptr, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (mpi_comm == nullptr) return zfc::null_handle("mpi_comm");
    zfc::Config parsed;
    const Status local = parse_init_config(config, &parsed);
    std::unique_ptr<zfcComm> created;
    ZFC_RETURN_IF_ERROR(zfc::comm_create_mpi(mpi_comm, parsed, &created));
    // The duplicate exists on every rank now; agree before handing it out, so a config
    // refused on one rank fails every rank (each then frees its duplicate collectively).
    return finish_init(std::move(created), local, false, comm);
  });
}

zfcResult_t zfcGetUniqueId(zfcUniqueId* id) {
  return zfc::guarded(nullptr, [&]() -> Status {
    if (id == nullptr) return zfc::null_handle("id");
    return zfc::make_unique_id(id->internal);
  });
}

zfcResult_t zfcCommInitRank(zfcComm_t* comm, int nranks, zfcUniqueId id, int rank,
                            const zfcConfig_t* config) {
  return zfc::guarded(nullptr, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (nranks < 1 || rank < 0 || rank >= nranks) {
      return error(zfcInvalidArgument, "rank %d is not in [0, nranks %d)", rank, nranks);
    }
    zfc::MeetingPoint where;
    ZFC_RETURN_IF_ERROR(zfc::parse_unique_id(id.internal, &where.addr, &where.port));
    if (rank == 0) where.listen_fd = zfc::take_listener(where.port);
    zfc::Config parsed;
    const Status local = parse_init_config(config, &parsed);
    return init_bootstrap(comm, where, rank, nranks, parsed, local);
  });
}

zfcResult_t zfcCommInitFromEnv(zfcComm_t* comm, const zfcConfig_t* config) {
  return zfc::guarded(nullptr, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    zfc::LaunchInfo launch;
    ZFC_RETURN_IF_ERROR(zfc::read_launch_env(&launch));
    zfc::Config parsed;
    const Status local = parse_init_config(config, &parsed);
    zfc::MeetingPoint where;
    where.addr = launch.master_addr;
    where.port = launch.master_port;
    if (launch.agent_store && launch.size > 1) {
      // torchrun's agent holds MASTER_PORT with its own store: meet through that store.
      ZFC_RETURN_IF_ERROR(zfc::meet_through_torch_store(launch, zfc::meeting_ms(parsed),
                                                        &where.addr, &where.port,
                                                        &where.listen_fd));
    }
    return init_bootstrap(comm, where, launch.rank, launch.size, parsed, local);
  });
}

zfcResult_t zfcCommSplit(zfcComm_t comm, int color, int key, zfcComm_t* newcomm) {
  return zfc::guarded(comm, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (comm->group_depth > 0) return zfc::refuse_in_group(*comm, "zfcCommSplit");
    std::unique_ptr<zfcComm> child;
    ZFC_RETURN_IF_ERROR(zfc::comm_split(*comm, color, key, newcomm ? &child : nullptr));
    *newcomm = child.release();
    return Status::Ok();
  });
}

zfcResult_t zfcCommDestroy(zfcComm_t comm) {
  if (comm == nullptr) return zfcSuccess;
  if (comm->group_depth > 0) {
    return zfc::finish_call(comm, error(zfcInvalidUsage, "zfcCommDestroy was called between "
                                        "zfcGroupStart and zfcGroupEnd"));
  }
  if (comm->live_plans > 0) {
    return zfc::finish_call(comm, error(zfcInvalidUsage,
                                        "communicator still has %d sparse plans: destroy them "
                                        "first", comm->live_plans));
  }
  // As zfcCommAbort: a timed-out MPI operation may still write into the buffers.
  if (!zfc::transfers_in_flight(*comm)) delete comm;
  return zfcSuccess;
}

zfcResult_t zfcCommAbort(zfcComm_t comm) {
  if (comm == nullptr) return zfcSuccess;
  comm->group_depth = 0;  // what an open group recorded is dropped with the communicator
  comm->pending_error = zfc::Status::Ok();  // a refusal no call will report
  if (comm->node_transport) comm->node_transport->abandon();
  if (comm->rail_transport) comm->rail_transport->abandon();
  comm->transport->abandon();
  if (zfc::transfers_in_flight(*comm)) {
    // A timed-out MPI collective may still write into the communicator's buffers if its
    // peer wakes up, so they are kept until the process ends.
    return zfcSuccess;
  }
  if (comm->live_plans == 0) {
    delete comm;
  } else {
    comm->aborted = true;  // the plans still point here; the last one destroyed frees it
  }
  return zfcSuccess;
}

zfcResult_t zfcCommSetLocalError(zfcComm_t comm, zfcResult_t code, const char* message) {
  return zfc::guarded(comm, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (code <= zfcSuccess || code >= zfcNumResults) {
      return error(zfcInvalidArgument, "zfcCommSetLocalError on rank %d: code %d is not an "
                   "error result (%d to %d)", comm->rank(), static_cast<int>(code),
                   static_cast<int>(zfcInvalidArgument), static_cast<int>(zfcNumResults) - 1);
    }
    // The first refusal is the one every rank reports, as header_fail keeps a call's first.
    if (!comm->pending_error.ok()) return Status::Ok();
    comm->pending_error = Status(code, message != nullptr ? message : zfcGetErrorString(code));
    return Status::Ok();
  });
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
