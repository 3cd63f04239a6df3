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

#include "tools/json_writer.hpp"
#include "tools/tool_options.hpp"
#include "transport/transport.hpp"  // the gathers' step rule, header-only
#include "workload/corpus.hpp"
#include "workload/heaps.hpp"
#include "zipfcoll/zipfcoll.h"

namespace {

struct Options {
  std::string corpus;
  std::string json;  // -J, --output_file FILE: one object per (algorithm, wire, G) line
  double heaps_k = 0, heaps_beta = 0;
  double tokens = 640, dim = 512, vocab = 100000;
  std::vector<int> ranks{8, 16, 24, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  int per_node = 8;  // --ranks-per-node
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

// "A,B" with A >= 0 and B > 0 into *a, *b: a link's latency and bandwidth, or Heaps' k, beta.
CLI::Option* add_pair(CLI::App& app, const std::string& name, const std::string& type_name,
                      double* a, double* b, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [name, a, b](const std::string& v) {
            const std::vector<std::string> parts = zfc::tools::split_list(v);
            double x = 0, y = 0;
            if (parts.size() != 2 || !zfc::tools::parse_real(parts[0], &x) ||
                !zfc::tools::parse_real(parts[1], &y) || x < 0 || !(y > 0)) {
              throw zfc::tools::bad_option(name, v, "two numbers A,B with A >= 0 and B > 0");
            }
            *a = x;
            *b = y;
          },
          help)
      ->type_name(type_name);
}

// Parses argv into *o. Returns -1 to go on, else the status to exit with (0: --help).
int parse(int argc, char** argv, Options* o) {
  using zfc::tools::add_int;
  using zfc::tools::add_real;
  CLI::App app("the cost model projected to thousands of ranks\n"
               "run as: zfc_model (--corpus DIR | --heaps K,BETA) [options]",
               "zfc_model");
  app.footer("exit status: 0 done (and after --help), 1 a prediction or the JSON failed, 2 a "
             "bad option");
  app.add_option("--corpus", o->corpus, "measure U(N) on every .txt file in DIR")
      ->type_name("DIR");
  add_pair(app, "--heaps", "K,BETA", &o->heaps_k, &o->heaps_beta,
           "U(N) = K N^BETA instead of a corpus");
  add_real(app, "-K,--tokens", &o->tokens, "tokens per rank and step", 1.0);
  add_real(app, "-D,--dim", &o->dim, "embedding width", 1.0);
  add_real(app, "--vocab", &o->vocab, "vocabulary", 2.0);
  zfc::tools::add_int_list(app, "--ranks", &o->ranks, "comma list of rank counts", 1);
  add_int(app, "--ranks-per-node", &o->per_node, "ranks per node", 1, 1 << 20);
  add_pair(app, "--intra", "US,GBS", &o->machine.intra_node.latency_us,
           &o->machine.intra_node.bandwidth_gbs,
           "latency (us) and bandwidth (GB/s) inside a node (2,450: NVLink 4)");
  add_pair(app, "--inter", "US,GBS", &o->machine.inter_node.latency_us,
           &o->machine.inter_node.bandwidth_gbs,
           "between nodes, per rank (5,50: one 400 Gb/s NIC per GPU)");
  add_real(app, "--local-gbs", &o->machine.local_gbs,
           "a rank's local memory passes, GB/s (3000: HBM3)", 1e-9);
  add_real(app, "--compute-ms", &o->compute_ms, "forward and backward per step", 0.0);
  add_real(app, "--dense-mb", &o->dense_mb, "dense gradients allreduced per step, MB", 0.0);
  add_int(app, "--tables", &o->tables, "embedding tables exchanged per step", 0, 1 << 20);
  zfc::tools::add_bytes(app, "--stream-chunk", &o->stream_chunk,
                        "stream_chunk_bytes of the fused_key_routed rows", 1);
  zfc::tools::add_output_file(app, &o->json,
                              "also write one JSON object per row to FILE (G, algo, wire, "
                              "U_g, MB, xnode_MB, peak_ws_MB, exchange_ms, step_ms, "
                              "efficiency)");
  const int status = zfc::tools::parse_command_line(app, argc, argv, true);
  if (status >= 0) return status;
  if (o->corpus.empty() && !(o->heaps_k > 0)) {
    std::fprintf(stderr, "zfc_model: give --corpus DIR or --heaps K,BETA with K > 0 (see "
                         "--help)\n");
    return zfc::tools::kExitBadOption;
  }
  return -1;
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
  const int refused = parse(argc, argv, &o);
  if (refused >= 0) return refused;
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
  zfc::tools::JsonLines json;
  if (!o.json.empty() && !json.open(o.json)) {
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
        zfc::tools::JsonObject row;
        row.integer("G", g)
            .text("algo", name)
            .text("wire", w == zfcCompressNone ? "none" : "fp16")
            .number("U_g", s.global_unique, "%.0f")
            .number("MB", p.bytes / 1e6, "%.6f")
            .number("xnode_MB", p.internode_bytes / 1e6, "%.6f")
            .number("peak_ws_MB", p.workspace_bytes / 1e6, "%.6f")
            .number("exchange_ms", p.seconds * 1e3, "%.6f")
            .number("step_ms", step * 1e3, "%.6f")
            .number("efficiency", first_step / step, "%.6f");
        json.write(row);
      }
    }
  }
  if (!json.close()) {
    std::fprintf(stderr, "zfc_model: cannot write %s\n", o.json.c_str());
    return 1;
  }
  return 0;
}
