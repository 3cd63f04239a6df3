// zfc_perf: collective benchmarks in the manner of nccl-tests.
//
//   mpirun -np 8 zfc_perf allreduce -b 1K -e 64M -f 2
//   mpirun -np 8 zfc_perf sparse --corpus DIR -K 640 -D 512 --algo all -J out.json
//   mpirun -np 8 zfc_perf sharded --corpus DIR -K 640 -D 512 -J out.json
//
// Times are the slowest rank's, as the median over iterations; #wrong counts elements that
// differ from a reference every rank computes on its own.
#include <cstdio>

#include "launch_check.hpp"
#include "perf_common.hpp"
#include "perf_device.hpp"

namespace {

// The record's members before its rows: the tool, the library, the machine and the options.
zfc::tools::JsonObject run_metadata(const PerfContext& ctx) {
  const PerfOptions& o = ctx.options;
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(mpi_version, &len);
  std::string mpi(mpi_version, static_cast<size_t>(len));
  while (!mpi.empty() && (mpi.back() == '\n' || mpi.back() == ' ' || mpi.back() == '\0')) {
    mpi.pop_back();
  }
  zfc::tools::JsonObject opts;
  opts.text("mode", o.mode)
      .integer("iters", o.iters)
      .integer("warmup", o.warmup)
      .integer("check", o.check)
      .integer("gpus", o.gpus)
      .number("scale", o.scale, "%f");
  if (o.mode == "sparse" || o.mode == "sharded") {
    std::string transports;
    for (const std::string& t : o.transports) transports += (transports.empty() ? "" : ",") + t;
    opts.integer("tokens_per_rank", static_cast<long long>(o.tokens))
        .integer("dim", static_cast<long long>(o.dim))
        .integer("vocab", o.vocab)
        .text("workload", o.corpus.empty() ? "zipf" : "corpus")
        .text("corpus", o.corpus)
        .number("zipf_s", o.zipf_s, "%f")
        .integer("window_len", static_cast<long long>(o.window_len))
        .raw("seed", std::to_string(o.seed))
        .integer("ranks_per_node", o.ranks_per_node)
        .text("apply", o.apply)
        .integer("stream_chunk_bytes", static_cast<long long>(o.stream_chunk))
        .text("transports", transports);
  } else {
    opts.integer("min_bytes", static_cast<long long>(o.min_bytes))
        .integer("max_bytes", static_cast<long long>(o.max_bytes))
        .number("factor", o.factor, "%f")
        .integer("step_bytes", static_cast<long long>(o.step_bytes));
  }
  zfc::tools::JsonObject meta;
  meta.text("tool", "zfc_perf")
      .text("version", ZFC_VERSION_STRING)
      .text("topology", zfcCommGetTopology(ctx.comm))
      .text("mpi", mpi)
      .object("machine", machine_json())
      .integer("ranks", ctx.ranks)
      .text("command", o.command_line)
      .object("options", opts);
  return meta;
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
  // Every rank parses and refuses alike, before any collective; rank 0 says why.
  PerfOptions o;
  const int refused = parse_perf_options(argc, argv, rank == 0, &o);
  if (refused >= 0) {
    MPI_Finalize();
    return refused;
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
