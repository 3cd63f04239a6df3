// A steady-state step allocates nothing on the heap in the library's own code: after a
// plan's first step has sized its workspace, steps 2..N of the same shape make no operator
// new allocation on any rank, for every algorithm and wire (live_resources.cpp counts them;
// MPI and UCX, written in C, allocate with malloc and are not counted).
#include <string>
#include <utility>
#include <vector>

#include "mpi/live_resources.hpp"
#include "sparse_helpers.hpp"

namespace zfc {
namespace test {
namespace {

const zfcAlgorithm_t kAlgorithms[] = {zfcAlgoAllGather,        zfcAlgoUniqueAllReduce,
                                      zfcAlgoDenseVocab,       zfcAlgoUniqueAllGather,
                                      zfcAlgoOwnerPartitioned, zfcAlgoKeyRouted,
                                      zfcAlgoHierarchical,     zfcAlgoAuto};
constexpr size_t kDim = 16;
constexpr int64_t kVocab = 3000;
constexpr int kSteps = 4;

// Nodes of two ranks where that makes several nodes (hierarchical needs them).
class StepAllocations : public WorldTest {
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
    for (zfcAlgorithm_t a : kAlgorithms) {
      zfcComm_t comm = a == zfcAlgoHierarchical ? nodes_ : comm_;
      if (comm != nullptr) runs.emplace_back(a, comm);
    }
    return runs;
  }
  zfcComm_t nodes_ = nullptr;
};

zfcSparsePlan_t make_plan(zfcComm_t comm, zfcAlgorithm_t algorithm, int compression,
                          size_t stream_chunk_bytes = 0) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.stream_chunk_bytes = stream_chunk_bytes;
  cfg.dim = kDim;
  cfg.vocab_size = kVocab;
  cfg.index_type = zfcInt32;
  cfg.algorithm = algorithm;
  cfg.compression = compression;
  zfcSparsePlan_t plan = nullptr;
  EXPECT_EQ(zfcSparsePlanCreate(comm, &cfg, &plan), zfcSuccess) << zfcGetLastError(comm);
  return plan;
}

// The operator new allocations of steps 2..kSteps on this rank; `step` runs one.
template <class F>
long long steady_allocations(F&& step) {
  if (!step()) return -1;
  const long long before = live_resources().heap_allocations;
  for (int s = 1; s < kSteps; ++s) {
    if (!step()) return -1;
  }
  return live_resources().heap_allocations - before;
}

// Rank 0's tokens are more than a sum block (ZFC_SUM_BLOCK_ROWS) and repeat, so its local
// sums take the block-ordered path of kernels::scatter_add_rows.
Workload step_workload(int size) {
  return zipf_workload(size, kDim, kVocab, 1.1, 23, [](int r) {
    return r == 0 ? size_t{ZFC_SUM_BLOCK_ROWS} + 300 : 150 + 31 * static_cast<size_t>(r);
  });
}

std::string describe(zfcAlgorithm_t a, int compression, int rank) {
  return std::string(zfcGetAlgorithmName(a)) + (compression < 0 ? " fp32" : " fp16") +
         ", rank " + std::to_string(rank);
}

TEST_F(StepAllocations, SteadyReducesAllocateNothing) {
  const Workload w = step_workload(size_);
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  const std::vector<char> ids = typed_indices(mine.indices, zfcInt32);
  for (int compression : {-1, static_cast<int>(zfcCompressFp16)}) {
    for (const auto& [a, comm] : algorithms()) {
      zfcSparsePlan_t plan = make_plan(comm, a, compression);
      ASSERT_NE(plan, nullptr);
      const std::string what = describe(a, compression, rank_);
      const long long n = steady_allocations([&] {
        zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
        const zfcResult_t r = zfcSparseReduce(plan, ids.data(), mine.indices.size(),
                                              mine.rows.data(), &out, nullptr);
        EXPECT_EQ(r, zfcSuccess) << what << ": " << zfcGetLastError(comm);
        return r == zfcSuccess;
      });
      EXPECT_EQ(n, 0) << what << ": allocations in steps 2.." << kSteps;
      EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
    }
  }
}

// The caller's buffers (zfcSparseReduceInto) and the fused update of a replicated table
// (zfcSparseReduceApply; key_routed streams its rows in rounds of a small chunk).
TEST_F(StepAllocations, SteadyReduceIntoAndFusedApplyAllocateNothing) {
  const Workload w = step_workload(size_);
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  const std::vector<char> ids = typed_indices(mine.indices, zfcInt32);
  const size_t capacity = w.total_tokens();
  std::vector<int32_t> ids_out(capacity);
  std::vector<float> rows_out(capacity * kDim);
  std::vector<float> table(static_cast<size_t>(kVocab) * kDim, 0.0f);
  zfcRowUpdate_t sgd = ZFC_ROW_UPDATE_INITIALIZER;
  sgd.kind = zfcUpdateSgd;
  sgd.alpha = 0.01f;
  for (int compression : {-1, static_cast<int>(zfcCompressFp16)}) {
    for (const auto& [a, comm] : algorithms()) {
      zfcSparsePlan_t plan = make_plan(comm, a, compression, 64 * kDim);
      ASSERT_NE(plan, nullptr);
      const std::string what = describe(a, compression, rank_);
      const long long into = steady_allocations([&] {
        zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
        const zfcResult_t r =
            zfcSparseReduceInto(plan, ids.data(), mine.indices.size(), mine.rows.data(),
                                ids_out.data(), rows_out.data(), capacity, &out, nullptr);
        EXPECT_EQ(r, zfcSuccess) << what << ": " << zfcGetLastError(comm);
        return r == zfcSuccess;
      });
      EXPECT_EQ(into, 0) << what << ": zfcSparseReduceInto allocations in steps 2.." << kSteps;
      const long long applied = steady_allocations([&] {
        int overflowed = -1;
        const zfcResult_t r =
            zfcSparseReduceApply(plan, ids.data(), mine.indices.size(), mine.rows.data(), &sgd,
                                 table.data(), nullptr, &overflowed, nullptr);
        EXPECT_EQ(r, zfcSuccess) << what << ": " << zfcGetLastError(comm);
        return r == zfcSuccess;
      });
      EXPECT_EQ(applied, 0) << what << ": zfcSparseReduceApply allocations in steps 2.."
                            << kSteps;
      EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace zfc
