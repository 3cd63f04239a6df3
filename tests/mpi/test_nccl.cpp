// The NCCL transport: how a communicator over it is opened or refused, on every rank alike,
// and, on a machine with a GPU per rank, its collectives on device buffers against the same
// calls over MPI on host buffers. NCCL is started over MPI, or over the library's own
// bootstrap in the *_ucx_* runs.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/mpi_world.hpp"
#include "device_test_util.hpp"
#include "resident_step_check.hpp"
#include "transport/nccl/nccl_transport.hpp"

namespace zfc {
namespace {

using test::DeviceVector;

zfcConfig_t nccl_config() {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.transport = zfcTransportNccl;
  if (cuda::device_count() > 0) cfg.device = test::world_rank() % cuda::device_count();
  return cfg;
}

// Whether NCCL can start here: built in, and a GPU for every rank (NCCL refuses two ranks on
// one device).
bool nccl_can_start() {
  return nccl_transport_available() && cuda::device_count() >= test::world_size();
}

TEST(NcclTransport, OpensOnEveryRankOrRefusesAlike) {
  const zfcConfig_t cfg = nccl_config();
  zfcComm_t comm = nullptr;
  const zfcResult_t r = test::open_world_comm(&comm, &cfg);
  const std::string why = zfcGetLastError(nullptr);
  EXPECT_TRUE(test::same_on_all_ranks(static_cast<uint64_t>(r))) << why;
  if (nccl_can_start()) {
    ASSERT_EQ(r, zfcSuccess) << why;
    EXPECT_EQ(zfcCommDestroy(comm), zfcSuccess);
    return;
  }
  EXPECT_EQ(comm, nullptr);
  if (!nccl_transport_available() || cuda::device_count() == 0) {
    // Every rank names the first rank that could not start it, and why.
    EXPECT_EQ(r, zfcUnsupported) << why;
    EXPECT_NE(why.find("rank 0"), std::string::npos) << why;
    EXPECT_TRUE(why.find("no device for the NCCL transport") != std::string::npos ||
                why.find("built without the NCCL transport") != std::string::npos)
        << why;
  } else {
    EXPECT_NE(r, zfcSuccess) << "ranks sharing one GPU: NCCL refuses them";
  }
}

TEST(NcclTransport, EveryRankMustAskForIt) {
  if (test::world_size() < 2) GTEST_SKIP() << "a disagreement needs a second rank";
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  if (test::world_rank() == 0) cfg = nccl_config();
  zfcComm_t comm = nullptr;
  const zfcResult_t r = test::open_world_comm(&comm, &cfg);
  const std::string why = zfcGetLastError(nullptr);
  EXPECT_EQ(r, zfcMismatch) << why;
  EXPECT_NE(why.find("config transport differs"), std::string::npos) << why;
  EXPECT_EQ(comm, nullptr);
}

TEST(NcclTransport, DeviceIsForNcclOnly) {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.device = 0;
  zfcComm_t comm = nullptr;
  EXPECT_EQ(test::open_world_comm(&comm, &cfg), zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("config device 0"), std::string::npos);
  cfg = nccl_config();
  cfg.device = -2;
  EXPECT_EQ(test::open_world_comm(&comm, &cfg), zfcInvalidArgument);
  EXPECT_EQ(comm, nullptr);
}

// The rest needs NCCL running: a GPU per rank.
class NcclWorld : public ::testing::Test {
 protected:
  void SetUp() override {
    ZFC_REQUIRE_GPU();
    if (!nccl_can_start()) {
      GTEST_SKIP() << "NCCL needs a GPU per rank: " << cuda::device_count() << " for "
                   << test::world_size() << " ranks";
    }
    const zfcConfig_t cfg = nccl_config();
    ASSERT_EQ(test::open_world_comm(&nccl_, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
    ASSERT_EQ(test::open_world_comm(&host_, nullptr), zfcSuccess) << zfcGetLastError(nullptr);
    rank_ = test::world_rank();
  }
  void TearDown() override {
    if (nccl_ != nullptr) EXPECT_EQ(zfcCommDestroy(nccl_), zfcSuccess);
    if (host_ != nullptr) EXPECT_EQ(zfcCommDestroy(host_), zfcSuccess);
  }
  zfcComm_t nccl_ = nullptr;
  zfcComm_t host_ = nullptr;
  int rank_ = 0;
};

TEST_F(NcclWorld, DeviceAllReduceMatchesHostOverMpi) {
  const std::vector<float> send = test::random_rows(10007, 1, 6, rank_);
  for (zfcCompressionKind_t kind : {zfcCompressNone, zfcCompressFp16, zfcCompressBf16}) {
    const zfcCompression_t how{kind, kind == zfcCompressFp16 ? 256.0f : 1.0f};
    std::vector<float> host_recv(send.size());
    int host_over = -1, dev_over = -1;
    ASSERT_EQ(zfcAllReduce(host_, send.data(), host_recv.data(), send.size(), zfcFloat32, &how,
                           &host_over, nullptr),
              zfcSuccess);
    DeviceVector<float> d_buf(send);
    ASSERT_EQ(zfcAllReduce(nccl_, d_buf.get(), d_buf.get(), send.size(), zfcFloat32, &how,
                           &dev_over, nullptr),
              zfcSuccess)
        << zfcGetLastError(nccl_);
    EXPECT_EQ(dev_over, host_over);
    EXPECT_TRUE(test::same_bits(d_buf.to_host(), host_recv)) << kind;
  }
}

TEST_F(NcclWorld, SparseReduceOnDeviceBuffersMatchesHostOverMpi) {
  const size_t dim = 32, count = 500;
  const int64_t vocab = 20000;
  const workload::ZipfDistribution zipf(1.1, vocab);
  const std::vector<int64_t> idx = test::zipf_indices(zipf, count, 3, rank_);
  const std::vector<float> rows = test::random_rows(count, dim, 4, rank_);
  DeviceVector<int64_t> d_idx(idx);
  DeviceVector<float> d_rows(rows);
  for (zfcAlgorithm_t algo : {zfcAlgoUniqueAllReduce, zfcAlgoOwnerPartitioned}) {
    zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
    cfg.dim = dim;
    cfg.vocab_size = vocab;
    cfg.index_type = zfcInt64;
    cfg.algorithm = algo;
    zfcSparsePlan_t host_plan = nullptr, dev_plan = nullptr;
    ASSERT_EQ(zfcSparsePlanCreate(host_, &cfg, &host_plan), zfcSuccess);
    ASSERT_EQ(zfcSparsePlanCreate(nccl_, &cfg, &dev_plan), zfcSuccess);
    zfcSparseResult_t h = ZFC_SPARSE_RESULT_INITIALIZER, d = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduce(host_plan, idx.data(), count, rows.data(), &h, nullptr),
              zfcSuccess);
    ASSERT_EQ(zfcSparseReduce(dev_plan, d_idx.get(), count, d_rows.get(), &d, nullptr),
              zfcSuccess)
        << zfcGetLastError(nccl_);
    ASSERT_EQ(d.num_unique, h.num_unique);
    std::vector<float> d_out(d.num_unique * dim);
    ASSERT_TRUE(cuda::copy_to_host(d_out.data(), d.rows, d_out.size() * sizeof(float), nullptr)
                    .ok());
    EXPECT_TRUE(test::same_bits(d_out, std::vector<float>(h.rows, h.rows + h.num_unique * dim)))
        << zfcGetAlgorithmName(algo);
    EXPECT_EQ(zfcSparsePlanDestroy(host_plan), zfcSuccess);
    EXPECT_EQ(zfcSparsePlanDestroy(dev_plan), zfcSuccess);
  }
}

// Device buffers over NCCL with unique_allreduce (asked for, or chosen by zfcAlgoAuto) and
// key_routed: the local phases run on the device and the transport is given device memory.
// The result has the host's bits, and the statistics say where each phase ran.
TEST_F(NcclWorld, DeviceResidentStepsMatchHost) {
  const size_t dim = 48, count = 700;
  const int64_t vocab = 30000;
  const workload::ZipfDistribution zipf(1.1, vocab);
  test::expect_resident_step_matches_host(host_, nccl_, test::zipf_indices(zipf, count, 5, rank_),
                                          test::random_rows(count, dim, 6, rank_), dim, vocab);
}

TEST_F(NcclWorld, SplitGivesAWorkingNcclCommunicator) {
  zfcComm_t half = nullptr;
  ASSERT_EQ(zfcCommSplit(nccl_, rank_ % 2, rank_, &half), zfcSuccess) << zfcGetLastError(nccl_);
  ASSERT_NE(half, nullptr);
  std::vector<float> v(1000, 1.0f);
  DeviceVector<float> d_v(v);
  ASSERT_EQ(zfcAllReduce(half, d_v.get(), d_v.get(), v.size(), zfcFloat32, nullptr, nullptr,
                         nullptr),
            zfcSuccess)
      << zfcGetLastError(half);
  int members = 0;
  ASSERT_EQ(zfcCommCount(half, &members), zfcSuccess);
  EXPECT_EQ(d_v.to_host(1)[0], static_cast<float>(members));
  EXPECT_EQ(zfcCommDestroy(half), zfcSuccess);
}

// Every call on an NCCL communicator leaves the caller's thread on the device it was on,
// whichever device the communicator runs on: its creation, a collective (host buffers,
// staged through its device), a split and its destruction.
TEST(NcclOnGpus, CallsLeaveTheCallersDeviceCurrent) {
  ZFC_REQUIRE_GPU();
  if (!nccl_can_start() || cuda::device_count() < 2) {
    GTEST_SKIP() << "needs a GPU per rank and a second GPU to be current";
  }
  const zfcConfig_t cfg = nccl_config();
  const int other = (cfg.device + 1) % cuda::device_count();
  ASSERT_EQ(cudaSetDevice(other), cudaSuccess);
  zfcComm_t comm = nullptr;
  ASSERT_EQ(test::open_world_comm(&comm, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
  EXPECT_EQ(cuda::current_device(), other) << "after zfcCommInitMpi / zfcCommInitRank";
  std::vector<float> v(100, 1.0f), sum(100);
  ASSERT_EQ(zfcAllReduce(comm, v.data(), sum.data(), v.size(), zfcFloat32, nullptr, nullptr,
                         nullptr),
            zfcSuccess)
      << zfcGetLastError(comm);
  EXPECT_EQ(sum[0], static_cast<float>(test::world_size()));
  EXPECT_EQ(cuda::current_device(), other) << "after zfcAllReduce";
  zfcComm_t same = nullptr;
  ASSERT_EQ(zfcCommSplit(comm, 0, 0, &same), zfcSuccess) << zfcGetLastError(comm);
  EXPECT_EQ(cuda::current_device(), other) << "after zfcCommSplit";
  EXPECT_EQ(zfcCommDestroy(same), zfcSuccess);
  EXPECT_EQ(zfcCommDestroy(comm), zfcSuccess);
  EXPECT_EQ(cuda::current_device(), other) << "after zfcCommDestroy";
}

// An aborted NCCL communicator is freed at once, without its peers: every rank aborts, and a
// new communicator on the same devices works.
TEST(NcclOnGpus, AbortThenANewCommunicatorWorks) {
  ZFC_REQUIRE_GPU();
  if (!nccl_can_start()) GTEST_SKIP() << "needs a GPU per rank";
  const zfcConfig_t cfg = nccl_config();
  zfcComm_t comm = nullptr;
  ASSERT_EQ(test::open_world_comm(&comm, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
  EXPECT_EQ(zfcCommAbort(comm), zfcSuccess);
  ASSERT_EQ(test::open_world_comm(&comm, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
  float v = 1.0f, sum = 0.0f;
  ASSERT_EQ(zfcAllReduce(comm, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr), zfcSuccess)
      << zfcGetLastError(comm);
  EXPECT_EQ(sum, static_cast<float>(test::world_size()));
  EXPECT_EQ(zfcCommDestroy(comm), zfcSuccess);
}

}  // namespace
}  // namespace zfc
