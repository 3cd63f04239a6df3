// Command line of zfc_perf. Sizes and counts follow nccl-tests: -b/-e/-f (or -i) sweep the
// message size, -n/-w set timed and warm-up iterations, -c checks every result (the names
// shared by every program: common/tools/tool_options.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct PerfOptions {
  std::string mode;              // "allreduce", "sparse" or "sharded"
  // Sweep (allreduce): bytes of fp32 data per rank.
  size_t min_bytes = 1024;       // -b
  size_t max_bytes = 64u << 20;  // -e
  double factor = 2.0;           // -f
  size_t step_bytes = 0;         // -i (an increment instead of a factor when > 0)
  int iters = 20;                // -n
  int warmup = 5;                // -w
  int check = 1;                 // -c
  int gpus = 0;                  // -g: 1 puts the zfc calls' buffers on this rank's GPU
  std::vector<std::string> compressions;  // --compression none,fp16,bf16
  float scale = 1.0f;            // --scale: F of fp16xF
  // Workload (sparse).
  std::vector<std::string> algorithms;    // --algo allgather,unique_allreduce,... or all
  std::vector<std::string> transports;    // --transport mpi,ucx (sparse; default mpi)
  size_t tokens = 640;           // -K
  size_t dim = 512;              // -D
  std::string corpus;            // --corpus DIR
  double zipf_s = 1.1;           // --zipf s,V
  int64_t vocab = 100000;        // --zipf s,V or --vocab V
  size_t window_len = 20;        // -L
  size_t candidates = 0;         // --candidates C: sampled-softmax candidates per rank
  size_t capacity = 0;           // --capacity C: the bounded calls' capacity (0: G*K, V)
  int overflow_on_device = 0;    // --overflow-on-device 0|1: the plans' overflow_on_device
  int seed_groups = 1;           // --seed-groups S: ranks drawing the same candidates
  uint64_t seed = 1;             // --seed
  int ranks_per_node = 0;        // --ranks-per-node N: group ranks into nodes of N (0: hosts)
  std::string apply;             // --apply sgd (sparse): tables updated, fused against not
  size_t stream_chunk = 0;       // --stream-chunk BYTES: the plans' stream_chunk_bytes
  std::string json;              // -J, --output_file FILE
  std::string command_line;      // argv joined, for the record
};

// Parses argv. Returns -1 when the run goes on; otherwise the status to exit with: 0 after
// --help, 2 for a bad option (printed, when `print`, naming the option and its value).
int parse_perf_options(int argc, char** argv, bool print, PerfOptions* out);
