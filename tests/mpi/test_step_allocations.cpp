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

constexpr size_t kDim = 16;
constexpr int64_t kVocab = 3000;
constexpr int kSteps = 4;

using StepAllocations = EveryAlgorithmTest;

zfcSparsePlan_t make_plan(zfcComm_t comm, zfcAlgorithm_t algorithm, int compression,
                          size_t stream_chunk_bytes = 0) {
  return make_test_plan(comm, kDim, kVocab, algorithm, zfcInt32, compression, 1.0f,
                        stream_chunk_bytes);
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
    for (const auto& run : algorithms()) {
      // Named copies: a lambda may not capture a structured binding in C++17.
      const zfcAlgorithm_t a = run.first;
      const zfcComm_t comm = run.second;
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
    for (const auto& run : algorithms()) {
      // Named copies: a lambda may not capture a structured binding in C++17.
      const zfcAlgorithm_t a = run.first;
      const zfcComm_t comm = run.second;
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

// A sharded table's step (zfcShardedGather, then zfcShardedReduceApply with Adagrad), and the
// deterministic allreduce of a dense gradient, in fp32 and fp16.
TEST_F(StepAllocations, SteadyShardedStepsAndAllReducesAllocateNothing) {
  const Workload w = step_workload(size_);
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  const std::vector<char> ids = typed_indices(mine.indices, zfcInt32);
  size_t shard_rows = 0;
  ASSERT_EQ(zfcShardRows(kVocab, size_, rank_, &shard_rows), zfcSuccess);
  std::vector<float> shard(shard_rows * kDim, 0.5f), state(shard_rows * kDim, 0.0f);
  zfcRowUpdate_t adagrad = ZFC_ROW_UPDATE_INITIALIZER;
  adagrad.kind = zfcUpdateAdagrad;
  adagrad.alpha = 0.01f;
  std::vector<float> dense(4096, 0.25f), summed(dense.size());
  for (int compression : {-1, static_cast<int>(zfcCompressFp16)}) {
    zfcSparsePlan_t plan = make_plan(comm_, zfcAlgoKeyRouted, compression);
    ASSERT_NE(plan, nullptr);
    const std::string what = describe(zfcAlgoKeyRouted, compression, rank_);
    const long long gathered = steady_allocations([&] {
      zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
      const zfcResult_t r = zfcShardedGather(plan, shard.data(), shard_rows, ids.data(),
                                             mine.indices.size(), &out, nullptr, nullptr);
      EXPECT_EQ(r, zfcSuccess) << what << ": " << zfcGetLastError(comm_);
      return r == zfcSuccess;
    });
    EXPECT_EQ(gathered, 0) << what << ": zfcShardedGather allocations in steps 2.." << kSteps;
    const long long applied = steady_allocations([&] {
      int overflowed = -1;
      const zfcResult_t r = zfcShardedReduceApply(plan, ids.data(), mine.indices.size(),
                                                  mine.rows.data(), &adagrad, shard.data(),
                                                  state.data(), shard_rows, &overflowed,
                                                  nullptr);
      EXPECT_EQ(r, zfcSuccess) << what << ": " << zfcGetLastError(comm_);
      return r == zfcSuccess;
    });
    EXPECT_EQ(applied, 0) << what << ": zfcShardedReduceApply allocations in steps 2.."
                          << kSteps;
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
    zfcCompression_t how{};
    how.kind = compression < 0 ? zfcCompressNone : static_cast<zfcCompressionKind_t>(compression);
    how.scale = 1.0f;
    const long long reduced = steady_allocations([&] {
      int overflowed = -1;
      const zfcResult_t r = zfcAllReduce(comm_, dense.data(), summed.data(), dense.size(),
                                         zfcFloat32, &how, &overflowed, nullptr);
      EXPECT_EQ(r, zfcSuccess) << what << ": " << zfcGetLastError(comm_);
      return r == zfcSuccess;
    });
    EXPECT_EQ(reduced, 0) << "zfcAllReduce" << (compression < 0 ? " fp32" : " fp16")
                          << ", rank " << rank_ << ": allocations in steps 2.." << kSteps;
  }
}

}  // namespace
}  // namespace test
}  // namespace zfc
