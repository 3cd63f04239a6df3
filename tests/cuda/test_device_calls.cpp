// The calls that take device buffers through the execution layer's staging and table
// updates, against the same calls on host buffers on the same one-rank communicator (NCCL,
// opened with the library's own bootstrap): zfcApplyUpdate on a device table,
// zfcSparseReduceInto into device buffers, zfcSparseReduceApply on a device table (streamed
// and whole), and the sharded table's gather and update on a device shard. Each must give
// the host's bits. Skips, saying why, without a GPU or without the NCCL plugin.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device_test_util.hpp"
#include "transport/nccl/nccl_transport.hpp"
#include "workload/random.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace {

using test::DeviceVector;
using test::same_bits;

constexpr size_t kDim = 24;
constexpr int64_t kVocab = 3000;

struct Step {
  std::vector<int32_t> idx;
  std::vector<float> rows;
};

// count indices skewed to the low ids, so that many repeat, and rows in [-1, 1).
Step make_step(uint64_t seed, size_t count) {
  workload::SplitMix64 rng(seed);
  Step s{std::vector<int32_t>(count), std::vector<float>(count * kDim)};
  for (int32_t& v : s.idx) {
    const double x = rng.uniform();
    v = static_cast<int32_t>(static_cast<double>(kVocab - 1) * x * x);
  }
  for (float& r : s.rows) r = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  return s;
}

std::vector<float> table_values(uint64_t seed, float low) {
  workload::SplitMix64 rng(seed);
  std::vector<float> t(static_cast<size_t>(kVocab) * kDim);
  for (float& v : t) v = low + static_cast<float>(rng.uniform());
  return t;
}

TEST(DeviceCalls, ApplyUpdateMatchesTheHostCall) {
  ZFC_REQUIRE_GPU();
  const Step s = make_step(5, 700);  // repeated indices: applied in order on both
  for (zfcUpdateKind_t kind : {zfcUpdateAdd, zfcUpdateSgd, zfcUpdateAdagrad}) {
    zfcRowUpdate_t u = ZFC_ROW_UPDATE_INITIALIZER;
    u.kind = kind;
    u.alpha = 0.3f;
    u.epsilon = 1e-6f;
    std::vector<float> table = table_values(1, -0.5f), state = table_values(2, 0.0f);
    DeviceVector<float> d_table(table), d_state(state), d_rows(s.rows);
    DeviceVector<int32_t> d_idx(s.idx);
    ASSERT_EQ(zfcApplyUpdate(table.data(), state.data(), kVocab, kDim, s.idx.data(), zfcInt32,
                             s.rows.data(), s.idx.size(), &u, nullptr),
              zfcSuccess);
    ASSERT_EQ(zfcApplyUpdate(d_table.get(), d_state.get(), kVocab, kDim, d_idx.get(), zfcInt32,
                             d_rows.get(), s.idx.size(), &u, nullptr),
              zfcSuccess)
        << zfcGetLastError(nullptr);
    EXPECT_TRUE(same_bits(d_table.to_host(), table)) << "kind " << kind;
    EXPECT_TRUE(same_bits(d_state.to_host(), state)) << "kind " << kind;
  }
}

class OneRankDeviceCalls : public ::testing::Test {
 protected:
  void SetUp() override {
    ZFC_REQUIRE_GPU();
    const Status nccl = nccl_transport_check();
    if (!nccl.ok()) GTEST_SKIP() << "no NCCL transport: " << nccl.message();
    ASSERT_EQ(test::open_one_rank(zfcTransportNccl, &comm_), zfcSuccess)
        << zfcGetLastError(nullptr);
  }
  void TearDown() override {
    if (comm_ != nullptr) EXPECT_EQ(zfcCommDestroy(comm_), zfcSuccess);
  }
  zfcSparsePlan_t plan(int algorithm) {
    zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
    cfg.dim = kDim;
    cfg.vocab_size = kVocab;
    cfg.algorithm = algorithm;
    cfg.stream_chunk_bytes = 4096;  // several rounds of the streamed apply
    zfcSparsePlan_t p = nullptr;
    EXPECT_EQ(zfcSparsePlanCreate(comm_, &cfg, &p), zfcSuccess);
    return p;
  }
  zfcComm_t comm_ = nullptr;
};

TEST_F(OneRankDeviceCalls, ReduceIntoDeviceBuffersMatchesTheHost) {
  const Step s = make_step(7, 900);
  DeviceVector<int32_t> d_idx(s.idx);
  DeviceVector<float> d_rows(s.rows);
  for (int algo : {zfcAlgoUniqueAllGather, zfcAlgoOwnerPartitioned, zfcAlgoKeyRouted}) {
    zfcSparsePlan_t p = plan(algo);
    const size_t cap = s.idx.size();
    std::vector<int32_t> want_idx(cap);
    std::vector<float> want_rows(cap * kDim);
    zfcSparseResult_t want = ZFC_SPARSE_RESULT_INITIALIZER, got = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduceInto(p, s.idx.data(), cap, s.rows.data(), want_idx.data(),
                                  want_rows.data(), cap, &want, nullptr),
              zfcSuccess);
    DeviceVector<int32_t> d_out_idx(cap);
    DeviceVector<float> d_out_rows(cap * kDim);
    ASSERT_EQ(zfcSparseReduceInto(p, d_idx.get(), cap, d_rows.get(), d_out_idx.get(),
                                  d_out_rows.get(), cap, &got, nullptr),
              zfcSuccess)
        << zfcGetLastError(nullptr);
    ASSERT_EQ(got.num_unique, want.num_unique);
    EXPECT_EQ(got.indices, static_cast<const void*>(d_out_idx.get()));
    const size_t u = want.num_unique;
    want_idx.resize(u);
    want_rows.resize(u * kDim);
    EXPECT_TRUE(same_bits(d_out_idx.to_host(u), want_idx)) << "algorithm " << algo;
    EXPECT_TRUE(same_bits(d_out_rows.to_host(u * kDim), want_rows)) << "algorithm " << algo;
    // Device outputs with host inputs: refused, naming both.
    EXPECT_EQ(zfcSparseReduceInto(p, s.idx.data(), cap, s.rows.data(), d_out_idx.get(),
                                  d_out_rows.get(), cap, &got, nullptr),
              zfcInvalidArgument);
    // In a group, refused alike (the group then fails).
    ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
    EXPECT_EQ(zfcSparseReduceInto(p, d_idx.get(), cap, d_rows.get(), d_out_idx.get(),
                                  d_out_rows.get(), cap, &got, nullptr),
              zfcSuccess);
    EXPECT_EQ(zfcGroupEnd(comm_), zfcUnsupported);
    EXPECT_EQ(zfcSparsePlanDestroy(p), zfcSuccess);
  }
}

TEST_F(OneRankDeviceCalls, ReduceApplyOnADeviceTableMatchesTheHost) {
  const Step s = make_step(9, 1200);
  DeviceVector<int32_t> d_idx(s.idx);
  DeviceVector<float> d_rows(s.rows);
  zfcRowUpdate_t u = ZFC_ROW_UPDATE_INITIALIZER;
  u.kind = zfcUpdateAdagrad;
  u.alpha = 0.05f;
  // key_routed streams its rows in rounds; owner_partitioned applies its whole result.
  for (int algo : {zfcAlgoKeyRouted, zfcAlgoOwnerPartitioned}) {
    zfcSparsePlan_t p = plan(algo);
    std::vector<float> table = table_values(3, -0.5f), state = table_values(4, 0.0f);
    DeviceVector<float> d_table(table), d_state(state);
    int over_host = -1, over_device = -1;
    ASSERT_EQ(zfcSparseReduceApply(p, s.idx.data(), s.idx.size(), s.rows.data(), &u,
                                   table.data(), state.data(), &over_host, nullptr),
              zfcSuccess);
    ASSERT_EQ(zfcSparseReduceApply(p, d_idx.get(), s.idx.size(), d_rows.get(), &u,
                                   d_table.get(), d_state.get(), &over_device, nullptr),
              zfcSuccess)
        << zfcGetLastError(nullptr);
    EXPECT_EQ(over_device, over_host);
    EXPECT_TRUE(same_bits(d_table.to_host(), table)) << "algorithm " << algo;
    EXPECT_TRUE(same_bits(d_state.to_host(), state)) << "algorithm " << algo;
    EXPECT_EQ(zfcSparsePlanDestroy(p), zfcSuccess);
  }
}

TEST_F(OneRankDeviceCalls, ShardedGatherAndApplyOnADeviceShardMatchTheHost) {
  const Step s = make_step(11, 800);
  size_t rows = 0;
  ASSERT_EQ(zfcShardRows(kVocab, 1, 0, &rows), zfcSuccess);
  zfcSparsePlan_t p = plan(zfcAlgoKeyRouted);
  std::vector<float> shard = table_values(6, -0.5f), state = table_values(8, 0.0f);
  shard.resize(rows * kDim);
  state.resize(rows * kDim);
  DeviceVector<float> d_shard(shard), d_state(state), d_rows(s.rows);
  DeviceVector<int32_t> d_idx(s.idx), d_pos(s.idx.size());
  std::vector<int32_t> pos(s.idx.size());
  zfcSparseResult_t want = ZFC_SPARSE_RESULT_INITIALIZER, got = ZFC_SPARSE_RESULT_INITIALIZER;
  ASSERT_EQ(zfcShardedGather(p, shard.data(), rows, s.idx.data(), s.idx.size(), &want,
                             pos.data(), nullptr),
            zfcSuccess);
  const size_t u = want.num_unique;
  const std::vector<float> want_rows(want.rows, want.rows + u * kDim);
  const int32_t* want_idx = static_cast<const int32_t*>(want.indices);
  const std::vector<int32_t> want_ids(want_idx, want_idx + u);
  ASSERT_EQ(zfcShardedGather(p, d_shard.get(), rows, d_idx.get(), s.idx.size(), &got,
                             d_pos.get(), nullptr),
            zfcSuccess)
      << zfcGetLastError(nullptr);
  ASSERT_EQ(got.num_unique, u);
  std::vector<int32_t> got_ids(u);
  std::vector<float> got_rows(u * kDim);
  ASSERT_TRUE(cuda::copy_to_host(got_ids.data(), got.indices, u * sizeof(int32_t), nullptr).ok());
  ASSERT_TRUE(
      cuda::copy_to_host(got_rows.data(), got.rows, u * kDim * sizeof(float), nullptr).ok());
  EXPECT_EQ(got_ids, want_ids);
  EXPECT_TRUE(same_bits(got_rows, want_rows));
  EXPECT_EQ(d_pos.to_host(), pos);

  zfcRowUpdate_t upd = ZFC_ROW_UPDATE_INITIALIZER;
  upd.kind = zfcUpdateAdagrad;
  upd.alpha = 0.1f;
  int over_host = -1, over_device = -1;
  ASSERT_EQ(zfcShardedReduceApply(p, s.idx.data(), s.idx.size(), s.rows.data(), &upd,
                                  shard.data(), state.data(), rows, &over_host, nullptr),
            zfcSuccess);
  ASSERT_EQ(zfcShardedReduceApply(p, d_idx.get(), s.idx.size(), d_rows.get(), &upd,
                                  d_shard.get(), d_state.get(), rows, &over_device, nullptr),
            zfcSuccess)
      << zfcGetLastError(nullptr);
  EXPECT_EQ(over_device, over_host);
  EXPECT_TRUE(same_bits(d_shard.to_host(), shard));
  EXPECT_TRUE(same_bits(d_state.to_host(), state));
  EXPECT_EQ(zfcSparsePlanDestroy(p), zfcSuccess);
}

}  // namespace
}  // namespace zfc
