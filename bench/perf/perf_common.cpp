#include "perf_common.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

void perf_fail(const char* what, zfcResult_t r, zfcComm_t comm) {
  std::fprintf(stderr, "zfc_perf: %s: %s: %s\n", what, zfcGetErrorString(r),
               zfcGetLastError(comm));
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void max_over_ranks(std::vector<double>* samples) {
  MPI_Allreduce(MPI_IN_PLACE, samples->data(), static_cast<int>(samples->size()), MPI_DOUBLE,
                MPI_MAX, MPI_COMM_WORLD);
}

double max_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

double sum_over_ranks(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

zfcCompressionKind_t compression_kind(const std::string& name) {
  for (int k = 0; k < 2 * ZFC_COMPRESS_STOCHASTIC; ++k) {
    const char* n = zfcGetCompressionName(k);
    if (n != nullptr && name == n) return static_cast<zfcCompressionKind_t>(k);
  }
  return zfcCompressNone;
}

std::vector<std::string> compression_names() {
  std::vector<std::string> names;
  for (int k = 0; k < 2 * ZFC_COMPRESS_STOCHASTIC; ++k) {
    const char* n = zfcGetCompressionName(k);
    if (n != nullptr) names.push_back(n);
  }
  return names;
}

std::unique_ptr<zfc::workload::StepSource> make_step_source(const PerfOptions& o) {
  zfc::workload::StepSpec spec;
  spec.corpus = o.corpus;
  spec.vocab = o.vocab;
  spec.zipf_s = o.zipf_s;
  spec.tokens = o.tokens;
  spec.window_len = o.window_len;
  spec.seed = o.seed;
  try {
    return std::make_unique<zfc::workload::StepSource>(spec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zfc_perf: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return nullptr;
}
