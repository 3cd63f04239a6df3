// The device-resident sparse step on one rank over NCCL, opened with the library's own
// bootstrap (no MPI), against the same call on host buffers on the same communicator (the
// host path, whatever the transport): the same bits, the path each phase took, and the
// step's waits for the caller's stream. Skips, saying why, without a GPU
// or without the NCCL plugin.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "device_test_util.hpp"
#include "resident_step_check.hpp"
#include "transport/nccl/nccl_transport.hpp"
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
  // Host buffers on the same communicator take the host path.
  test::expect_resident_step_matches_host(nccl_, nccl_, idx, rows, dim, vocab);
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
