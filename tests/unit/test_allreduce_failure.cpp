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

namespace zfc {
namespace {

// `size` ranks, this one rank 0, every peer sending what this rank sends; data operation
// number `fail_at` (1: the header allgather, 2: the reduce-scatter, 3: the gather) fails.
class MirrorTransport final : public Transport {
 public:
  MirrorTransport(int size, int fail_at) : Transport(0, size), fail_at_(fail_at) {}
  const char* name() const override { return "mirror"; }
  Status split(int, int, std::unique_ptr<Transport>*) override {
    return error(zfcUnsupported, "mirror transport: no split");
  }
  void abandon() override {}

 protected:
  Status do_allgather(const void* send, size_t bytes, void* recv) override {
    ZFC_RETURN_IF_ERROR(step());
    for (int r = 0; r < size(); ++r) std::memmove(at(recv, r * bytes), send, bytes);
    return Status::Ok();
  }
  Status do_allgatherv(const void* send, void* recv, const size_t* bytes,
                       const size_t* displs) override {
    ZFC_RETURN_IF_ERROR(step());
    // Peer r's block is taken to equal this rank's (true when every element of the result
    // is equal; a longer block ends in zeros).
    for (int r = 0; r < size(); ++r) {
      std::memset(at(recv, displs[r]), 0, bytes[r]);
      std::memcpy(at(recv, displs[r]), send, std::min(bytes[r], bytes[0]));
    }
    return Status::Ok();
  }
  Status do_alltoallv(const void* send, const size_t* send_bytes, const size_t* send_displs,
                      void* recv, const size_t* recv_bytes,
                      const size_t* recv_displs) override {
    ZFC_RETURN_IF_ERROR(step());
    // Every peer sends this rank what this rank sends itself.
    for (int r = 0; r < size(); ++r) {
      std::memcpy(at(recv, recv_displs[r]), static_cast<const char*>(send) + send_displs[0],
                  std::min(recv_bytes[r], send_bytes[0]));
    }
    return Status::Ok();
  }
  Status do_barrier() override { return step(); }

 private:
  static char* at(void* base, size_t offset) { return static_cast<char*>(base) + offset; }
  Status step() {
    if (++ops_ == fail_at_) return error(zfcTransportError, "injected failure of operation %d",
                                         ops_);
    return Status::Ok();
  }
  int fail_at_;
  int ops_ = 0;
};

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
                                                              zfcCompressBf16),
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
