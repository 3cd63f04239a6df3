// The bounded step (algo/bounded_reduce.cpp) never reads a size back from the memory space of
// its kernels: run on the host kernels, which count their fetches (on a device each would be
// a wait for the stream), it makes none, where the key-routed step's local phase alone makes
// one. Its result on one rank is the reference's; on three mirrored ranks the verdict and the
// padding hold.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "algo/bounded_reduce.hpp"
#include "algo/index_set.hpp"
#include "core/comm.hpp"
#include "unit/mirror_transport.hpp"

namespace zfc {
namespace {

using test::MirrorTransport;

constexpr size_t kDim = 3;
constexpr int64_t kVocab = 50;

struct StepResult {
  zfcBoundedStatus_t status{-1, -1, -1};
  std::vector<int32_t> ids;
  std::vector<float> rows;
  uint32_t fetches = 0;
};

StepResult run_step(int ranks, const std::vector<int32_t>& indices,
                    const std::vector<float>& rows, size_t capacity) {
  std::unique_ptr<zfcComm> comm = comm_wrap(std::make_unique<MirrorTransport>(ranks), Config{});
  Workspace ws;
  PlanSpec spec;
  spec.dim = kDim;
  spec.vocab = kVocab;
  spec.algorithm = zfcAlgoUniqueAllReduce;
  HostStepKernels<uint32_t> k(ws);
  BoundedLocal<uint32_t> local;
  EXPECT_TRUE(bounded_local(k, kVocab, indices.data(), zfcInt32, indices.size(), true, &local)
                  .ok());
  std::vector<OpHeader> headers(static_cast<size_t>(ranks));
  for (OpHeader& h : headers) h.count = static_cast<int64_t>(indices.size());
  StepResult out;
  out.ids.assign(capacity, 99);
  out.rows.assign(capacity * kDim, -3.0f);
  const BoundedOutput where{out.ids.data(), zfcInt32, out.rows.data(), capacity, &out.status};
  zfcOpStats_t op{};
  const BoundedStep step{*comm->transport, nullptr, ws, spec, &op};
  const BoundedVerdict* verdict = nullptr;
  const Status s = bounded_exchange(step, k, local, headers.data(), rows.data(), where, &verdict);
  EXPECT_TRUE(s.ok()) << s.message();
  out.fetches = k.fetches();
  return out;
}

TEST(BoundedStep, ReadsNothingBackAndMatchesTheReference) {
  const std::vector<int32_t> indices = {7, 3, 7, 41, 0, 3, 7, 12};
  std::vector<float> rows(indices.size() * kDim);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.5f * static_cast<float>(i) - 2.0f;
  std::map<int32_t, std::vector<float>> want;
  for (size_t t = 0; t < indices.size(); ++t) {
    std::vector<float>& sum = want.emplace(indices[t], std::vector<float>(kDim, 0.0f)).first->second;
    for (size_t d = 0; d < kDim; ++d) sum[d] += rows[t * kDim + d];
  }
  const size_t capacity = want.size() + 2;
  const StepResult got = run_step(1, indices, rows, capacity);
  EXPECT_EQ(got.fetches, 0u);
  EXPECT_EQ(got.status.result, zfcSuccess);
  ASSERT_EQ(got.status.num_unique, static_cast<int64_t>(want.size()));
  size_t p = 0;
  for (const auto& [id, sum] : want) {
    EXPECT_EQ(got.ids[p], id);
    for (size_t d = 0; d < kDim; ++d) EXPECT_EQ(got.rows[p * kDim + d], sum[d]) << id;
    ++p;
  }
  for (; p < capacity; ++p) {
    EXPECT_EQ(got.ids[p], -1);
    for (size_t d = 0; d < kDim; ++d) EXPECT_EQ(got.rows[p * kDim + d], 0.0f);
  }
  // The counter counts: the key-routed step's local phase reads U_i and the bad index back.
  Workspace ws;
  HostStepKernels<uint32_t> k(ws);
  IndexSet<uint32_t> set(ws, kVocab);
  ASSERT_TRUE(set.load(k, indices.data(), zfcInt32, indices.size(), true, true).ok());
  EXPECT_EQ(k.fetches(), 1u);
}

TEST(BoundedStep, OverCapacityAndBadIndexLeaveTheBuffers) {
  const std::vector<int32_t> indices = {5, 6, 7, 8};
  const std::vector<float> rows(indices.size() * kDim, 1.0f);
  const StepResult small = run_step(3, indices, rows, 3);
  EXPECT_EQ(small.fetches, 0u);
  EXPECT_EQ(small.status.result, zfcInvalidArgument);
  EXPECT_EQ(small.status.num_unique, 4);
  EXPECT_EQ(small.ids, std::vector<int32_t>(3, 99));
  EXPECT_EQ(small.rows, std::vector<float>(3 * kDim, -3.0f));
  const std::vector<int32_t> bad = {5, 6, kVocab, 8};
  const StepResult b = run_step(3, bad, rows, 10);
  EXPECT_EQ(b.fetches, 0u);
  EXPECT_EQ(b.status.result, zfcInvalidArgument);
  EXPECT_EQ(b.ids, std::vector<int32_t>(10, 99));
  // Three mirrored ranks with room: the same keys, the rows summed three times.
  const StepResult fits = run_step(3, indices, rows, 6);
  EXPECT_EQ(fits.status.result, zfcSuccess);
  EXPECT_EQ(fits.status.num_unique, 4);
  EXPECT_EQ(fits.ids, (std::vector<int32_t>{5, 6, 7, 8, -1, -1}));
}

}  // namespace
}  // namespace zfc
