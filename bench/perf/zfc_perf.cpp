// zfc_perf: collective benchmarks in the manner of nccl-tests.
//
//   mpirun -np 8 zfc_perf allreduce -b 1K -e 64M -f 2
//   mpirun -np 8 zfc_perf sparse --corpus DIR -K 640 -D 512 --algo all --json out.json
//   mpirun -np 8 zfc_perf sharded --corpus DIR -K 640 -D 512 --json out.json
//
// Times are the slowest rank's, as the median over iterations; #wrong counts elements that
// differ from a reference every rank computes on its own.
#include <cstdio>

#include "launch_check.hpp"
#include "perf_common.hpp"
#include "perf_device.hpp"

namespace {

std::vector<std::string> run_metadata(const PerfContext& ctx) {
  const PerfOptions& o = ctx.options;
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(mpi_version, &len);
  std::string mpi(mpi_version, static_cast<size_t>(len));
  while (!mpi.empty() && (mpi.back() == '\n' || mpi.back() == ' ' || mpi.back() == '\0')) {
    mpi.pop_back();
  }
  std::string opts = "\"options\": {\"mode\": " + json_string(o.mode) +
                     ", \"iters\": " + std::to_string(o.iters) +
                     ", \"warmup\": " + std::to_string(o.warmup) +
                     ", \"check\": " + std::to_string(o.check) +
                     ", \"gpus\": " + std::to_string(o.gpus) +
                     ", \"scale\": " + std::to_string(o.scale);
  if (o.mode == "sparse" || o.mode == "sharded") {
    opts += ", \"tokens_per_rank\": " + std::to_string(o.tokens) +
            ", \"dim\": " + std::to_string(o.dim) + ", \"vocab\": " + std::to_string(o.vocab) +
            ", \"workload\": " + json_string(o.corpus.empty() ? "zipf" : "corpus") +
            ", \"corpus\": " + json_string(o.corpus) +
            ", \"zipf_s\": " + std::to_string(o.zipf_s) +
            ", \"window_len\": " + std::to_string(o.window_len) +
            ", \"seed\": " + std::to_string(o.seed) +
            ", \"ranks_per_node\": " + std::to_string(o.ranks_per_node) +
            ", \"apply\": " + json_string(o.apply) +
            ", \"stream_chunk_bytes\": " + std::to_string(o.stream_chunk);
    std::string transports;
    for (const std::string& t : o.transports) transports += (transports.empty() ? "" : ",") + t;
    opts += ", \"transports\": " + json_string(transports);
  } else {
    opts += ", \"min_bytes\": " + std::to_string(o.min_bytes) +
            ", \"max_bytes\": " + std::to_string(o.max_bytes) +
            ", \"factor\": " + std::to_string(o.factor) +
            ", \"step_bytes\": " + std::to_string(o.step_bytes);
  }
  opts += "}";
  return {"\"tool\": \"zfc_perf\"", "\"version\": " + json_string(ZFC_VERSION_STRING),
          "\"topology\": " + json_string(zfcCommGetTopology(ctx.comm)),
          "\"mpi\": " + json_string(mpi), machine_json(),
          "\"ranks\": " + std::to_string(ctx.ranks),
          "\"command\": " + json_string(o.command_line), opts};
}

// A communicator over MPI_COMM_WORLD's processes: over MPI itself, over NCCL (started on MPI,
// on this rank's current GPU), or over UCX with the meeting point's id made on rank 0 and
// broadcast by MPI.
zfcComm_t open_comm(const std::string& transport, int rank, int ranks_per_node) {
  zfcComm_t comm = nullptr;
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.ranks_per_node = ranks_per_node;
  if (transport == "mpi" || transport == "nccl") {
    if (transport == "nccl") cfg.transport = zfcTransportNccl;
    MPI_Comm world = MPI_COMM_WORLD;
    const zfcResult_t r = zfcCommInitMpi(&comm, &world, &cfg);
    if (r != zfcSuccess) perf_fail("zfcCommInitMpi", r, nullptr);
    return comm;
  }
  zfcUniqueId id{};
  if (rank == 0) {
    const zfcResult_t r = zfcGetUniqueId(&id);
    if (r != zfcSuccess) perf_fail("zfcGetUniqueId", r, nullptr);
  }
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cfg.transport = zfcTransportUcx;
  const zfcResult_t r = zfcCommInitRank(&comm, size, id, rank, &cfg);
  if (r != zfcSuccess) perf_fail("zfcCommInitRank", r, nullptr);
  return comm;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!joined_the_launch("zfc_perf")) {
    MPI_Finalize();
    return 2;
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  PerfOptions o;
  if (!parse_perf_options(argc, argv, rank == 0, &o)) {
    MPI_Finalize();
    return o.help ? 0 : 2;
  }
  if (o.gpus > 0) {
    // Every rank needs its GPU; without one everywhere the run is skipped (77, as ctest's
    // GPU tests are), saying why.
    // This rank's place among the ranks of its host picks its GPU.
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
    int local_rank = 0;
    MPI_Comm_rank(host, &local_rank);
    MPI_Comm_free(&host);
    std::string why;
    int ok = select_rank_device(local_rank, &why) ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
      if (rank == 0) {
        std::printf("# zfc_perf -g 1 skipped: %s\n", why.empty() ? "a rank has no GPU"
                                                                : why.c_str());
      }
      MPI_Finalize();
      return 77;
    }
  }
  std::vector<NamedComm> comms;
  for (const std::string& t : o.transports) comms.push_back({t, open_comm(t, rank, o.ranks_per_node)});
  zfcComm_t comm = comms.front().comm;
  if (rank == 0) {
    std::printf("# zfc_perf %s (zipfcoll %s), %d ranks, %s buffers\n# rank 0: %s\n",
                o.mode.c_str(), ZFC_VERSION_STRING, ranks, o.gpus > 0 ? "device" : "host",
                zfcCommGetTopology(comm));
    zfcMachineModel_t m = ZFC_MACHINE_MODEL_INITIALIZER;
    if (zfcCommGetMachineModel(comm, &m) == zfcSuccess) {
      std::printf("# cost model: intra-node %.2f us + %.2f GB/s, inter-node %.2f us + %.2f GB/s,"
                  " local memory %.2f GB/s, %.3g ranks per core\n", m.intra_node.latency_us,
                  m.intra_node.bandwidth_gbs, m.inter_node.latency_us,
                  m.inter_node.bandwidth_gbs, m.local_gbs, m.ranks_per_core);
    }
  }
  Report report;
  PerfContext ctx{o, comm, comms, rank, ranks, report};
  int status = o.mode == "allreduce" ? run_allreduce(ctx)
               : o.mode == "sharded" || !o.apply.empty() ? run_table_steps(ctx)
                                      : run_sparse(ctx);
  if (rank == 0 && !o.json.empty()) {
    if (!report.write_json(o.json, run_metadata(ctx))) {
      std::fprintf(stderr, "zfc_perf: cannot write %s\n", o.json.c_str());
      status = 1;
    }
  }
  for (NamedComm& c : comms) zfcCommDestroy(c.comm);
  MPI_Finalize();
  return status;
}
