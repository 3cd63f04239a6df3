// zipfcoll.Comm: making communicators (from mpi4py, the environment or a unique id),
// splitting and ending them, and what they report (ranks, topology, statistics).
#include <algorithm>
#include <memory>
#include <string>

#include "config.hpp"
#include "errors.hpp"
#include "group_calls.hpp"
#include "handles.hpp"

namespace zfcpy {

Comm::~Comm() {
  if (handle_ != nullptr && owned()) {
    // Aborted first: the library then lets a plan recorded in the group be freed.
    zfcCommAbort(handle_);
    forget_group(handle_, "the communicator was collected before its group ended");
  }
}

zfcComm_t Comm::get() const {
  if (handle_ == nullptr) {
    raise_error(zfcInvalidUsage, "the communicator was destroyed or aborted");
  }
  if (!owned() && !keeper_.cast<const SeedGroup&>().alive()) {
    raise_error(zfcInvalidUsage, "the SeedGroup that owned this communicator was destroyed");
  }
  return handle_;
}

int Comm::rank() const {
  int r = -1;
  zfcCommRank(get(), &r);
  return r;
}

void Comm::drop_plan(SparsePlan* p) {
  plans_.erase(std::remove(plans_.begin(), plans_.end(), p), plans_.end());
}

void Comm::destroy() {
  zfcComm_t h = get();
  if (!owned()) {
    raise_error(zfcInvalidUsage, "this communicator belongs to its SeedGroup; destroy the group");
  }
  // Its plans go first, so that it and they may be destroyed in either order; not while a
  // result of one is still referenced: its views point into the plan's buffers.
  for (SparsePlan* p : plans_) {
    if (p->live_views() > 0) {
      raise_error(zfcInvalidUsage, "a result of one of this communicator's " +
                  std::to_string(plans_.size()) + " plans is still referenced (its arrays "
                  "point into the plan): delete it, or copy what you keep, before destroying "
                  "the communicator");
    }
  }
  while (!plans_.empty()) plans_.back()->free_with_comm();
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcCommDestroy(h);
  }
  check(r, h);
  handle_ = nullptr;
}

void Comm::abort() {
  if (handle_ == nullptr) return;
  if (!owned()) {
    raise_error(zfcInvalidUsage, "this communicator belongs to its SeedGroup; destroy the group");
  }
  zfcCommAbort(handle_);
  forget_group(handle_, "the communicator was aborted before its group ended");
  handle_ = nullptr;
}

py::object result_type(const char* name) {
  return py::module_::import("zipfcoll._results").attr(name);
}

namespace {

std::unique_ptr<Comm> made(zfcResult_t r, zfcComm_t handle) {
  check(r, nullptr);
  return std::make_unique<Comm>(handle, py::none());
}

std::unique_ptr<Comm> from_mpi4py(py::object mpi_comm, py::kwargs kw) {
  py::object mpi = py::module_::import("mpi4py.MPI");
  if (!py::isinstance(mpi_comm, mpi.attr("Comm"))) {
    raise_invalid("comm must be an mpi4py.MPI.Comm");
  }
  // The address of the MPI_Comm handle inside the mpi4py object.
  const auto address = mpi.attr("_addressof")(mpi_comm).cast<uintptr_t>();
  std::string name;
  const zfcConfig_t config = comm_config(kw, &name);
  zfcComm_t handle = nullptr;
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcCommInitMpi(&handle, reinterpret_cast<const void*>(address), &config);
  }
  return made(r, handle);
}

std::unique_ptr<Comm> from_env(py::kwargs kw) {
  std::string name;
  const zfcConfig_t config = comm_config(kw, &name);
  zfcComm_t handle = nullptr;
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcCommInitFromEnv(&handle, &config);
  }
  return made(r, handle);
}

py::bytes get_unique_id() {
  zfcUniqueId id;
  check(zfcGetUniqueId(&id), nullptr);
  return py::bytes(id.internal, sizeof(id.internal));
}

std::unique_ptr<Comm> from_unique_id(int nranks, py::bytes id_bytes, int rank, py::kwargs kw) {
  const std::string raw = id_bytes;
  if (raw.size() != ZFC_UNIQUE_ID_BYTES) {
    raise_invalid("unique_id has %zu bytes; get_unique_id() gives %d", raw.size(),
                  ZFC_UNIQUE_ID_BYTES);
  }
  zfcUniqueId id;
  raw.copy(id.internal, sizeof(id.internal));
  std::string name;
  const zfcConfig_t config = comm_config(kw, &name);
  zfcComm_t handle = nullptr;
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcCommInitRank(&handle, nranks, id, rank, &config);
  }
  return made(r, handle);
}

py::dict op_stats(const zfcOpStats_t& s) {
  py::dict d;
  d["calls"] = s.calls;
  d["tokens"] = s.tokens;
  d["local_unique"] = s.local_unique;
  d["global_unique"] = s.global_unique;
  d["bytes_sent"] = s.bytes_sent;
  d["bytes_received"] = s.bytes_received;
  d["peak_workspace_bytes"] = s.peak_workspace_bytes;
  d["overflows"] = s.overflows;
  d["internode_bytes_sent"] = s.internode_bytes_sent;
  d["internode_bytes_received"] = s.internode_bytes_received;
  d["bytes_received_max"] = s.bytes_received_max;
  d["bytes_received_sum"] = s.bytes_received_sum;
  d["rounds"] = s.rounds;
  d["algorithm"] = s.algorithm < 0 ? py::object(py::none())
                                   : py::object(py::str(zfcGetAlgorithmName(s.algorithm)));
  py::dict seconds;
  for (int p = 0; p < zfcNumPhases; ++p) seconds[zfcGetPhaseName(p)] = s.seconds[p];
  d["seconds"] = seconds;
  // Where each phase ran: "host", "staged", "device", or None for a phase the call lacked.
  static const char* const kPaths[] = {nullptr, "host", "staged", "device"};
  py::dict path;
  for (int p = 0; p < zfcNumPhases; ++p) {
    const int32_t v = s.path[p];
    path[zfcGetPhaseName(p)] = v > 0 && v < 4 ? py::object(py::str(kPaths[v])) : py::none();
  }
  d["path"] = path;
  d["host_syncs"] = s.host_syncs;
  return d;
}

py::dict stats(const Comm& c) {
  zfcStats_t s = ZFC_STATS_INITIALIZER;
  check(zfcCommGetStats(c.get(), &s), c.get());
  py::dict d;
  d["last"] = op_stats(s.last);
  d["total"] = op_stats(s.total);
  return d;
}

py::dict machine_model(const Comm& c) {
  zfcMachineModel_t m = ZFC_MACHINE_MODEL_INITIALIZER;
  check(zfcCommGetMachineModel(c.get(), &m), c.get());
  py::dict d;
  d["intra_node"] = py::make_tuple(m.intra_node.latency_us, m.intra_node.bandwidth_gbs);
  d["inter_node"] = py::make_tuple(m.inter_node.latency_us, m.inter_node.bandwidth_gbs);
  d["local_gbs"] = m.local_gbs;
  d["ranks_per_core"] = m.ranks_per_core;
  return d;
}

py::object split(const Comm& c, int color, int key) {
  zfcComm_t child = nullptr;
  zfcComm_t h = c.get();  // may raise: with the GIL held
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcCommSplit(h, color, key, &child);
  }
  check(r, h);
  if (child == nullptr) return py::none();
  return py::cast(std::make_unique<Comm>(child, py::none()));
}

const char* kConfigDoc =
    "Settings (keyword arguments, all optional): transport ('auto', 'mpi', 'nccl', 'ucx'),\n"
    "device (CUDA device for NCCL, -1: current), timeout_ms (bound on every wait; default\n"
    "600000, 10 minutes; 0: none),\n"
    "algorithm (plans' default: 'auto', 'allgather', 'unique_allreduce', ...), compression\n"
    "('none', 'fp16', 'bf16', 'fp8_e4m3', 'fp8_e5m2', 'int8'; '_sr' after any but 'none':\n"
    "stochastic rounding) and scale, rounding_seed (stochastic rounding's seed, equal on\n"
    "every rank), bounds_check (True), name, ranks_per_node (0: by\n"
    "host), intra_node / inter_node ((latency_us, bandwidth_gbs): the cost model's links)\n"
    "and local_gbs (its local memory throughput): give all three, or set\n"
    "ZIPFCOLL_MACHINE_MODEL, for run-to-run identical choices of algorithm 'auto'.";

py::tuple query_transport(py::handle transport) {
  int kinds = 0;
  check(zfcQueryTransport(transport_of(transport), &kinds), nullptr);
  py::list out;
  if ((kinds & zfcMemoryHost) != 0) out.append("host");
  if ((kinds & zfcMemoryDevice) != 0) out.append("device");
  return py::tuple(out);
}

}  // namespace

void bind_comm(py::module_& m) {
  m.def("query_transport", &query_transport, py::arg("transport"),
        "The memory kinds ('host', 'device') a transport ('mpi', 'nccl', 'ucx') takes in\n"
        "this installation; UnsupportedError, naming what is missing, when it cannot run\n"
        "here (its plugin or the library the plugin needs does not load).");
  m.def("get_unique_id", &get_unique_id,
        "Opens the rendezvous port on the process that will be rank 0 of\n"
        "Comm.from_unique_id and returns the id (bytes) to hand to the other ranks.");
  py::class_<Comm> comm(m, "Comm",
      "A zipfcoll communicator. Collective methods must be called by every rank in the\n"
      "same order; an argument of such a call refused on one rank (a dtype, a shape) raises\n"
      "the same error on every rank, naming that rank. Every wait is bounded by timeout_ms\n"
      "(10 minutes unless given). End it with destroy() (collective), abort() (local, after\n"
      "a failure) or a `with` block; if it is garbage collected first, it is aborted.");
  comm.def_static("from_mpi4py", &from_mpi4py, py::arg("comm"),
                  (std::string("Collective over an mpi4py communicator, which zipfcoll "
                               "duplicates.\n") + kConfigDoc).c_str())
      .def_static("from_env", &from_env,
                  (std::string("Collective. Ranks meet at MASTER_ADDR:MASTER_PORT with RANK "
                               "and WORLD_SIZE as torchrun sets them\n(ZIPFCOLL_-prefixed "
                               "names win; mpirun's rank variables stand in).\n") + kConfigDoc)
                      .c_str())
      .def_static("from_unique_id", &from_unique_id, py::arg("nranks"), py::arg("unique_id"),
                  py::arg("rank"),
                  (std::string("Collective over nranks processes passing the same id from "
                               "get_unique_id().\n") + kConfigDoc).c_str())
      .def_property_readonly("rank", &Comm::rank, "This process's rank.")
      .def_property_readonly("size", [](const Comm& c) {
        int n = 0;
        check(zfcCommCount(c.get(), &n), c.get());
        return n;
      }, "The number of ranks.")
      .def_property_readonly("local_rank", [](const Comm& c) {
        int r = 0, n = 0;
        check(zfcCommLocalRank(c.get(), &r, &n), c.get());
        return py::make_tuple(r, n);
      }, "(local rank, ranks on this host).")
      .def_property_readonly("topology", [](const Comm& c) {
        return std::string(zfcCommGetTopology(c.get()));
      }, "One line on the cores, NUMA nodes and GPU near this rank.")
      .def_property_readonly("alive", &Comm::alive, "False after destroy() or abort().")
      .def("stats", &stats,
           "Local. {'last': {...}, 'total': {...}}: calls, tokens, local_unique,\n"
           "global_unique, bytes_sent, bytes_received, peak_workspace_bytes, overflows,\n"
           "internode bytes, algorithm (of the last sparse reduce) and seconds per phase.")
      .def("check_async_error", [](const Comm& c) {
        zfcResult_t found = zfcSuccess;
        check(zfcCommGetAsyncError(c.get(), &found), c.get());
        if (found == zfcInProgress) return false;
        if (found != zfcSuccess) raise_error(found, zfcGetLastError(c.get()));
        return true;
      }, "Local; does not wait. Raises the first failure of this communicator's\n"
         "reduce_bounded calls not yet reported (once); else True when all of them have\n"
         "finished, False while some have not.")
      .def("reset_stats", [](const Comm& c) { check(zfcCommResetStats(c.get()), c.get()); },
           "Local. Zeroes the statistics.")
      .def("machine_model", &machine_model,
           "Local. The links, memory speed and ranks per core the cost model of algorithm\n"
           "'auto' assumes.")
      .def("split", &split, py::arg("color"), py::arg("key") = 0,
           "Collective. Ranks passing the same color (>= 0) form a new Comm ordered by key;\n"
           "color -1 returns None.")
      .def("destroy", &Comm::destroy,
           "Collective. Frees the communicator and the plans made on it; InvalidUsageError "
           "while a result of one of them is referenced.")
      .def("abort", &Comm::abort, "Local. Frees the communicator without communicating.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Comm& c, py::object type, py::object, py::object) {
        // Leaving on an exception may mean peers are gone: do not communicate then.
        if (!c.alive() || !c.owned()) return;
        if (type.is_none()) c.destroy();
        else c.abort();
      });
  bind_collectives(comm, m);
  bind_groups(comm, m);
}

}  // namespace zfcpy
