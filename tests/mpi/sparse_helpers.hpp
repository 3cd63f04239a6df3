// Workloads and plan runs shared by the sparse-reduce tests.
#pragma once

#include <set>
#include <vector>

#include "common/mpi_world.hpp"
#include "common/reference.hpp"

namespace zfc {
namespace test {

struct Workload {
  std::vector<RankInput> ranks;
  size_t dim = 0;
  int64_t vocab = 0;

  size_t total_tokens() const {
    size_t n = 0;
    for (const RankInput& r : ranks) n += r.indices.size();
    return n;
  }
  size_t local_unique(int r) const {
    const auto& v = ranks[static_cast<size_t>(r)].indices;
    return std::set<int64_t>(v.begin(), v.end()).size();
  }
};

// Rank r gets count(r) Zipf(s) indices over `vocab` and random rows of width dim.
template <class CountFn>
Workload zipf_workload(int size, size_t dim, int64_t vocab, double s, uint64_t seed,
                       CountFn count) {
  workload::ZipfDistribution zipf(s, vocab);
  Workload w;
  w.dim = dim;
  w.vocab = vocab;
  for (int r = 0; r < size; ++r) {
    RankInput in;
    in.indices = zipf_indices(zipf, count(r), seed, r);
    in.rows = random_rows(in.indices.size(), dim, seed, r);
    w.ranks.push_back(std::move(in));
  }
  return w;
}

struct PlanOptions {
  zfcAlgorithm_t algorithm = zfcAlgoUniqueAllReduce;
  zfcDataType_t index_type = zfcInt32;
  zfcDataType_t row_type = zfcFloat32;
  zfcCompressionKind_t compression = zfcCompressNone;
  float scale = 1.0f;
};

struct PlanRun {
  zfcResult_t result = zfcInternalError;
  std::vector<int64_t> indices;
  std::vector<float> rows;
  int algorithm = -1;
  int overflowed = -1;
  zfcOpStats_t stats{};
};

// Rows converted to the plan's row type, as raw bytes.
std::vector<uint16_t> to_half_rows(const std::vector<float>& rows, zfcDataType_t type);
// What the library sees after that conversion, back in fp32.
std::vector<float> rounded_rows(const std::vector<float>& rows, zfcDataType_t type);

// Indices as the plan's index type (zfcInt32 or zfcInt64) holds them, as raw bytes.
std::vector<char> typed_indices(const std::vector<int64_t>& ids, zfcDataType_t type);

// Creates a plan, runs one sparse reduce on `mine`, copies the result out, destroys the plan.
PlanRun run_plan(zfcComm_t comm, const RankInput& mine, size_t dim, int64_t vocab,
                 const PlanOptions& options);

}  // namespace test
}  // namespace zfc
