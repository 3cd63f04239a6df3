#include "perf_options.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "perf_common.hpp"
#include "tools/tool_options.hpp"

namespace {

using zfc::tools::add_bytes;
using zfc::tools::add_int;
using zfc::tools::add_real;

const char* const kModes =
    "modes:\n"
    "  allreduce   zfcAllReduce over a size sweep, per compression, against MPI_Allreduce\n"
    "  sparse      the embedding-gradient exchange (zfcSparseReduce) per algorithm\n"
    "  sharded     a step of an SGD-trained table: replicated (allgather baseline and\n"
    "              owner_partitioned, each zfcSparseReduce + zfcApplyUpdate) against\n"
    "              sharded (zfcShardedGather + zfcShardedReduceApply); the sparse\n"
    "              workload options apply (--algo and --candidates do not)\n"
    "exit status: 0 done (and after --help), 1 a wrong result or a failed call, 2 a bad\n"
    "option (refused on every rank before any collective), 77 -g 1 without a GPU per rank";

void add_common(CLI::App& app, PerfOptions* o) {
  add_int(app, "-n,--iters", &o->iters, "timed iterations", 1, 1000000000);
  add_int(app, "-w,--warmup_iters", &o->warmup, "warm-up iterations", 0, 1000000000);
  add_int(app, "-c,--check", &o->check, "check every result against a reference (0|1)", 0,
          1000000000);
  add_int(app, "-g,--ngpus", &o->gpus,
          "GPUs per rank: 1 puts the zfc calls' buffers on this rank's GPU (its rank on the "
          "host mod the devices; allreduce and sparse, not the table updates); the MPI "
          "baseline stays on host memory",
          0, 1);
  zfc::tools::add_name_list(app, "--compression", &o->compressions,
                            "comma list of none, fp16, bf16, fp8_e4m3, fp8_e5m2, int8, and "
                            "each but none with _sr: stochastic rounding (default: none, "
                            "fp16, bf16)", {});
  add_real(app, "--scale", &o->scale, "fp16 compression scale", 0.0);
  zfc::tools::add_output_file(app, &o->json,
                              "write every row, with machine and options, as JSON");
  // allreduce
  add_bytes(app, "-b,--minbytes", &o->min_bytes, "allreduce: smallest fp32 message");
  add_bytes(app, "-e,--maxbytes", &o->max_bytes, "allreduce: largest fp32 message");
  add_real(app, "-f,--stepfactor", &o->factor, "allreduce: size multiplier", 0.0);
  add_bytes(app, "-i,--stepbytes", &o->step_bytes,
            "allreduce: size increment, instead of -f");
}

void add_workload(CLI::App& app, PerfOptions* o) {
  add_int<size_t>(app, "-K,--tokens", &o->tokens, "tokens per rank per step", 1);
  add_int<size_t>(app, "-D,--dim", &o->dim, "row width", 1);
  app.add_option_function<std::string>(
         "--zipf",
         [o](const std::string& v) {
           const std::vector<std::string> parts = zfc::tools::split_list(v);
           uint64_t vocab = 0;
           if (parts.empty() || parts.size() > 2 ||
               !zfc::tools::parse_real(parts[0], &o->zipf_s) || !(o->zipf_s > 0) ||
               (parts.size() == 2 && (!zfc::tools::parse_unsigned(parts[1], &vocab) ||
                                      vocab < 2 || vocab > INT32_MAX))) {
             throw zfc::tools::bad_option("--zipf", v, "S or S,V with S > 0, 2 <= V < 2^31");
           }
           if (parts.size() == 2) o->vocab = static_cast<int64_t>(vocab);
         },
         "seeded Zipf(S) stream over V ids")
      ->type_name("S,V")
      ->default_str("1.1,100000");
  app.add_option("--corpus", o->corpus, "windows of real text from DIR's .txt files instead")
      ->type_name("DIR");
  add_int<int64_t>(app, "--vocab", &o->vocab, "vocabulary of the V-1 most frequent words", 2,
                   INT32_MAX);
  add_int<size_t>(app, "-L,--window-len", &o->window_len, "words per window of real text", 1);
  add_int<uint64_t>(app, "--seed", &o->seed, "workload seed");
  add_int(app, "--ranks-per-node", &o->ranks_per_node,
          "group ranks [0,N), [N,2N), ... into nodes (0: by host)", 0, 1000000000);
  add_bytes(app, "--stream-chunk", &o->stream_chunk,
            "the plans' stream_chunk_bytes (library default: 1M)", 1);
}

void add_sparse(CLI::App& app, PerfOptions* o) {
  zfc::tools::add_name_list(
      app, "--algo", &o->algorithms,
      "comma list of allgather, unique_allreduce, unique_allgather, owner_partitioned, "
      "hierarchical, dense_vocab, key_routed, auto, bounded (zfcSparseReduceBounded); or all "
      "(allgather, unique_allreduce, unique_allgather, owner_partitioned, key_routed, auto; "
      "hierarchical, dense_vocab and bounded only when named)",
      {});
  add_int<size_t>(app, "--capacity", &o->capacity,
                  "the bounded calls' capacity, a bound on U_g every rank passes (0: "
                  "min(G*K, V), which no step exceeds)");
  add_int(app, "--overflow-on-device", &o->overflow_on_device,
          "(-g 1 only) plans leave the overflow flag on the device "
          "(zfcSparsePlanConfig_t.overflow_on_device): one wait per step instead of two for "
          "unique_allreduce and auto (0|1)",
          0, 1);
  zfc::tools::add_name_list(app, "--transport", &o->transports,
                            "comma list of mpi, ucx, nccl (with -g 1): the same steps over "
                            "each (mpi)",
                            {});
  add_int<size_t>(app, "--candidates", &o->candidates,
                  "add C log-uniform sampled-softmax candidates per rank and step: the "
                  "output embedding's rows");
  add_int(app, "--seed-groups", &o->seed_groups,
          "ranks in S seed groups draw the same candidates", 1, 1000000000);
  zfc::tools::add_choice(app, "--apply", &o->apply,
                         "train a replicated table with SGD instead: zfcSparseReduce + "
                         "zfcApplyUpdate (allgather baseline, owner_partitioned, key_routed) "
                         "against the fused zfcSparseReduceApply; --algo and --candidates do "
                         "not apply",
                         {"sgd"});
}

// The first name of `items` not among `names`, or "".
std::string unknown(const std::vector<std::string>& items, const std::vector<std::string>& names) {
  for (const std::string& it : items) {
    if (std::find(names.begin(), names.end(), it) == names.end()) return it;
  }
  return "";
}

// "all" expands in place; each name once.
std::vector<std::string> expand_algorithms(const std::vector<std::string>& given) {
  std::vector<std::string> algos;
  for (const std::string& a : given) {
    const std::vector<std::string> names =
        a == "all" ? std::vector<std::string>{"allgather", "unique_allreduce", "unique_allgather",
                                              "owner_partitioned", "key_routed", "auto"}
                   : std::vector<std::string>{a};
    for (const std::string& n : names) {
      if (std::find(algos.begin(), algos.end(), n) == algos.end()) algos.push_back(n);
    }
  }
  return algos;
}

// Why the options do not fit together, or "" when they do. Fills the lists' defaults.
std::string check_lists(PerfOptions* o) {
  if (o->transports.empty()) o->transports = {"mpi"};
  if (o->compressions.empty()) o->compressions = {"none", "fp16", "bf16"};
  if (o->algorithms.empty()) o->algorithms = {"all"};
  o->algorithms = expand_algorithms(o->algorithms);
  std::string bad = unknown(o->transports, {"mpi", "ucx", "nccl"});
  if (!bad.empty()) return "--transport " + bad + " is not one of mpi, ucx, nccl";
  bad = unknown(o->compressions, compression_names());
  if (!bad.empty()) {
    std::string known;
    for (const std::string& n : compression_names()) known += (known.empty() ? "" : ", ") + n;
    return "--compression " + bad + " is not one of " + known;
  }
  bad = unknown(o->algorithms, {"allgather", "unique_allreduce", "unique_allgather",
                                "owner_partitioned", "hierarchical", "dense_vocab",
                                "key_routed", "auto", "bounded"});
  if (!bad.empty()) return "--algo " + bad + " is not an algorithm";
  return "";
}

std::string check_mode(const PerfOptions& o) {
  // NCCL moves device memory: its runs hand the calls device buffers.
  const bool nccl = std::find(o.transports.begin(), o.transports.end(), "nccl") !=
                    o.transports.end();
  if (nccl && o.gpus == 0) return "--transport nccl needs -g 1";
  // The flag stays on the device only for device buffers.
  if (o.overflow_on_device != 0 && o.gpus == 0) return "--overflow-on-device 1 needs -g 1";
  if (!(o.scale > 0)) return "--scale must be above 0";
  if (o.mode == "allreduce") {
    if (o.min_bytes < 4) return "-b " + std::to_string(o.min_bytes) + " is under 4 bytes";
    if (o.max_bytes < o.min_bytes) return "-e is below -b";
    if (o.step_bytes == 0 && !(o.factor > 1.0)) return "-f must exceed 1 (or give -i)";
    return "";
  }
  // The table updates take host buffers in this version.
  const bool tables = o.mode == "sharded" || !o.apply.empty();
  if (tables && o.gpus != 0) return "the table updates take host buffers: -g 1 is refused";
  if (tables && o.candidates != 0) return "--candidates does not apply to table updates";
  if (o.candidates > static_cast<size_t>(o.vocab)) return "--candidates exceeds the vocabulary";
  if (!o.corpus.empty() && o.tokens % o.window_len != 0) {
    return "-K " + std::to_string(o.tokens) + " is not a multiple of -L " +
           std::to_string(o.window_len);
  }
  return "";
}

}  // namespace

int parse_perf_options(int argc, char** argv, bool print, PerfOptions* o) {
  o->command_line = zfc::tools::joined_command_line(argc, argv);
  CLI::App app("collective benchmarks in the manner of nccl-tests\n"
                "run as: mpirun -np G zfc_perf MODE [options]",
                "zfc_perf");
  app.footer(kModes);
  zfc::tools::add_choice(app, "mode", &o->mode, "allreduce, sparse or sharded",
                         {"allreduce", "sparse", "sharded"})
      ->required();
  add_common(app, o);
  add_workload(app, o);
  add_sparse(app, o);
  const int status = zfc::tools::parse_command_line(app, argc, argv, print);
  if (status >= 0) return status;
  std::string why = check_lists(o);
  if (why.empty()) why = check_mode(*o);
  if (why.empty()) return -1;
  // The sentence the tests and scripts match stays; the reason follows it.
  if (print) {
    std::fprintf(stderr, "zfc_perf: mode %s: an option is out of range or unknown: %s (see "
                 "--help)\n", o->mode.c_str(), why.c_str());
  }
  return zfc::tools::kExitBadOption;
}
