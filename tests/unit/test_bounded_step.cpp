// The bounded step (algo/bounded_reduce.cpp) never reads a size back from the memory space of
// its kernels: run on the host kernels, which count their fetches (on a device each would be
// a wait for the stream), it makes none, where the key-routed step's local phase alone makes
// one. Its result on one rank is the reference's; on three mirrored ranks the verdict and the
// padding hold.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "algo/bounded_reduce.hpp"
#include "core/async_errors.hpp"
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
  StepResult out;
  out.ids.assign(capacity, 99);
  out.rows.assign(capacity * kDim, -3.0f);
  const BoundedOutput where{out.ids.data(), zfcInt32, out.rows.data(), capacity, &out.status};
  zfcOpStats_t op{};
  const BoundedStep step{*comm->transport, nullptr, ws, spec, &op};
  const BoundedVerdict* verdict = nullptr;
  const Status s =
      bounded_exchange(step, k, local, nullptr, nullptr, rows.data(), where, &verdict);
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
  // Each rank alone has more distinct indices than the capacity, so its block holds three of
  // them: U_g (4) is still known, from the ranks' leads.
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

// Headers of `ranks` ranks in one bounded call that agrees in its kernels.
std::vector<OpHeader> agreeing_headers(int ranks) {
  std::vector<OpHeader> h(static_cast<size_t>(ranks));
  for (size_t r = 0; r < h.size(); ++r) {
    h[r] = make_header(OpKind::kSparseBounded);
    h[r].count = static_cast<int64_t>(10 + r);  // may differ
    h[r].capacity = 64;
    h[r].dim = 4;
    h[r].vocab = 1000;
    h[r].key = kAgreedInKernels;
    h[r].sequence = 7;
  }
  return h;
}

TEST(BoundedStep, AgreementInKernelsNamesTheRankAndTheField) {
  std::vector<uint64_t> sizes(4, sizeof(OpHeader));
  std::vector<OpHeader> h = agreeing_headers(4);
  BoundedVerdict v = bounded_agreement_of(h.data(), sizes.data(), 4);
  EXPECT_EQ(v.result, zfcSuccess);
  // A capacity changed on rank 2 (that rank agreed on the host instead: key 0 as well).
  h[2].capacity = 80;
  h[2].key = 0;
  v = bounded_agreement_of(h.data(), sizes.data(), 4);
  EXPECT_EQ(v.result, zfcMismatch);
  EXPECT_EQ(v.rank, 2);
  EXPECT_EQ(v.reason, kBoundedDisagree);
  EXPECT_EQ(v.detail, static_cast<int64_t>(offsetof(OpHeader, capacity)));
  EXPECT_EQ(v.v0, 64);
  EXPECT_EQ(v.vr, 80);
  EXPECT_NE(describe_verdict(v, 1000).find("rank 2's call differs from rank 0's in its "
                                           "capacity: rank 0 has 64, rank 2 has 80"),
            std::string::npos)
      << describe_verdict(v, 1000);
  // A rank whose own checks failed is named before any field.
  h[3].status = zfcInvalidArgument;
  v = bounded_agreement_of(h.data(), sizes.data(), 4);
  EXPECT_EQ(v.result, zfcInvalidArgument);
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.reason, kBoundedRankFailed);
  // A rank out of step, before that.
  h[1].sequence = 8;
  v = bounded_agreement_of(h.data(), sizes.data(), 4);
  EXPECT_EQ(v.result, zfcMismatch);
  EXPECT_EQ(v.rank, 1);
  EXPECT_EQ(v.detail, static_cast<int64_t>(offsetof(OpHeader, sequence)));
  // A block that is no header (another size), before everything.
  sizes[3] = sizeof(OpHeader) + 8;
  v = bounded_agreement_of(h.data(), sizes.data(), 4);
  EXPECT_EQ(v.rank, 3);
  EXPECT_EQ(v.detail, -1);
  // Counts beyond int32 positions.
  h = agreeing_headers(2);
  sizes.assign(2, sizeof(OpHeader));
  h[0].count = h[1].count = INT32_MAX / 2 + 1;
  v = bounded_agreement_of(h.data(), sizes.data(), 2);
  EXPECT_EQ(v.result, zfcInvalidArgument);
  EXPECT_EQ(v.reason, kBoundedTooMany);
}

// The verdict kernel with the headers: a disagreement fails the step before the leads are
// looked at, and nothing but the status is written.
TEST(BoundedStep, AStepWhoseHeadersDisagreeWritesTheStatusAlone) {
  std::unique_ptr<zfcComm> comm = comm_wrap(std::make_unique<MirrorTransport>(2), Config{});
  Workspace ws;
  PlanSpec spec;
  spec.dim = kDim;
  spec.vocab = kVocab;
  HostStepKernels<uint32_t> k(ws);
  const std::vector<int32_t> indices = {1, 2, 2};
  const std::vector<float> rows(indices.size() * kDim, 1.0f);
  for (const bool agree : {true, false}) {
    BoundedLocal<uint32_t> local;
    ASSERT_TRUE(bounded_local(k, kVocab, indices.data(), zfcInt32, indices.size(), true, &local)
                    .ok());
    std::vector<OpHeader> h = agreeing_headers(2);
    if (!agree) h[1].dim = 5;
    const std::vector<uint64_t> sizes(2, sizeof(OpHeader));
    zfcBoundedStatus_t status{-1, -1, -1};
    std::vector<int32_t> ids(4, 99);
    std::vector<float> out(4 * kDim, -3.0f);
    const BoundedOutput where{ids.data(), zfcInt32, out.data(), 4, &status};
    zfcOpStats_t op{};
    const BoundedStep step{*comm->transport, nullptr, ws, spec, &op};
    const BoundedVerdict* verdict = nullptr;
    ASSERT_TRUE(bounded_exchange(step, k, local, h.data(), sizes.data(), rows.data(), where,
                                 &verdict)
                    .ok());
    EXPECT_EQ(k.fetches(), 0u);
    if (agree) {
      EXPECT_EQ(status.result, zfcSuccess);
      EXPECT_EQ(ids, (std::vector<int32_t>{1, 2, -1, -1}));
    } else {
      EXPECT_EQ(status.result, zfcMismatch);
      EXPECT_EQ(status.num_unique, 0);
      EXPECT_EQ(verdict->rank, 1);
      EXPECT_EQ(ids, std::vector<int32_t>(4, 99));
      EXPECT_EQ(out, std::vector<float>(4 * kDim, -3.0f));
    }
  }
}

}  // namespace
}  // namespace zfc
