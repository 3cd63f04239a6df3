// zfc_demo: the embedding-gradient exchange of a data-parallel language model, step by step,
// with the frameworks' allgather baseline against the paper's unique + allreduce exchange
// (in fp32 and fp16), on real text windows or a seeded Zipf stream. It prints, per variant,
// the bytes each rank moved, the peak workspace and the median step time, and checks that
// every fp32 variant returns the same bits.
//
//   mpirun -np 4 zfc_demo --corpus DIR
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "demo_options.hpp"
#include "launch_check.hpp"
#include "sparse_result_hash.hpp"
#include "workload/step_source.hpp"
#include "zipfcoll/zipfcoll.h"

namespace {

struct Variant {
  const char* label;
  zfcAlgorithm_t algorithm;
  zfcCompressionKind_t compression;
};

const Variant kVariants[] = {
    {"allgather        fp32", zfcAlgoAllGather, zfcCompressNone},
    {"unique_allreduce fp32", zfcAlgoUniqueAllReduce, zfcCompressNone},
    {"unique_allreduce fp16", zfcAlgoUniqueAllReduce, zfcCompressFp16},
    {"auto             fp32", zfcAlgoAuto, zfcCompressNone},
};
constexpr int kNumVariants = sizeof(kVariants) / sizeof(kVariants[0]);

struct Totals {
  double bytes = 0;          // this rank's sent + received, summed over measured steps
  uint64_t peak = 0;         // this rank's largest workspace
  std::vector<double> step_seconds;  // max over ranks, per measured step
  uint64_t global_unique = 0;        // summed over measured steps
  uint64_t local_unique = 0;
  int last_algorithm = -1;
};

[[noreturn]] void fail(const char* what, zfcResult_t r, zfcComm_t comm) {
  std::fprintf(stderr, "zfc_demo: %s: %s: %s\n", what, zfcGetErrorString(r),
               zfcGetLastError(comm));
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

zfc::workload::StepSpec step_spec(const DemoOptions& o) {
  zfc::workload::StepSpec spec;
  spec.corpus = o.corpus;
  spec.vocab = o.vocab;
  spec.zipf_s = o.zipf_s;
  spec.tokens = static_cast<size_t>(o.windows) * static_cast<size_t>(o.window_len);
  spec.window_len = static_cast<size_t>(o.window_len);
  spec.seed = o.seed;
  return spec;
}

Totals run_variant(zfcComm_t comm, const Variant& v, const DemoOptions& o,
                   const zfc::workload::StepSource& source, int rank,
                   std::vector<uint64_t>* hashes) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = o.dim;
  cfg.vocab_size = o.vocab;
  cfg.row_type = zfcFloat32;
  cfg.index_type = zfcInt32;
  cfg.algorithm = v.algorithm;
  cfg.compression = v.compression;
  cfg.compress_scale = o.fp16_scale;
  zfcSparsePlan_t plan = nullptr;
  zfcResult_t r = zfcSparsePlanCreate(comm, &cfg, &plan);
  if (r != zfcSuccess) fail("zfcSparsePlanCreate", r, comm);
  Totals t;
  for (int step = -o.warmup; step < o.steps; ++step) {
    const std::vector<int32_t> idx = source.indices(step, rank);
    const std::vector<float> rows = source.rows(step, rank, idx.size(), o.dim);
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    r = zfcSparseReduce(plan, idx.data(), idx.size(), rows.data(), &out, nullptr);
    double seconds = MPI_Wtime() - t0;
    if (r != zfcSuccess) fail("zfcSparseReduce", r, comm);
    if (step < 0) continue;
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    zfcStats_t stats = ZFC_STATS_INITIALIZER;
    zfcCommGetStats(comm, &stats);
    t.step_seconds.push_back(seconds);
    t.bytes += static_cast<double>(stats.last.bytes_sent + stats.last.bytes_received);
    t.peak = std::max(t.peak, stats.last.peak_workspace_bytes);
    t.global_unique += stats.last.global_unique;
    t.local_unique += stats.last.local_unique;
    t.last_algorithm = out.algorithm;
    if (hashes != nullptr) hashes->push_back(hash_sparse_result(out));
  }
  zfcSparsePlanDestroy(plan);
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (!joined_the_launch("zfc_demo")) {
    MPI_Finalize();
    return 2;
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // Every rank parses and refuses alike, before any collective; rank 0 says why.
  DemoOptions o;
  const int refused = parse_demo_options(argc, argv, rank == 0, &o);
  if (refused >= 0) {
    MPI_Finalize();
    return refused;
  }
  std::unique_ptr<zfc::workload::StepSource> source;
  try {
    source = std::make_unique<zfc::workload::StepSource>(step_spec(o));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zfc_demo: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm world = MPI_COMM_WORLD;
  zfcComm_t comm = nullptr;
  zfcResult_t r = zfcCommInitMpi(&comm, &world, nullptr);
  if (r != zfcSuccess) fail("zfcCommInitMpi", r, nullptr);

  Totals totals[kNumVariants];
  std::vector<uint64_t> hashes[kNumVariants];
  for (int v = 0; v < kNumVariants; ++v) {
    const bool exact = kVariants[v].compression == zfcCompressNone;
    totals[v] = run_variant(comm, kVariants[v], o, *source, rank,
                            exact ? &hashes[v] : nullptr);
  }
  // Every fp32 variant must agree with the baseline bit for bit, on every rank.
  int identical = 1;
  for (int v = 1; v < kNumVariants; ++v) {
    if (!hashes[v].empty() && hashes[v] != hashes[0]) identical = 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &identical, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

  double bytes[kNumVariants];
  unsigned long long peaks[kNumVariants], local_unique = 0;
  for (int v = 0; v < kNumVariants; ++v) {
    bytes[v] = totals[v].bytes / o.steps;
    peaks[v] = totals[v].peak;
  }
  local_unique = totals[1].local_unique;
  MPI_Allreduce(MPI_IN_PLACE, bytes, kNumVariants, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, peaks, kNumVariants, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &local_unique, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("zipfcoll %s demo: sparse embedding-gradient exchange\n", ZFC_VERSION_STRING);
    if (o.corpus.empty()) {
      std::printf("workload: seeded %s stream\n", source->describe().c_str());
    } else {
      std::printf("workload: %s, %d windows x %d words per rank\n", source->describe().c_str(),
                  o.windows, o.window_len);
    }
    const size_t k = static_cast<size_t>(o.windows) * static_cast<size_t>(o.window_len);
    std::printf("G=%d ranks, K=%zu tokens per rank (G*K=%zu), D=%zu, %d steps after %d "
                "warm-up\n",
                ranks, k, k * static_cast<size_t>(ranks), o.dim, o.steps, o.warmup);
    const double gk = static_cast<double>(o.windows) * o.window_len * ranks;
    const double ug = static_cast<double>(totals[1].global_unique) / o.steps;
    const double ui = static_cast<double>(local_unique) / o.steps / ranks;
    std::printf("per step: G*K=%.0f  U_i(mean)=%.1f  U_g=%.1f  U_g/(G*K)=%.3f\n", gk, ui, ug,
                ug / gk);
    std::printf("ideal byte ratio G*K/(2*U_g): %.2fx in fp32, %.2fx with fp16\n\n",
                gk / (2 * ug), gk / ug);
    std::printf("%-22s %14s %10s %16s %14s %9s\n", "variant", "bytes/rank", "vs base",
                "peak workspace", "median step", "speedup");
    const double base_bytes = bytes[0] / ranks;
    const double base_time = median(totals[0].step_seconds);
    for (int v = 0; v < kNumVariants; ++v) {
      const double b = bytes[v] / ranks;
      const double t = median(totals[v].step_seconds);
      std::printf("%-22s %11.3f MB %9.2fx %13.3f MB %11.3f ms %8.2fx", kVariants[v].label,
                  b / 1e6, base_bytes / b, static_cast<double>(peaks[v]) / 1e6, t * 1e3,
                  base_time / t);
      if (kVariants[v].algorithm == zfcAlgoAuto) {
        std::printf("  (ran %s)", zfcGetAlgorithmName(totals[v].last_algorithm));
      }
      std::printf("\n");
    }
    std::printf("\nbytes/rank: sent + received per step, averaged over ranks; peak workspace: "
                "largest on any rank;\nmedian step: the slowest rank's time per step\n");
    std::printf("results identical across algorithms: %s\n", identical ? "yes" : "NO");
  }
  zfcCommDestroy(comm);
  MPI_Finalize();
  return identical ? 0 : 1;
}
