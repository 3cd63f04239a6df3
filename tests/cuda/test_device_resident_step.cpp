// The device-resident sparse step on one rank over NCCL, opened with the library's own
// bootstrap (no MPI), against the same call on host buffers on the same communicator (the
// host path, whatever the transport): the same bits, the path each phase took, and the
// step's waits for the caller's stream. Skips, saying why, without a GPU
// or without the NCCL plugin.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "device_test_util.hpp"
#include "workload/random.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace {

using test::DeviceVector;

zfcResult_t open_one_rank(zfcTransport_t transport, zfcComm_t* comm) {
  zfcUniqueId id;
  const zfcResult_t r = zfcGetUniqueId(&id);
  if (r != zfcSuccess) return r;
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.transport = transport;
  return zfcCommInitRank(comm, 1, id, 0, &cfg);
}

class OneRankNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    ZFC_REQUIRE_GPU();
    const zfcResult_t r = open_one_rank(zfcTransportNccl, &nccl_);
    if (r == zfcUnsupported) {
      GTEST_SKIP() << "no NCCL here: " << zfcGetLastError(nullptr);
    }
    ASSERT_EQ(r, zfcSuccess) << zfcGetLastError(nullptr);
  }
  void TearDown() override {
    if (nccl_ != nullptr) EXPECT_EQ(zfcCommDestroy(nccl_), zfcSuccess);
  }
  zfcComm_t nccl_ = nullptr;
};

TEST_F(OneRankNccl, ResidentKeyRoutedStepMatchesTheHost) {
  const size_t dim = 40, count = 5000;
  const int64_t vocab = 50000;
  workload::SplitMix64 rng(31);
  std::vector<int64_t> idx(count);
  for (int64_t& v : idx) {
    const double x = rng.uniform();
    v = static_cast<int64_t>(static_cast<double>(vocab - 1) * x * x * x);
  }
  std::vector<float> rows(count * dim);
  for (float& r : rows) r = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  const std::vector<int32_t> idx32(idx.begin(), idx.end());
  DeviceVector<int64_t> d_idx(idx);
  DeviceVector<int32_t> d_idx32(idx32);
  DeviceVector<float> d_rows(rows);
  for (zfcAlgorithm_t algo : {zfcAlgoKeyRouted, zfcAlgoAuto}) {
    for (int compression : {int{zfcCompressNone}, int{zfcCompressFp16}, int{zfcCompressBf16}}) {
      for (zfcDataType_t type : {zfcInt32, zfcInt64}) {
        SCOPED_TRACE(testing::Message() << zfcGetAlgorithmName(algo) << ", compression "
                                        << compression << ", index type " << type);
        zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
        cfg.dim = dim;
        cfg.vocab_size = vocab;
        cfg.index_type = type;
        cfg.algorithm = algo;
        cfg.compression = compression;
        cfg.compress_scale = compression == zfcCompressFp16 ? 128.0f : 1.0f;
        zfcSparsePlanConfig_t host_cfg = cfg;
        host_cfg.algorithm = zfcAlgoKeyRouted;
        zfcSparsePlan_t host_plan = nullptr, dev_plan = nullptr;
        ASSERT_EQ(zfcSparsePlanCreate(nccl_, &host_cfg, &host_plan), zfcSuccess);
        ASSERT_EQ(zfcSparsePlanCreate(nccl_, &cfg, &dev_plan), zfcSuccess);
        const void* h_in = type == zfcInt32 ? static_cast<const void*>(idx32.data()) : idx.data();
        const void* d_in =
            type == zfcInt32 ? static_cast<const void*>(d_idx32.get()) : d_idx.get();
        zfcSparseResult_t h = ZFC_SPARSE_RESULT_INITIALIZER, d = ZFC_SPARSE_RESULT_INITIALIZER;
        ASSERT_EQ(zfcSparseReduce(host_plan, h_in, count, rows.data(), &h, nullptr), zfcSuccess);
        zfcStats_t hs = ZFC_STATS_INITIALIZER;
        ASSERT_EQ(zfcCommGetStats(nccl_, &hs), zfcSuccess);
        EXPECT_EQ(hs.last.path[zfcPhaseLocal], zfcPathHost);
        EXPECT_EQ(hs.last.host_syncs, 0u);
        ASSERT_EQ(zfcSparseReduce(dev_plan, d_in, count, d_rows.get(), &d, nullptr), zfcSuccess)
            << zfcGetLastError(nccl_);
        EXPECT_EQ(d.algorithm, zfcAlgoKeyRouted);
        EXPECT_EQ(d.overflowed, h.overflowed);
        ASSERT_EQ(d.num_unique, h.num_unique);
        std::vector<float> d_out(d.num_unique * dim);
        ASSERT_TRUE(
            cuda::copy_to_host(d_out.data(), d.rows, d_out.size() * sizeof(float), nullptr).ok());
        EXPECT_TRUE(
            test::same_bits(d_out, std::vector<float>(h.rows, h.rows + h.num_unique * dim)));
        const size_t index_bytes = type == zfcInt32 ? 4 : 8;
        std::vector<char> d_keys(d.num_unique * index_bytes);
        ASSERT_TRUE(cuda::copy_to_host(d_keys.data(), d.indices, d_keys.size(), nullptr).ok());
        EXPECT_EQ(std::memcmp(d_keys.data(), h.indices, d_keys.size()), 0);
        zfcStats_t st = ZFC_STATS_INITIALIZER;
        ASSERT_EQ(zfcCommGetStats(nccl_, &st), zfcSuccess);
        EXPECT_EQ(st.last.path[zfcPhaseLocal], zfcPathDevice);
        EXPECT_EQ(st.last.path[zfcPhaseRowExchange], zfcPathDevice);
        EXPECT_EQ(st.last.path[zfcPhaseHeader], zfcPathHost);
        EXPECT_EQ(st.last.host_syncs, 9u);  // docs/design.md, "Device buffers", lists them
        EXPECT_EQ(zfcSparsePlanDestroy(host_plan), zfcSuccess);
        EXPECT_EQ(zfcSparsePlanDestroy(dev_plan), zfcSuccess);
      }
    }
  }
}

// The allgather on the same communicator stays staged: its path says so.
TEST_F(OneRankNccl, OtherAlgorithmsAreStagedAndSaySo) {
  const std::vector<int64_t> idx = {3, 1, 3, 7};
  const std::vector<float> rows(idx.size() * 4, 0.5f);
  DeviceVector<int64_t> d_idx(idx);
  DeviceVector<float> d_rows(rows);
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = 4;
  cfg.vocab_size = 10;
  cfg.index_type = zfcInt64;
  cfg.algorithm = zfcAlgoUniqueAllReduce;
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

}  // namespace
}  // namespace zfc
