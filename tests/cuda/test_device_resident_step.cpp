// The device-resident sparse step on one rank over NCCL, opened with the library's own
// bootstrap (no MPI), against the same call on host buffers on the same communicator (the
// host path, whatever the transport): the same bits, the path each phase took, and the
// step's waits for the caller's stream. The same for the bounded step, which must not wait at
// all, whose failure is reported after the stream ran, and which a CUDA graph captures. Skips, saying why, without a GPU
// or without the NCCL plugin.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "device_test_util.hpp"
#include "resident_step_check.hpp"
#include "transport/nccl/nccl_transport.hpp"
#include "workload/random.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace {

using test::DeviceVector;

using test::open_one_rank;

// count indices below vocab, skewed to the low ids (a cubed uniform), and their rows in
// [-1, 1).
void skewed_step(uint64_t seed, size_t count, size_t dim, int64_t vocab,
                 std::vector<int64_t>* idx, std::vector<float>* rows) {
  workload::SplitMix64 rng(seed);
  idx->resize(count);
  for (int64_t& v : *idx) {
    const double x = rng.uniform();
    v = static_cast<int64_t>(static_cast<double>(vocab - 1) * x * x * x);
  }
  rows->resize(count * dim);
  for (float& r : *rows) r = static_cast<float>(rng.uniform() * 2.0 - 1.0);
}

class OneRankNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    ZFC_REQUIRE_GPU();
    // A build without NCCL, or where its library cannot be loaded, has no NCCL transport to
    // test; with one, opening it must succeed.
    const Status nccl = nccl_transport_check();
    if (!nccl.ok()) GTEST_SKIP() << "no NCCL transport: " << nccl.message();
    ASSERT_EQ(open_one_rank(zfcTransportNccl, &nccl_), zfcSuccess) << zfcGetLastError(nullptr);
  }
  void TearDown() override {
    if (nccl_ != nullptr) EXPECT_EQ(zfcCommDestroy(nccl_), zfcSuccess);
  }
  zfcComm_t nccl_ = nullptr;
};

TEST_F(OneRankNccl, ResidentStepsMatchTheHost) {
  const size_t dim = 40, count = 5000;
  const int64_t vocab = 50000;
  std::vector<int64_t> idx;
  std::vector<float> rows;
  skewed_step(31, count, dim, vocab, &idx, &rows);
  // Host buffers on the same communicator take the host path.
  test::expect_resident_step_matches_host(nccl_, nccl_, idx, rows, dim, vocab);
}

// An algorithm the device kernels do not run (unique_allgather) is staged: its path says so.
TEST_F(OneRankNccl, OtherAlgorithmsAreStagedAndSaySo) {
  const std::vector<int64_t> idx = {3, 1, 3, 7};
  const std::vector<float> rows(idx.size() * 4, 0.5f);
  DeviceVector<int64_t> d_idx(idx);
  DeviceVector<float> d_rows(rows);
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = 4;
  cfg.vocab_size = 10;
  cfg.index_type = zfcInt64;
  cfg.algorithm = zfcAlgoUniqueAllGather;
  zfcSparsePlan_t plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(nccl_, &cfg, &plan), zfcSuccess);
  zfcSparseResult_t d = ZFC_SPARSE_RESULT_INITIALIZER;
  ASSERT_EQ(zfcSparseReduce(plan, d_idx.get(), idx.size(), d_rows.get(), &d, nullptr),
            zfcSuccess)
      << zfcGetLastError(nccl_);
  EXPECT_EQ(d.num_unique, 3u);
  zfcStats_t st = ZFC_STATS_INITIALIZER;
  ASSERT_EQ(zfcCommGetStats(nccl_, &st), zfcSuccess);
  EXPECT_EQ(st.last.path[zfcPhaseLocal], zfcPathStaged);
  EXPECT_GT(st.last.host_syncs, 0u);
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

// One bounded call's outputs, read back once the stream ran.
struct BoundedOut {
  zfcResult_t result = zfcInternalError;
  zfcBoundedStatus_t status{-7, -7, -7};
  std::vector<int64_t> ids;
  std::vector<float> rows;
  uint32_t host_syncs = 99;
  int32_t path = -1;
};

BoundedOut run_bounded(zfcComm_t comm, zfcSparsePlan_t plan, const std::vector<int64_t>& idx,
                       const std::vector<float>& rows, size_t dim, size_t capacity,
                       cudaStream_t stream) {
  BoundedOut o;
  const std::vector<int64_t> ids_before(capacity, 77);
  const std::vector<float> rows_before(capacity * dim, -5.0f);
  if (stream == nullptr) {  // host buffers
    o.ids = ids_before;
    o.rows = rows_before;
    o.result = zfcSparseReduceBounded(plan, idx.data(), idx.size(), rows.data(), capacity,
                                      o.ids.data(), o.rows.data(), &o.status, nullptr);
  } else {
    DeviceVector<int64_t> d_idx(idx), d_ids(ids_before);
    DeviceVector<float> d_rows(rows), d_out(rows_before);
    DeviceVector<zfcBoundedStatus_t> d_status(std::vector<zfcBoundedStatus_t>(1, o.status));
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    o.result = zfcSparseReduceBounded(plan, d_idx.get(), idx.size(), d_rows.get(), capacity,
                                      d_ids.get(), d_out.get(), d_status.get(), stream);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    o.ids = d_ids.to_host();
    o.rows = d_out.to_host();
    o.status = d_status.value();
  }
  zfcStats_t st = ZFC_STATS_INITIALIZER;
  EXPECT_EQ(zfcCommGetStats(comm, &st), zfcSuccess);
  o.host_syncs = st.last.host_syncs;
  o.path = st.last.path[zfcPhaseRowExchange];
  return o;
}

TEST_F(OneRankNccl, BoundedStepMatchesTheHostWithoutWaiting) {
  const size_t dim = 24, count = 3000;
  const int64_t vocab = 20000;
  std::vector<int64_t> idx;
  std::vector<float> rows;
  skewed_step(41, count, dim, vocab, &idx, &rows);
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = dim;
  cfg.vocab_size = vocab;
  cfg.index_type = zfcInt64;
  cfg.compression = zfcCompressFp16;
  cfg.compress_scale = 32.0f;
  zfcSparsePlan_t plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(nccl_, &cfg, &plan), zfcSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const size_t capacity = count;  // above U_g
  const BoundedOut host = run_bounded(nccl_, plan, idx, rows, dim, capacity, nullptr);
  ASSERT_EQ(host.result, zfcSuccess) << zfcGetLastError(nccl_);
  ASSERT_EQ(host.status.result, zfcSuccess);
  ASSERT_GT(host.status.num_unique, 0);
  EXPECT_EQ(host.path, zfcPathHost);
  // Twice: the first call grows the plan's device memory, which waits for the device.
  for (int round = 0; round < 2; ++round) {
    const BoundedOut dev = run_bounded(nccl_, plan, idx, rows, dim, capacity, stream);
    ASSERT_EQ(dev.result, zfcSuccess) << zfcGetLastError(nccl_);
    EXPECT_EQ(dev.path, zfcPathDevice);
    EXPECT_EQ(dev.host_syncs, 0u) << "round " << round;
    EXPECT_EQ(dev.status.result, zfcSuccess);
    EXPECT_EQ(dev.status.num_unique, host.status.num_unique);
    EXPECT_EQ(dev.status.overflowed, host.status.overflowed);
    EXPECT_TRUE(test::same_bits(dev.ids, host.ids)) << "round " << round;
    EXPECT_TRUE(test::same_bits(dev.rows, host.rows)) << "round " << round;
  }
  zfcResult_t async = zfcInternalError;
  ASSERT_EQ(zfcCommGetAsyncError(nccl_, &async), zfcSuccess);
  EXPECT_EQ(async, zfcSuccess);
  // Over capacity: the call returns at once; the status, the query and the untouched
  // buffers tell, once the stream ran.
  const size_t small = static_cast<size_t>(host.status.num_unique) - 1;
  const BoundedOut over = run_bounded(nccl_, plan, idx, rows, dim, small, stream);
  ASSERT_EQ(over.result, zfcSuccess) << zfcGetLastError(nccl_);
  EXPECT_EQ(over.status.result, zfcInvalidArgument);
  EXPECT_EQ(over.status.num_unique, host.status.num_unique);
  EXPECT_EQ(over.ids, std::vector<int64_t>(small, 77));
  EXPECT_EQ(over.rows, std::vector<float>(small * dim, -5.0f));
  ASSERT_EQ(zfcCommGetAsyncError(nccl_, &async), zfcSuccess);
  EXPECT_EQ(async, zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(nccl_)).find("more than its capacity"),
            std::string::npos);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

// A bounded call that agrees in its kernels is captured in a CUDA graph (global capture mode,
// in which a wait for the device, a copy from pageable memory or an allocation fails the
// capture), and the graph, launched with other indices and rows in the same buffers, gives
// the bits of the host's call each time.
TEST_F(OneRankNccl, BoundedStepIsCapturedInACudaGraph) {
  const size_t dim = 16, count = 2000, capacity = count;
  const int64_t vocab = 9000;
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = dim;
  cfg.vocab_size = vocab;
  cfg.index_type = zfcInt64;
  cfg.compression = zfcCompressBf16;
  // One plan for the host's calls and one for the device's: each plan remembers the memory
  // space its calls agreed.
  zfcSparsePlan_t host_plan = nullptr, plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(nccl_, &cfg, &host_plan), zfcSuccess);
  ASSERT_EQ(zfcSparsePlanCreate(nccl_, &cfg, &plan), zfcSuccess);
  std::vector<std::vector<int64_t>> idx(3);
  std::vector<std::vector<float>> rows(3);
  std::vector<BoundedOut> want(3);
  for (size_t s = 0; s < 3; ++s) {
    skewed_step(51 + s, count, dim, vocab, &idx[s], &rows[s]);
    want[s] = run_bounded(nccl_, host_plan, idx[s], rows[s], dim, capacity, nullptr);
    ASSERT_EQ(want[s].result, zfcSuccess) << zfcGetLastError(nccl_);
    ASSERT_EQ(want[s].status.result, zfcSuccess);
  }
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  DeviceVector<int64_t> d_idx(idx[0]), d_ids(std::vector<int64_t>(capacity, 77));
  DeviceVector<float> d_rows(rows[0]), d_out(std::vector<float>(capacity * dim, -5.0f));
  DeviceVector<zfcBoundedStatus_t> d_status(std::vector<zfcBoundedStatus_t>(1));
  auto call = [&] {
    return zfcSparseReduceBounded(plan, d_idx.get(), count, d_rows.get(), capacity,
                                  d_ids.get(), d_out.get(), d_status.get(), stream);
  };
  // Twice before the capture: the first agrees on the host and grows the plan's memory, the
  // second agrees in its kernels, as the captured call does.
  for (int warm = 0; warm < 2; ++warm) {
    ASSERT_EQ(call(), zfcSuccess) << zfcGetLastError(nccl_);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(d_status.value().result, zfcSuccess);
  }
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  const zfcResult_t captured = call();
  const std::string why = captured == zfcSuccess ? "" : zfcGetLastError(nccl_);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(captured, zfcSuccess) << why;
  zfcStats_t st = ZFC_STATS_INITIALIZER;
  ASSERT_EQ(zfcCommGetStats(nccl_, &st), zfcSuccess);
  EXPECT_EQ(st.last.host_syncs, 0u);
  EXPECT_EQ(st.last.path[zfcPhaseRowExchange], zfcPathDevice);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (size_t s = 0; s < 3; ++s) {
    const size_t step = (s + 1) % 3;  // not the inputs the capture saw first
    ASSERT_EQ(cudaMemcpy(d_idx.get(), idx[step].data(), count * sizeof(int64_t),
                         cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_rows.get(), rows[step].data(), count * dim * sizeof(float),
                         cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const zfcBoundedStatus_t status = d_status.value();
    EXPECT_EQ(status.result, zfcSuccess) << "launch " << s;
    EXPECT_EQ(status.num_unique, want[step].status.num_unique) << "launch " << s;
    EXPECT_TRUE(test::same_bits(d_ids.to_host(), want[step].ids)) << "launch " << s;
    EXPECT_TRUE(test::same_bits(d_out.to_host(), want[step].rows)) << "launch " << s;
  }
  zfcResult_t async = zfcInternalError;
  ASSERT_EQ(zfcCommGetAsyncError(nccl_, &async), zfcSuccess);
  EXPECT_EQ(async, zfcSuccess);
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  EXPECT_EQ(zfcSparsePlanDestroy(host_plan), zfcSuccess);
}

}  // namespace
}  // namespace zfc
