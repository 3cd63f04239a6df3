// The collectives on device buffers over MPI (ranks may share one GPU): every result equals,
// bit for bit, the result of the same call on host buffers, on 1, 2 and 4 ranks. Skips, saying
// why, without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/mpi_world.hpp"
#include "device_test_util.hpp"

namespace zfc {
namespace {

using test::DeviceVector;

class DeviceCollectives : public test::WorldTest {};

TEST_F(DeviceCollectives, UniqueMergeMatchesHostBuffers) {
  ZFC_REQUIRE_GPU();
  const workload::ZipfDistribution zipf(1.1, 20000);
  const std::vector<int64_t> idx = test::zipf_indices(zipf, 700, 5, rank_);
  const size_t cap = 700 * static_cast<size_t>(size_);
  std::vector<int64_t> host_unique(cap);
  std::vector<int32_t> host_pos(idx.size());
  size_t host_u = 0, dev_u = 0;
  ASSERT_EQ(zfcUniqueMerge(comm_, idx.data(), zfcInt64, idx.size(), 20000, host_unique.data(),
                           cap, &host_u, host_pos.data(), nullptr),
            zfcSuccess);
  DeviceVector<int64_t> d_idx(idx), d_unique(cap);
  DeviceVector<int32_t> d_pos(idx.size());
  ASSERT_EQ(zfcUniqueMerge(comm_, d_idx.get(), zfcInt64, idx.size(), 20000, d_unique.get(), cap,
                           &dev_u, d_pos.get(), nullptr),
            zfcSuccess)
      << zfcGetLastError(comm_);
  ASSERT_EQ(dev_u, host_u);
  host_unique.resize(host_u);
  EXPECT_TRUE(test::same_bits(d_unique.to_host(host_u), host_unique));
  EXPECT_TRUE(test::same_bits(d_pos.to_host(), host_pos));
}

TEST_F(DeviceCollectives, AllReduceMatchesHostBuffers) {
  ZFC_REQUIRE_GPU();
  const std::vector<float> send = test::random_rows(10007, 1, 6, rank_);
  for (zfcCompressionKind_t kind : {zfcCompressNone, zfcCompressFp16, zfcCompressBf16}) {
    const zfcCompression_t how{kind, kind == zfcCompressFp16 ? 256.0f : 1.0f};
    std::vector<float> host_recv(send.size());
    int host_over = -1, dev_over = -1;
    ASSERT_EQ(zfcAllReduce(comm_, send.data(), host_recv.data(), send.size(), zfcFloat32, &how,
                           &host_over, nullptr),
              zfcSuccess);
    DeviceVector<float> d_buf(send);  // in place on the device
    ASSERT_EQ(zfcAllReduce(comm_, d_buf.get(), d_buf.get(), send.size(), zfcFloat32, &how,
                           &dev_over, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    EXPECT_EQ(dev_over, host_over);
    EXPECT_TRUE(test::same_bits(d_buf.to_host(), host_recv)) << kind;
  }
}

TEST_F(DeviceCollectives, SparseReduceMatchesHostBuffersForEveryAlgorithm) {
  ZFC_REQUIRE_GPU();
  const size_t dim = 48, count = 640;
  const int64_t vocab = 30000;
  const workload::ZipfDistribution zipf(1.1, vocab);
  const std::vector<int64_t> idx64 = test::zipf_indices(zipf, count, 7, rank_);
  const std::vector<int32_t> idx(idx64.begin(), idx64.end());
  const std::vector<float> rows = test::random_rows(count, dim, 8, rank_);
  DeviceVector<int32_t> d_idx(idx);
  DeviceVector<float> d_rows(rows);
  for (zfcAlgorithm_t algo : {zfcAlgoAllGather, zfcAlgoUniqueAllReduce, zfcAlgoUniqueAllGather,
                              zfcAlgoDenseVocab, zfcAlgoAuto}) {
    zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
    cfg.dim = dim;
    cfg.vocab_size = vocab;
    cfg.algorithm = algo;
    zfcSparsePlan_t host_plan = nullptr, dev_plan = nullptr;
    ASSERT_EQ(zfcSparsePlanCreate(comm_, &cfg, &host_plan), zfcSuccess);
    ASSERT_EQ(zfcSparsePlanCreate(comm_, &cfg, &dev_plan), zfcSuccess);
    zfcSparseResult_t h = ZFC_SPARSE_RESULT_INITIALIZER, d = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduce(host_plan, idx.data(), count, rows.data(), &h, nullptr),
              zfcSuccess);
    ASSERT_EQ(zfcSparseReduce(dev_plan, d_idx.get(), count, d_rows.get(), &d, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    ASSERT_EQ(d.num_unique, h.num_unique);
    EXPECT_EQ(d.algorithm, h.algorithm);
    EXPECT_TRUE(cuda::is_device_pointer(d.rows));
    std::vector<int32_t> got_idx(d.num_unique);
    std::vector<float> got_rows(d.num_unique * dim);
    ASSERT_TRUE(cuda::copy_to_host(got_idx.data(), d.indices, got_idx.size() * 4, nullptr).ok());
    ASSERT_TRUE(
        cuda::copy_to_host(got_rows.data(), d.rows, got_rows.size() * 4, nullptr).ok());
    const auto* hi = static_cast<const int32_t*>(h.indices);
    EXPECT_TRUE(test::same_bits(got_idx, std::vector<int32_t>(hi, hi + h.num_unique))) << algo;
    EXPECT_TRUE(test::same_bits(got_rows, std::vector<float>(h.rows, h.rows + h.num_unique * dim)))
        << algo;
    zfcSparsePlanDestroy(host_plan);
    zfcSparsePlanDestroy(dev_plan);
  }
}

TEST_F(DeviceCollectives, MixedBuffersFailOnEveryRank) {
  ZFC_REQUIRE_GPU();
  const std::vector<float> send(16, 1.0f);
  std::vector<float> host_recv(16);
  DeviceVector<float> d_send(send);
  // Rank 0 mixes device send with host recv; the others pass host buffers: all fail alike.
  const float* s = rank_ == 0 ? d_send.get() : send.data();
  EXPECT_EQ(zfcAllReduce(comm_, s, host_recv.data(), 16, zfcFloat32, nullptr, nullptr, nullptr),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("send is device memory"),
            std::string::npos)
      << zfcGetLastError(comm_);
}

}  // namespace
}  // namespace zfc
