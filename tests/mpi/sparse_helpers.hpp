// Workloads and plan runs shared by the sparse-reduce tests.
#pragma once

#include <set>
#include <utility>
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

// A plan of `algorithm` with the fields the tests vary; a failure to make it is a test
// failure (and NULL).
zfcSparsePlan_t make_test_plan(zfcComm_t comm, size_t dim, int64_t vocab,
                               zfcAlgorithm_t algorithm, zfcDataType_t index_type,
                               int compression = -1, float scale = 1.0f,
                               size_t stream_chunk_bytes = 0);

// Every algorithm a plan can name, auto included.
inline constexpr zfcAlgorithm_t kEveryAlgorithm[] = {
    zfcAlgoAllGather,        zfcAlgoUniqueAllReduce, zfcAlgoDenseVocab, zfcAlgoUniqueAllGather,
    zfcAlgoOwnerPartitioned, zfcAlgoKeyRouted,       zfcAlgoHierarchical, zfcAlgoAuto};

// The world's communicator, and one of nodes of two ranks where that makes several nodes
// (hierarchical needs them): every algorithm that runs here, with the communicator it runs on.
class EveryAlgorithmTest : public WorldTest {
 protected:
  void SetUp() override {
    WorldTest::SetUp();
    if (size_ > 2 && size_ % 2 == 0) {
      zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
      cfg.ranks_per_node = 2;
      ASSERT_EQ(open_world_comm(&nodes_, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
    }
  }
  void TearDown() override {
    if (nodes_ != nullptr) zfcCommDestroy(nodes_);
    WorldTest::TearDown();
  }
  std::vector<std::pair<zfcAlgorithm_t, zfcComm_t>> algorithms() const {
    std::vector<std::pair<zfcAlgorithm_t, zfcComm_t>> runs;
    for (zfcAlgorithm_t a : kEveryAlgorithm) {
      zfcComm_t comm = a == zfcAlgoHierarchical ? nodes_ : comm_;
      if (comm != nullptr) runs.emplace_back(a, comm);
    }
    return runs;
  }
  zfcComm_t nodes_ = nullptr;
};

}  // namespace test
}  // namespace zfc
