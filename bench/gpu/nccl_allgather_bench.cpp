// zfc_nccl_allgather: the plain baseline of the fused step on GPUs -- every rank's K indices
// and K x D rows gathered to every rank with ncclAllGather on device buffers, as a data-
// parallel trainer without zipfcoll exchanges a sparse gradient -- timed as zfc_perf times a
// step (MPI barrier, the call, the stream's end; the median over steps of the slowest rank).
// One rank per GPU (NCCL refuses two on one device); exits with 77, saying why, without.
//
// usage: mpirun -np G zfc_nccl_allgather [-K tokens] [-D dim] [-n iters] [-w warmup]
//                                         [-d float|half] [-J FILE]
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/json_writer.hpp"
#include "tools/tool_options.hpp"

namespace {

struct Options {
  size_t tokens = 640, dim = 512;
  int iters = 20, warmup = 5;
  std::string datatype = "float";  // -d, --datatype: float or half
  std::string json;                // -J, --output_file
};

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "zfc_nccl_allgather: %s\n", why.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void cuda_must(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(e));
}

void nccl_must(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) die(std::string(what) + ": " + ncclGetErrorString(r));
}

// Parses argv into *o (on every rank, before any collective). Returns -1 to go on, else the
// status to exit with (0: --help); only rank 0 prints.
int parse(int argc, char** argv, bool print, Options* o) {
  CLI::App app("the plain ncclAllGather baseline of the fused step on GPUs\n"
               "run as: mpirun -np G zfc_nccl_allgather [options]",
               "zfc_nccl_allgather");
  app.footer("exit status: 0 done (and after --help), 1 a failed call, 2 a bad option "
             "(refused on every rank before any collective), 77 fewer GPUs than ranks");
  zfc::tools::add_int<size_t>(app, "-K,--tokens", &o->tokens, "tokens per rank", 1);
  zfc::tools::add_int<size_t>(app, "-D,--dim", &o->dim, "row width", 1);
  zfc::tools::add_int(app, "-n,--iters", &o->iters, "timed steps", 1, 1000000);
  zfc::tools::add_int(app, "-w,--warmup_iters", &o->warmup, "untimed steps first", 0, 1000000);
  // nccl-tests' type names; the record keeps calling them fp32 and fp16.
  zfc::tools::add_choice(app, "-d,--datatype", &o->datatype, "the rows' element type",
                         {"float", "half"});
  zfc::tools::add_output_file(app, &o->json, "also write the result as JSON");
  return zfc::tools::parse_command_line(app, argc, argv, print);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options o;
  const int refused = parse(argc, argv, rank == 0, &o);
  if (refused >= 0) {
    MPI_Finalize();
    return refused;
  }
  const bool half = o.datatype == "half";
  // A GPU for every rank: its place among its host's ranks.
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
  int local = 0, local_ranks = 1, devices = 0;
  MPI_Comm_rank(host, &local);
  MPI_Comm_size(host, &local_ranks);
  MPI_Comm_free(&host);
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  int enough = devices >= local_ranks ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!enough) {
    if (rank == 0) {
      std::printf("zfc_nccl_allgather: needs a GPU per rank (%d here for %d ranks): skipped\n",
                  devices, local_ranks);
    }
    MPI_Finalize();
    return 77;
  }
  cuda_must(cudaSetDevice(local), "cudaSetDevice");
  ncclUniqueId id;
  if (rank == 0) nccl_must(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  nccl_must(ncclCommInitRank(&comm, ranks, id, rank), "ncclCommInitRank");
  cudaStream_t stream;
  cuda_must(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  const size_t K = o.tokens, D = o.dim, G = static_cast<size_t>(ranks);
  const size_t row_bytes = D * (half ? 2 : 4);
  void *idx = nullptr, *rows = nullptr, *all_idx = nullptr, *all_rows = nullptr;
  cuda_must(cudaMalloc(&idx, K * 4), "cudaMalloc");
  cuda_must(cudaMalloc(&rows, K * row_bytes), "cudaMalloc");
  cuda_must(cudaMalloc(&all_idx, G * K * 4), "cudaMalloc");
  cuda_must(cudaMalloc(&all_rows, G * K * row_bytes), "cudaMalloc");
  cuda_must(cudaMemset(idx, 0, K * 4), "cudaMemset");
  cuda_must(cudaMemset(rows, 0, K * row_bytes), "cudaMemset");

  std::vector<double> seconds;
  for (int step = -o.warmup; step < o.iters; ++step) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    nccl_must(ncclGroupStart(), "ncclGroupStart");
    nccl_must(ncclAllGather(idx, all_idx, K, ncclInt32, comm, stream), "ncclAllGather");
    nccl_must(ncclAllGather(rows, all_rows, K * D, half ? ncclFloat16 : ncclFloat32, comm,
                            stream),
              "ncclAllGather");
    nccl_must(ncclGroupEnd(), "ncclGroupEnd");
    cuda_must(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    double sec = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &sec, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (step >= 0) seconds.push_back(sec);
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  // Sent and received per rank and step: its block to G - 1 peers, and theirs.
  const double mb = 2.0 * static_cast<double>((G - 1) * K * (4 + row_bytes)) / 1e6;
  char gpu[256] = "unknown";
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, local) == cudaSuccess) {
    std::snprintf(gpu, sizeof gpu, "%s", prop.name);
  }
  if (rank == 0) {
    std::printf("# ncclAllGather of every rank's K indices and K x D %s rows (device buffers)\n",
                half ? "fp16" : "fp32");
    std::printf("%-14s %4s %6s %5s %10s %9s\n", "baseline", "G", "K", "D", "time_us", "MB");
    std::printf("%-14s %4zu %6zu %5zu %10.1f %9.3f\n", "nccl_allgather", G, K, D, median * 1e6,
                mb);
    if (!o.json.empty()) {
      zfc::tools::JsonObject record;
      record.text("gpu", gpu)
          .integer("ranks", static_cast<long long>(G))
          .integer("K", static_cast<long long>(K))
          .integer("D", static_cast<long long>(D))
          .text("wire", half ? "fp16" : "fp32")
          .number("time_us", median * 1e6, "%.3f")
          .number("MB", mb, "%.6f");
      if (!zfc::tools::write_json_file(o.json, record.str() + "\n")) {
        die("cannot write " + o.json);
      }
    }
  }
  cudaFree(idx);
  cudaFree(rows);
  cudaFree(all_idx);
  cudaFree(all_rows);
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  MPI_Finalize();
  return 0;
}
