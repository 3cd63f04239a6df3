// What the zfc_perf modes share: timing across ranks, failure handling and names.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "perf_options.hpp"
#include "perf_report.hpp"
#include "workload/step_source.hpp"
#include "zipfcoll/zipfcoll.h"

struct NamedComm {
  std::string transport;  // "mpi" or "ucx"
  zfcComm_t comm;
};

struct PerfContext {
  const PerfOptions& options;
  zfcComm_t comm;               // the first of `comms`: the allreduce mode's communicator
  std::vector<NamedComm> comms; // one per --transport, in order
  int rank;
  int ranks;
  Report& report;
};

// Prints the library's error and aborts every rank: a benchmark has no way to recover.
[[noreturn]] void perf_fail(const char* what, zfcResult_t r, zfcComm_t comm);

// Replaces every element by its maximum over ranks (one collective for all samples).
void max_over_ranks(std::vector<double>* samples);

double median(std::vector<double> v);

// zfcCompressNone, zfcCompressFp16 or zfcCompressBf16 for "none", "fp16", "bf16".
// The kind a compression is named by (zfcGetCompressionName), and every name.
zfcCompressionKind_t compression_kind(const std::string& name);
std::vector<std::string> compression_names();

// The largest value of `v` over ranks.
double max_over_ranks(double v);
double sum_over_ranks(double v);

// Nodes of the communicator: from --ranks-per-node, else hosts (ranks / ranks per host).
int node_count(const PerfContext& ctx, zfcComm_t comm);

// What the cost model was given and predicted: medians over the timed steps.
struct ModelRun {
  double seconds = 0.0;         // the time for the algorithm each step ran
  double unique_sum = 0.0;      // sum over ranks of U_i
  double unique_max = 0.0;      // max over ranks of U_i
  double ranks_per_core = 1.0;  // the communicator's agreed crowd
};

// Collective. The cost model on the timed steps, from this rank's U_i per step, the steps'
// U_g and K tokens per rank; bench/fit_model.py refits the machine model from these inputs.
ModelRun predicted_seconds(const PerfContext& ctx, zfcComm_t comm, const std::vector<int>& ran,
                           const std::vector<double>& ui, const std::vector<double>& ug,
                           size_t tokens, zfcCompressionKind_t wire);

// The workload of the sparse and sharded modes, from the options; a bad one (a missing
// corpus) aborts every rank.
std::unique_ptr<zfc::workload::StepSource> make_step_source(const PerfOptions& o);

int run_allreduce(PerfContext& ctx);
int run_sparse(PerfContext& ctx);
// zfc_perf sharded, and zfc_perf sparse --apply sgd (perf_table_steps.cpp).
int run_table_steps(PerfContext& ctx);
