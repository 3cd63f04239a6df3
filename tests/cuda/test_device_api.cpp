// The public local operations on device buffers: the same results as on host buffers, the
// same argument checks, and a clear error for a call that mixes host and device memory.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace zfc
