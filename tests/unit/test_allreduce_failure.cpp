// "On failure no caller buffer has been modified": zfcAllReduce's recv stays as it was when
// a transfer fails, on every wire, including the last transfer of the fp32 path. The ranks'
// peers are simulated by a transport that mirrors this rank's data and fails on request.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "algo/allreduce_call.hpp"
#include "core/comm.hpp"
#include "unit/mirror_transport.hpp"

namespace zfc {
namespace {

using test::MirrorTransport;

std::unique_ptr<zfcComm> mirror_comm(int size, int fail_at) {
  return comm_wrap(std::make_unique<MirrorTransport>(size, fail_at), Config{});
}

class AllReduceFailure
    : public ::testing::TestWithParam<std::tuple<zfcCompressionKind_t, int>> {};

TEST_P(AllReduceFailure, LeavesRecvUntouched) {
  const auto [kind, fail_at] = GetParam();
  const size_t n = 1001;  // not a multiple of the rank count
  std::vector<float> send(n), recv(n, -7.5f);
  for (size_t i = 0; i < n; ++i) send[i] = 0.25f * static_cast<float>(i % 13);
  const zfcCompression_t how{kind, kind == zfcCompressNone ? 1.0f : 4.0f};
  std::unique_ptr<zfcComm> comm = mirror_comm(3, fail_at);
  int overflowed = 5;
  const Status s = allreduce(*comm, send.data(), recv.data(), n, zfcFloat32, &how, &overflowed,
                             nullptr);
  EXPECT_EQ(s.code(), zfcTransportError) << s.message();
  EXPECT_EQ(recv, std::vector<float>(n, -7.5f));
  EXPECT_EQ(overflowed, 5);
}

INSTANTIATE_TEST_SUITE_P(EveryWireAndTransfer, AllReduceFailure,
                         ::testing::Combine(::testing::Values(zfcCompressNone, zfcCompressFp16,
                                                              zfcCompressBf16, zfcCompressInt8,
                                                              zfcCompressFp8E4M3Stochastic),
                                            ::testing::Values(1, 2, 3)));

TEST(AllReduceMirror, SucceedsWithTheMirroredSum) {
  // The same transport without a failure, on equal values (so that every rank's share of
  // the result is the same): 3 times this rank's value, so the failure cases above fail in
  // the transfer, not for another reason.
  const size_t n = 999;
  std::vector<float> send(n, 1.5f), recv(n, 0.0f);
  std::unique_ptr<zfcComm> comm = mirror_comm(3, 0);
  int overflowed = 5;
  const Status s = allreduce(*comm, send.data(), recv.data(), n, zfcFloat32, nullptr,
                             &overflowed, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(recv, std::vector<float>(n, 4.5f));
  EXPECT_EQ(overflowed, 0);
}

}  // namespace
}  // namespace zfc
