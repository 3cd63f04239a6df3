// The public local operations on device buffers: the same results as on host buffers, the
// same argument checks, a clear error for a call that mixes host and device memory or passes
// another device's memory, and calls on two streams at once that do not disturb each other.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "device_test_util.hpp"
#include "kernels/cast.hpp"
#include "workload/random.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace {

using test::DeviceVector;

TEST(DeviceApi, ScatterToDenseMatchesTheHostCall) {
  ZFC_REQUIRE_GPU();
  const size_t n = 2000, dim = 64, m = 300;
  workload::SplitMix64 rng(21);
  std::vector<float> rows(n * dim);
  for (float& f : rows) f = static_cast<float>(rng.uniform() * 2 - 1);
  std::vector<int32_t> pos(n);
  for (int32_t& p : pos) p = static_cast<int32_t>(rng.below(m));
  std::vector<float> want(m * dim);
  ASSERT_EQ(zfcScatterToDense(rows.data(), zfcFloat32, pos.data(), n, dim, want.data(), m,
                              nullptr),
            zfcSuccess);
  DeviceVector<float> d_rows(rows), d_dense(m * dim);
  DeviceVector<int32_t> d_pos(pos);
  ASSERT_EQ(zfcScatterToDense(d_rows.get(), zfcFloat32, d_pos.get(), n, dim, d_dense.get(), m,
                              nullptr),
            zfcSuccess);
  const std::vector<float> got = d_dense.to_host();
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i])) << i;
  }
  // A bad position is reported before anything is written.
  pos[7] = static_cast<int32_t>(m);
  DeviceVector<int32_t> d_bad(pos);
  DeviceVector<float> d_untouched(std::vector<float>(m * dim, 5.0f));
  EXPECT_EQ(zfcScatterToDense(d_rows.get(), zfcFloat32, d_bad.get(), n, dim, d_untouched.get(),
                              m, nullptr),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("positions[7] = 300"),
            std::string::npos);
  EXPECT_EQ(d_untouched.to_host(), std::vector<float>(m * dim, 5.0f));
  // Host rows with device positions: refused, naming both.
  EXPECT_EQ(zfcScatterToDense(rows.data(), zfcFloat32, d_pos.get(), n, dim, d_dense.get(), m,
                              nullptr),
            zfcInvalidArgument);
  const std::string msg = zfcGetLastError(nullptr);
  EXPECT_NE(msg.find("positions is device memory but rows is not"), std::string::npos) << msg;
}

TEST(DeviceApi, ApplyRowsMatchesTheHostCall) {
  ZFC_REQUIRE_GPU();
  const size_t dim = 8;
  std::vector<float> small_table(4 * dim, 1.0f), rows(2 * dim, 2.0f);
  const std::vector<int32_t> idx = {3, 1};
  std::vector<float> want = small_table;
  ASSERT_EQ(zfcApplyRows(want.data(), 4, dim, idx.data(), zfcInt32, rows.data(), 2, -0.5f,
                         nullptr),
            zfcSuccess);
  DeviceVector<float> d_table(small_table), d_rows(rows);
  DeviceVector<int32_t> d_idx(idx);
  ASSERT_EQ(zfcApplyRows(d_table.get(), 4, dim, d_idx.get(), zfcInt32, d_rows.get(), 2, -0.5f,
                         nullptr),
            zfcSuccess);
  EXPECT_EQ(d_table.to_host(), want);
  DeviceVector<int32_t> d_bad(std::vector<int32_t>{0, 4});
  EXPECT_EQ(zfcApplyRows(d_table.get(), 4, dim, d_bad.get(), zfcInt32, d_rows.get(), 2, 1.0f,
                         nullptr),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("indices[1] = 4"), std::string::npos);
  EXPECT_EQ(d_table.to_host(), want);
}

// Host references and device copies of one scatter-to-dense call.
struct ScatterCase {
  size_t n, dim, m;
  std::vector<float> rows, want;
  std::vector<int32_t> pos;
};

ScatterCase make_scatter_case(uint64_t seed, size_t n, size_t dim, size_t m) {
  ScatterCase c{n, dim, m, std::vector<float>(n * dim), std::vector<float>(m * dim),
                std::vector<int32_t>(n)};
  workload::SplitMix64 rng(seed);
  for (float& f : c.rows) f = static_cast<float>(rng.uniform() * 2 - 1);
  for (int32_t& p : c.pos) p = static_cast<int32_t>(rng.below(m));
  EXPECT_EQ(zfcScatterToDense(c.rows.data(), zfcFloat32, c.pos.data(), n, dim, c.want.data(),
                              m, nullptr),
            zfcSuccess);
  return c;
}

// Two streams, each with its own long scatter-to-dense queued while the other's call is
// made: every call's scratch is its own, so both results keep the host's bits (one scratch
// block per thread, shared by both, let them overwrite each other's).
TEST(DeviceApi, CallsOnTwoStreamsDoNotShareScratch) {
  ZFC_REQUIRE_GPU();
  cudaStream_t streams[2] = {nullptr, nullptr};
  for (cudaStream_t& st : streams) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
  }
  const ScatterCase cases[2] = {make_scatter_case(31, 400000, 64, 5000),
                                make_scatter_case(32, 400000, 64, 7000)};
  for (int round = 0; round < 4; ++round) {
    std::vector<std::unique_ptr<DeviceVector<float>>> rows, dense;
    std::vector<std::unique_ptr<DeviceVector<int32_t>>> pos;
    for (int k = 0; k < 2; ++k) {
      rows.push_back(std::make_unique<DeviceVector<float>>(cases[k].rows));
      pos.push_back(std::make_unique<DeviceVector<int32_t>>(cases[k].pos));
      dense.push_back(std::make_unique<DeviceVector<float>>(cases[k].m * cases[k].dim));
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int k = 0; k < 2; ++k) {
      const ScatterCase& c = cases[k];
      ASSERT_EQ(zfcScatterToDense(rows[k]->get(), zfcFloat32, pos[k]->get(), c.n, c.dim,
                                  dense[k]->get(), c.m, streams[k]),
                zfcSuccess)
          << zfcGetLastError(nullptr);
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (int k = 0; k < 2; ++k) {
      EXPECT_TRUE(test::same_bits(dense[k]->to_host(), cases[k].want))
          << "round " << round << ", stream " << k;
    }
  }
  for (cudaStream_t st : streams) cudaStreamDestroy(st);
}

// zipfcoll's kernels run on the current device: memory of another device is refused, naming
// it, before anything is written.
TEST(DeviceApi, MemoryOfAnotherDeviceIsRefused) {
  ZFC_REQUIRE_GPU();
  if (cuda::device_count() < 2) GTEST_SKIP() << "needs two GPUs";
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  DeviceVector<float> d_table(std::vector<float>(16, 1.0f)), d_rows(std::vector<float>(8, 2.0f));
  DeviceVector<int32_t> d_idx(std::vector<int32_t>{0, 1});
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(zfcApplyRows(d_table.get(), 2, 8, d_idx.get(), zfcInt32, d_rows.get(), 1, 1.0f,
                         nullptr),
            zfcInvalidArgument);
  const std::string msg = zfcGetLastError(nullptr);
  EXPECT_NE(msg.find("table is memory of CUDA device 1, but the current device is 0"),
            std::string::npos)
      << msg;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  EXPECT_EQ(d_table.to_host(), std::vector<float>(16, 1.0f));
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
}

}  // namespace
}  // namespace zfc
