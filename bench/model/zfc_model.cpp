// zfc_model: the library's cost model projected to thousands of ranks. For each rank count
// G, each algorithm and wire, it prints what one training step's embedding exchange moves
// per rank (in total and between nodes), its workspace, its predicted time, and the weak-
// scaling parallel efficiency of the whole step against the smallest G (fused_key_routed: the
// key-routed exchange fused with the table's update, zfcSparseReduceApply, streamed; sharded:
// the tables sharded by rows, a gather and an update per step):
//
//   step(G) = compute + tables * exchange(G) + dense allreduce(G),   efficiency = step(G0) /
//   step(G)
//
// Distinct words U(N) are measured on a corpus (random windows, as a step draws them) or
// follow a given Heaps' law k N^beta: a rank's K tokens hold U(K), the step's G K tokens
// U(G K) (at most V). Link defaults: NVLink 4 inside
// 8-GPU nodes and one 400 Gb/s NIC per GPU between nodes (docs/benchmarks/scale_model.md
// cites them).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "transport/transport.hpp"  // the gathers' step rule, header-only
#include "workload/corpus.hpp"
#include "workload/heaps.hpp"
#include "zipfcoll/zipfcoll.h"

namespace {

struct Options {
  std::string corpus;
  std::string json;  // --json FILE: one object per (algorithm, wire, G) line
  double heaps_k = 0, heaps_beta = 0;
  double tokens = 640, dim = 512, vocab = 100000;
  std::vector<int> ranks{8, 16, 24, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  int per_node = 8;
  zfcMachineModel_t machine{sizeof(zfcMachineModel_t), {2.0, 450.0}, {5.0, 50.0}, 3000.0, 1.0};
  double compute_ms = 55.7;  // the paper's word LM: 136 GFLOP per step at 2.44 TFLOP/s
  double dense_mb = 37.8;    // its LSTM (2048 cells, projection 512): 9.4 M fp32 weights
  int tables = 2;            // input and output embeddings
  size_t stream_chunk = 1 << 20;  // --stream-chunk: the fused rows' stream_chunk_bytes
  std::vector<zfc::workload::HeapsPoint> measured;  // U(N) on the corpus, when given
};

// U(N): the corpus's measured counts, interpolated in log-log space, within their range;
// the power law beyond it (or everywhere, with --heaps).
double distinct(const Options& o, double n) {
  const auto& m = o.measured;
  if (m.size() >= 2 && n >= static_cast<double>(m.front().tokens) &&
      n <= static_cast<double>(m.back().tokens)) {
    size_t i = 1;
    while (i + 1 < m.size() && static_cast<double>(m[i].tokens) < n) ++i;
    const double x0 = std::log(static_cast<double>(m[i - 1].tokens));
    const double x1 = std::log(static_cast<double>(m[i].tokens));
    const double y0 = std::log(m[i - 1].mean_unique), y1 = std::log(m[i].mean_unique);
    const double t = x1 > x0 ? (std::log(n) - x0) / (x1 - x0) : 0.0;
    return std::exp(y0 + t * (y1 - y0));
  }
  return std::min(o.heaps_k * std::pow(n, o.heaps_beta), n);
}

void usage() {
  std::printf(
      "usage: zfc_model [--corpus DIR | --heaps K,BETA] [options]\n"
      "  -K TOKENS            tokens per rank and step (640)\n"
      "  -D DIM               embedding width (512)\n"
      "  --vocab V            vocabulary (100000)\n"
      "  --ranks L            comma list of rank counts (8,16,24,32,64,...,4096)\n"
      "  --per-node L         ranks per node (8)\n"
      "  --intra US,GBS       latency and bandwidth inside a node (2,450: NVLink 4)\n"
      "  --inter US,GBS       between nodes, per rank (5,50: one 400 Gb/s NIC per GPU)\n"
      "  --local-gbs X        a rank's local memory passes, GB/s (3000: HBM3)\n"
      "  --compute-ms T       forward and backward per step (55.7)\n"
      "  --dense-mb M         dense gradients allreduced per step, MB (37.8)\n"
      "  --tables N           embedding tables exchanged per step (2)\n"
      "  --stream-chunk B     stream_chunk_bytes of the fused_key_routed rows (1048576)\n"
      "  --json FILE          also write one JSON object per row to FILE (G, algo, wire, U_g,\n"
      "                       MB, xnode_MB, peak_ws_MB, exchange_ms, step_ms, efficiency)\n");
}

bool pair(const char* v, double* a, double* b) {
  return std::sscanf(v, "%lf,%lf", a, b) == 2 && *a >= 0 && *b > 0;
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help" || i + 1 >= argc) return false;
    const char* v = argv[++i];
    bool ok = true;
    if (a == "--corpus") o->corpus = v;
    else if (a == "--json") o->json = v;
    else if (a == "--heaps") ok = pair(v, &o->heaps_k, &o->heaps_beta);
    else if (a == "-K") ok = (o->tokens = std::atof(v)) > 0;
    else if (a == "-D") ok = (o->dim = std::atof(v)) > 0;
    else if (a == "--vocab") ok = (o->vocab = std::atof(v)) > 1;
    else if (a == "--per-node") ok = (o->per_node = std::atoi(v)) > 0;
    else if (a == "--intra") ok = pair(v, &o->machine.intra_node.latency_us,
                                       &o->machine.intra_node.bandwidth_gbs);
    else if (a == "--inter") ok = pair(v, &o->machine.inter_node.latency_us,
                                       &o->machine.inter_node.bandwidth_gbs);
    else if (a == "--local-gbs") ok = (o->machine.local_gbs = std::atof(v)) > 0;
    else if (a == "--compute-ms") ok = (o->compute_ms = std::atof(v)) >= 0;
    else if (a == "--dense-mb") ok = (o->dense_mb = std::atof(v)) >= 0;
    else if (a == "--tables") ok = (o->tables = std::atoi(v)) >= 0;
    else if (a == "--stream-chunk") ok = (o->stream_chunk = std::strtoull(v, nullptr, 10)) > 0;
    else if (a == "--ranks") {
      o->ranks.clear();
      for (char* p = argv[i]; *p != '\0';) {
        o->ranks.push_back(std::atoi(p));
        p = std::strchr(p, ',') ? std::strchr(p, ',') + 1 : p + std::strlen(p);
      }
      ok = !o->ranks.empty() && *std::min_element(o->ranks.begin(), o->ranks.end()) > 0;
    } else ok = false;
    if (!ok) return false;
  }
  return !o->corpus.empty() || o->heaps_k > 0;
}

// Heaps' law fitted on the corpus over N >= 1e4 (the range a step covers).
void fit_corpus(Options* o) {
  const zfc::workload::Corpus c = zfc::workload::Corpus::load(o->corpus, o->vocab);
  const std::vector<int32_t>& ids = c.tokens();
  const auto sizes = zfc::workload::heaps_sizes(100, ids.size(), 8);
  o->measured = zfc::workload::measure_heaps(ids, c.vocab_size(), sizes, 20, 3, 1);
  // Beyond the corpus: the power law of its last decade.
  const zfc::workload::PowerFit fit =
      zfc::workload::fit_power_law(o->measured, ids.size() / 10, ids.size());
  o->heaps_k = fit.k;
  o->heaps_beta = fit.beta;
  std::printf("# U(N) measured on %s (%zu words) from N = 100, and beyond it U = %.3f "
              "N^%.3f\n", o->corpus.c_str(), ids.size(), fit.k, fit.beta);
}

// The dense gradients' allreduce as zfcAllReduce runs it: a reduce-scatter (an alltoallv,
// one latency per peer) and a gather in the steps the transports take (gather_steps). On
// whole nodes it runs in two levels: inside each node over the whole buffer, then on each
// rail over a 1/L share.
double dense_seconds(const Options& o, int g) {
  const auto level = [&](const zfcLinkModel_t& l, int ranks, double mb) {
    if (ranks <= 1) return 0.0;
    const double bytes = mb * 1e6, alpha = l.latency_us * 1e-6;
    return (ranks - 1 + zfc::gather_steps(ranks, bytes)) * alpha +
           2.0 * (ranks - 1) / ranks * bytes / (l.bandwidth_gbs * 1e9);
  };
  if (g <= o.per_node) return level(o.machine.intra_node, g, o.dense_mb);
  if (o.per_node <= 1 || g % o.per_node != 0) return level(o.machine.inter_node, g, o.dense_mb);
  return level(o.machine.intra_node, o.per_node, o.dense_mb) +
         level(o.machine.inter_node, g / o.per_node, o.dense_mb / o.per_node);
}

zfcStepShape_t shape_at(const Options& o, int g, zfcCompressionKind_t wire) {
  const double ui = std::min(distinct(o, o.tokens), o.tokens);
  const double ug = std::min({distinct(o, o.tokens * g), o.vocab, ui * g});
  zfcStepShape_t s = ZFC_STEP_SHAPE_INITIALIZER;
  s.ranks = g;
  s.nodes = g > o.per_node && g % o.per_node == 0 ? g / o.per_node : 1;
  s.tokens = o.tokens * g;
  s.max_tokens = o.tokens;
  s.local_unique = ui * g;
  s.max_local_unique = ui;
  s.global_unique = std::max(ug, ui);
  s.vocab_size = static_cast<int64_t>(o.vocab);
  s.dim = static_cast<size_t>(o.dim);
  s.row_type = zfcFloat32;
  s.compression = wire;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      usage();
      return 0;
    }
  }
  if (!parse(argc, argv, &o)) {
    usage();
    return 2;
  }
  if (!o.corpus.empty()) fit_corpus(&o);
  std::printf("# K=%.0f D=%.0f V=%.0f, %d ranks per node; intra %.1f us + %.0f GB/s, inter "
              "%.1f us + %.0f GB/s, local %.0f GB/s; compute %.1f ms, dense %.1f MB, %d tables\n",
              o.tokens, o.dim, o.vocab, o.per_node, o.machine.intra_node.latency_us,
              o.machine.intra_node.bandwidth_gbs, o.machine.inter_node.latency_us,
              o.machine.inter_node.bandwidth_gbs, o.machine.local_gbs, o.compute_ms,
              o.dense_mb, o.tables);
  std::printf("%18s %4s %5s %9s %9s %10s %10s %11s %9s %6s\n", "algo", "wire", "G", "U_g",
              "MB", "xnode_MB", "peak_ws_MB", "exchange_ms", "step_ms", "eff");
  const int algos[] = {zfcAlgoAllGather,        zfcAlgoUniqueAllReduce, zfcAlgoUniqueAllGather,
                       zfcAlgoOwnerPartitioned, zfcAlgoHierarchical,    zfcAlgoKeyRouted};
  FILE* json = nullptr;
  if (!o.json.empty() && (json = std::fopen(o.json.c_str(), "w")) == nullptr) {
    std::fprintf(stderr, "zfc_model: cannot write %s\n", o.json.c_str());
    return 1;
  }
  // Each algorithm, then key_routed fused with the update (zfcSparseReduceApply), streamed.
  // And the tables sharded by rows (zfcShardedGather and zfcShardedReduceApply per step).
  struct Priced {
    int algorithm;
    size_t stream_chunk;
    bool sharded;
  };
  std::vector<Priced> priced;
  for (int a : algos) priced.push_back({a, 0, false});
  priced.push_back({zfcAlgoKeyRouted, o.stream_chunk, false});
  priced.push_back({zfcAlgoKeyRouted, 0, true});
  for (const Priced& pr : priced) {
    const int a = pr.algorithm;
    const std::string name =
        pr.sharded ? "sharded"
                   : (pr.stream_chunk > 0 ? "fused_" : "") + std::string(zfcGetAlgorithmName(a));
    for (zfcCompressionKind_t w : {zfcCompressNone, zfcCompressFp16}) {
      double first_step = 0;
      for (int g : o.ranks) {
        zfcStepShape_t s = shape_at(o, g, w);
        s.stream_chunk_bytes = pr.stream_chunk;
        zfcPrediction_t p = ZFC_PREDICTION_INITIALIZER;
        const zfcResult_t r = pr.sharded ? zfcPredictShardedStep(&o.machine, &s, &p)
                                         : zfcPredictSparseReduce(&o.machine, &s, a, &p);
        if (r != zfcSuccess) {
          std::fprintf(stderr, "zfc_model: %s\n", zfcGetLastError(nullptr));
          return 1;
        }
        const double step = o.compute_ms * 1e-3 + o.tables * p.seconds + dense_seconds(o, g);
        if (first_step == 0) first_step = step;
        std::printf("%18s %4s %5d %9.0f %9.3f %10.3f %10.3f %11.3f %9.3f %6.3f\n",
                    name.c_str(), w == zfcCompressNone ? "none" : "fp16", g,
                    s.global_unique, p.bytes / 1e6, p.internode_bytes / 1e6,
                    p.workspace_bytes / 1e6, p.seconds * 1e3, step * 1e3, first_step / step);
        if (json != nullptr) {
          std::fprintf(json,
                       "{\"G\": %d, \"algo\": \"%s\", \"wire\": \"%s\", \"U_g\": %.0f, "
                       "\"MB\": %.6f, \"xnode_MB\": %.6f, \"peak_ws_MB\": %.6f, "
                       "\"exchange_ms\": %.6f, \"step_ms\": %.6f, \"efficiency\": %.6f}\n",
                       g, name.c_str(), w == zfcCompressNone ? "none" : "fp16",
                       s.global_unique, p.bytes / 1e6, p.internode_bytes / 1e6,
                       p.workspace_bytes / 1e6, p.seconds * 1e3, step * 1e3,
                       first_step / step);
        }
      }
    }
  }
  if (json != nullptr && std::fclose(json) != 0) {
    std::fprintf(stderr, "zfc_model: cannot write %s\n", o.json.c_str());
    return 1;
  }
  return 0;
}
