#include "perf_options.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace {

void usage() {
  std::printf(
      "usage: mpirun -np G zfc_perf MODE [options]\n"
      "modes:\n"
      "  allreduce   zfcAllReduce over a size sweep, per compression, against MPI_Allreduce\n"
      "  sparse      the embedding-gradient exchange (zfcSparseReduce) per algorithm\n"
      "  sharded     a step of an SGD-trained table: replicated (allgather baseline and\n"
      "              owner_partitioned, each zfcSparseReduce + zfcApplyUpdate) against\n"
      "              sharded (zfcShardedGather + zfcShardedReduceApply); the sparse\n"
      "              workload options apply (--algo and --candidates do not)\n"
      "common:\n"
      "  -n ITERS          timed iterations (20)\n"
      "  -w ITERS          warm-up iterations (5)\n"
      "  -c 0|1            check every result against a reference (1)\n"
      "  -g 0|1            GPUs per rank: 1 puts the zfc calls' buffers on this rank's GPU\n"
      "                    (its rank on the host mod the devices; allreduce and sparse,\n"
      "                    not the table updates); the MPI baseline stays on host memory (0)\n"
      "  --compression L   comma list of none, fp16, bf16 (all)\n"
      "  --scale F         fp16 compression scale (1)\n"
      "  --json FILE       write every row, with machine and options, as JSON\n"
      "allreduce:\n"
      "  -b BYTES          smallest fp32 message (1K); K, M, G suffixes\n"
      "  -e BYTES          largest fp32 message (64M)\n"
      "  -f FACTOR         size multiplier (2)\n"
      "  -i BYTES          size increment, instead of -f\n"
      "sparse:\n"
      "  --algo L          comma list of allgather, unique_allreduce, unique_allgather,\n"
      "                    owner_partitioned, hierarchical, dense_vocab, key_routed, auto,\n"
      "                    bounded (zfcSparseReduceBounded); or all (allgather,\n"
      "                    unique_allreduce,unique_allgather,owner_partitioned,key_routed,\n"
      "                    auto; hierarchical, dense_vocab and bounded only when named)\n"
      "  --capacity C      the bounded calls' capacity, a bound on U_g every rank passes\n"
      "                    (0: min(G*K, V), which no step exceeds) (0)\n"
      "  --overflow-on-device 0|1  (-g 1 only) plans leave the overflow flag on the device\n"
      "                    (zfcSparsePlanConfig_t.overflow_on_device): one wait per step\n"
      "                    instead of two for unique_allreduce and auto (0)\n"
      "  --ranks-per-node N  group ranks [0,N), [N,2N), ... into nodes (default: by host)\n"
      "  -K TOKENS         tokens per rank per step (640)\n"
      "  -D DIM            row width (512)\n"
      "  --zipf S,V        seeded Zipf(S) stream over V ids (default 1.1,100000)\n"
      "  --corpus DIR      windows of real text from DIR's .txt files instead\n"
      "  --vocab V         vocabulary of the V-1 most frequent words (100000)\n"
      "  -L LEN            words per window of real text (20)\n"
      "  --transport L     comma list of mpi, ucx, nccl (with -g 1): the same steps over\n"
      "                    each (mpi)\n"
      "  --candidates C    add C log-uniform sampled-softmax candidates per rank and step:\n"
      "                    the output embedding's rows (0)\n"
      "  --seed-groups S   ranks in S seed groups draw the same candidates (1)\n"
      "  --seed N          workload seed (1)\n"
      "  --apply sgd       train a replicated table with SGD instead: zfcSparseReduce +\n"
      "                    zfcApplyUpdate (allgather baseline, owner_partitioned,\n"
      "                    key_routed) against the fused zfcSparseReduceApply; --algo and\n"
      "                    --candidates do not apply\n"
      "  --stream-chunk B  the plans' stream_chunk_bytes (library default: 1M)\n");
}

std::vector<std::string> split_list(const char* text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool parse_size(const char* text, size_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') return false;
  *out = static_cast<size_t>(v);
  return true;
}

bool parse_int(const char* text, int* out) {
  size_t v = 0;
  if (!parse_size(text, &v) || v > 1000000000) return false;
  *out = static_cast<int>(v);
  return true;
}

bool parse_double(const char* text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text, &end);
  return end != text && *end == '\0';
}

bool parse_zipf(const char* text, PerfOptions* o) {
  const char* comma = std::strchr(text, ',');
  if (comma == nullptr) return parse_double(text, &o->zipf_s);
  const std::string s(text, comma);
  size_t v = 0;
  if (!parse_double(s.c_str(), &o->zipf_s) || !parse_size(comma + 1, &v)) return false;
  o->vocab = static_cast<int64_t>(v);
  return true;
}

bool known(const std::vector<std::string>& items, const char* const* names) {
  for (const std::string& it : items) {
    bool ok = false;
    for (const char* const* n = names; *n != nullptr; ++n) ok = ok || it == *n;
    if (!ok) return false;
  }
  return true;
}

// One option with its value; false when unknown or malformed.
bool apply(const char* a, const char* v, PerfOptions* o) {
  auto is = [&](const char* name) { return std::strcmp(a, name) == 0; };
  double d = 0;
  if (is("-b")) return parse_bytes(v, &o->min_bytes);
  if (is("-e")) return parse_bytes(v, &o->max_bytes);
  if (is("-i")) return parse_bytes(v, &o->step_bytes);
  if (is("-f")) return parse_double(v, &o->factor);
  if (is("-n")) return parse_int(v, &o->iters);
  if (is("-w")) return parse_int(v, &o->warmup);
  if (is("-c")) return parse_int(v, &o->check);
  if (is("-g")) return parse_int(v, &o->gpus) && (o->gpus == 0 || o->gpus == 1);
  if (is("-K")) return parse_size(v, &o->tokens);
  if (is("-D")) return parse_size(v, &o->dim);
  if (is("-L")) return parse_size(v, &o->window_len);
  if (is("--candidates")) return parse_size(v, &o->candidates);
  if (is("--capacity")) return parse_size(v, &o->capacity);
  if (is("--overflow-on-device")) {
    return parse_int(v, &o->overflow_on_device) &&
           (o->overflow_on_device == 0 || o->overflow_on_device == 1);
  }
  if (is("--seed-groups")) return parse_int(v, &o->seed_groups);
  if (is("--ranks-per-node")) return parse_int(v, &o->ranks_per_node);
  if (is("--apply")) return (o->apply = v) == "sgd";
  if (is("--stream-chunk")) return parse_bytes(v, &o->stream_chunk) && o->stream_chunk > 0;
  if (is("--zipf")) return parse_zipf(v, o);
  if (is("--corpus")) return (o->corpus = v), true;
  if (is("--json")) return (o->json = v), true;
  if (is("--vocab")) {
    size_t n = 0;
    if (!parse_size(v, &n)) return false;
    o->vocab = static_cast<int64_t>(n);
    return true;
  }
  if (is("--seed")) {
    size_t n = 0;
    if (!parse_size(v, &n)) return false;
    o->seed = n;
    return true;
  }
  if (is("--scale")) {
    if (!parse_double(v, &d)) return false;
    o->scale = static_cast<float>(d);
    return true;
  }
  if (is("--compression")) return (o->compressions = split_list(v)), true;
  if (is("--algo")) return (o->algorithms = split_list(v)), true;
  if (is("--transport")) return (o->transports = split_list(v)), true;
  return false;
}

bool validate(PerfOptions* o) {
  static const char* const kCompressions[] = {"none", "fp16", "bf16", nullptr};
  static const char* const kTransports[] = {"mpi", "ucx", "nccl", nullptr};
  if (o->transports.empty()) o->transports = {"mpi"};
  if (!known(o->transports, kTransports)) return false;
  // NCCL moves device memory: its runs hand the calls device buffers.
  const bool nccl = std::find(o->transports.begin(), o->transports.end(), "nccl") !=
                    o->transports.end();
  if (nccl && o->gpus == 0) return false;
  // The flag stays on the device only for device buffers.
  if (o->overflow_on_device != 0 && o->gpus == 0) return false;
  static const char* const kAlgos[] = {"allgather",         "unique_allreduce",
                                       "unique_allgather",  "owner_partitioned",
                                       "hierarchical",      "dense_vocab",
                                       "key_routed",        "auto",
                                       "bounded",           "all",
                                       nullptr};
  if (o->compressions.empty()) o->compressions = {"none", "fp16", "bf16"};
  if (o->algorithms.empty()) o->algorithms = {"all"};
  std::vector<std::string> algos;  // "all" expands in place; each name once
  for (const std::string& a : o->algorithms) {
    const std::vector<std::string> names =
        a == "all" ? std::vector<std::string>{"allgather", "unique_allreduce", "unique_allgather",
                                              "owner_partitioned", "key_routed", "auto"}
                   : std::vector<std::string>{a};
    for (const std::string& n : names) {
      if (std::find(algos.begin(), algos.end(), n) == algos.end()) algos.push_back(n);
    }
  }
  o->algorithms = algos;
  if (!known(o->compressions, kCompressions)) return false;
  if (!known(o->algorithms, kAlgos)) return false;
  if (o->mode == "allreduce") {
    return o->min_bytes >= 4 && o->max_bytes >= o->min_bytes &&
           (o->step_bytes > 0 || o->factor > 1.0) && o->iters > 0;
  }
  const bool tables = o->mode == "sharded" || !o->apply.empty();
  // The table updates take host buffers in this version.
  const bool sharded_ok = !tables || (o->candidates == 0 && o->gpus == 0);
  return (o->mode == "sparse" || o->mode == "sharded") && sharded_ok && o->tokens > 0 && o->dim > 0 && o->vocab >= 2 &&
         o->seed_groups >= 1 && o->ranks_per_node >= 0 && o->candidates <= static_cast<size_t>(o->vocab) &&
         o->vocab <= INT32_MAX && o->window_len > 0 && o->iters > 0 && o->scale > 0 &&
         (o->corpus.empty() || o->tokens % o->window_len == 0);
}

}  // namespace

bool parse_bytes(const char* text, size_t* out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (errno != 0 || end == text || v < 0) return false;
  double mult = 1;
  if (*end == 'K' || *end == 'k') mult = 1024.0, ++end;
  else if (*end == 'M' || *end == 'm') mult = 1024.0 * 1024, ++end;
  else if (*end == 'G' || *end == 'g') mult = 1024.0 * 1024 * 1024, ++end;
  if (*end != '\0') return false;
  *out = static_cast<size_t>(v * mult);
  return true;
}

bool parse_perf_options(int argc, char** argv, bool print, PerfOptions* o) {
  for (int i = 0; i < argc; ++i) o->command_line += (i ? " " : "") + std::string(argv[i]);
  if (argc < 2 || argv[1][0] == '-') {
    o->help = argc >= 2 && (std::strcmp(argv[1], "--help") == 0 ||
                            std::strcmp(argv[1], "-h") == 0);
    if (print) usage();
    return false;
  }
  o->mode = argv[1];
  for (int i = 2; i < argc; i += 2) {
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (v == nullptr || !apply(argv[i], v, o)) {
      o->help = std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0;
      if (print) {
        if (!o->help) {
          std::fprintf(stderr, "zfc_perf: bad option %s%s%s\n", argv[i], v ? " " : "",
                       v ? v : "");
        }
        usage();
      }
      return false;
    }
  }
  if (!validate(o)) {
    if (print) std::fprintf(stderr, "zfc_perf: mode %s: an option is out of range or unknown "
                            "(see --help)\n", o->mode.c_str());
    return false;
  }
  return true;
}
