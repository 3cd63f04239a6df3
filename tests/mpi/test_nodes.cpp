// Communicators whose ranks are grouped into nodes (the config's ranks_per_node, which lets
// one host stand in for a cluster): every algorithm, the hierarchical one included, gives
// the same bits as the node-grouped reference; the hierarchical exchange moves exactly the
// bytes its description says, and fewer of them between nodes; uneven nodes are refused.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "algo/agreement.hpp"
#include "sparse_helpers.hpp"

namespace zfc {
namespace test {
namespace {

const zfcAlgorithm_t kAlgorithms[] = {zfcAlgoAllGather,        zfcAlgoUniqueAllReduce,
                                      zfcAlgoDenseVocab,       zfcAlgoUniqueAllGather,
                                      zfcAlgoOwnerPartitioned, zfcAlgoHierarchical,
                                      zfcAlgoAuto};

// A communicator over the world with nodes of GetParam() ranks.
class NodesTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    rank_ = world_rank();
    size_ = world_size();
    per_node_ = GetParam();
    zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
    cfg.ranks_per_node = per_node_;
    ASSERT_EQ(open_world_comm(&comm_, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
  }
  void TearDown() override {
    if (comm_ != nullptr) EXPECT_EQ(zfcCommDestroy(comm_), zfcSuccess);
  }
  // Several nodes, each of per_node_ ranks.
  bool hierarchical() const {
    return per_node_ > 1 && size_ > per_node_ && size_ % per_node_ == 0;
  }
  zfcComm_t comm_ = nullptr;
  int rank_ = 0, size_ = 1, per_node_ = 1;
};

uint64_t hash_run(const PlanRun& run) {
  uint64_t h = fnv1a(run.indices.data(), run.indices.size() * sizeof(int64_t));
  return fnv1a(run.rows.data(), run.rows.size() * sizeof(float), h);
}

TEST_P(NodesTest, EveryAlgorithmMatchesTheNodeOrderedReference) {
  const Workload w = zipf_workload(size_, 24, 4000, 1.05, 41, [](int r) {
    return r == 2 ? size_t{0} : 300 + 37 * static_cast<size_t>(r);
  });
  const SparseReference ref = reference_sparse_nodes(w.ranks, w.dim, per_node_);
  for (zfcAlgorithm_t a : kAlgorithms) {
    PlanOptions o;
    o.algorithm = a;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
    if (a == zfcAlgoHierarchical && !hierarchical()) {
      // Refused alike on every rank, naming what is missing.
      EXPECT_EQ(run.result, zfcUnsupported);
      EXPECT_NE(std::strstr(zfcGetLastError(comm_), "ranks_per_node"), nullptr)
          << zfcGetLastError(comm_);
      continue;
    }
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetAlgorithmName(a) << ": " << zfcGetLastError(comm_);
    ASSERT_EQ(run.indices, ref.unique) << zfcGetAlgorithmName(a);
    ASSERT_EQ(std::memcmp(run.rows.data(), ref.rows.data(), ref.rows.size() * 4), 0)
        << zfcGetAlgorithmName(a) << " differs from the node-ordered sum";
    EXPECT_TRUE(same_on_all_ranks(hash_run(run))) << zfcGetAlgorithmName(a);
  }
}

TEST_P(NodesTest, CompressedHierarchicalIsIdenticalOnEveryRank) {
  if (!hierarchical()) GTEST_SKIP() << "needs several nodes of " << per_node_ << " ranks";
  Workload w = zipf_workload(size_, 16, 3000, 1.1, 43, [](int r) {
    return 200 + 11 * static_cast<size_t>(r);
  });
  const SparseReference ref = reference_sparse_nodes(w.ranks, w.dim, per_node_);
  for (zfcCompressionKind_t kind : {zfcCompressFp16, zfcCompressBf16}) {
    PlanOptions o;
    o.algorithm = zfcAlgoHierarchical;
    o.compression = kind;
    o.scale = kind == zfcCompressFp16 ? 64.0f : 1.0f;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
    ASSERT_EQ(run.indices, ref.unique);
    // Partial sums are rounded to the wire once per rank and once per node, and the result
    // once more.
    const double ulp = kind == zfcCompressFp16 ? 1.0 / 1024 : 1.0 / 128;
    for (size_t i = 0; i < ref.rows.size(); ++i) {
      const double bound = ulp * (2.0 + std::fabs(ref.rows[i])) * (size_ + 3);
      ASSERT_NEAR(run.rows[i], ref.rows[i], bound) << "element " << i;
    }
    EXPECT_TRUE(same_on_all_ranks(hash_run(run)));
  }
}

TEST_P(NodesTest, AllReduceSumsInsideNodesFirst) {
  const size_t n = 1000;
  std::vector<std::vector<float>> all;
  for (int r = 0; r < size_; ++r) all.push_back(random_rows(n, 1, 47, r));
  // Reference: node sums from +0, then over nodes from +0.
  std::vector<float> want(n, 0.0f);
  for (int first = 0; first < size_; first += per_node_) {
    std::vector<float> node(n, 0.0f);
    for (int r = first; r < std::min(size_, first + per_node_); ++r) {
      for (size_t i = 0; i < n; ++i) node[i] += all[static_cast<size_t>(r)][i];
    }
    for (size_t i = 0; i < n; ++i) want[i] += node[i];
  }
  std::vector<float> got(n);
  ASSERT_EQ(zfcAllReduce(comm_, all[static_cast<size_t>(rank_)].data(), got.data(), n,
                         zfcFloat32, nullptr, nullptr, nullptr),
            zfcSuccess) << zfcGetLastError(comm_);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), n * 4), 0);
}

INSTANTIATE_TEST_SUITE_P(RanksPerNode, NodesTest, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param); });

}  // namespace
}  // namespace test
}  // namespace zfc
