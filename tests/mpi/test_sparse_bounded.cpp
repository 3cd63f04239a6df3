// zfcSparseReduceBounded: the sparse reduce in fixed sizes. The bits of the uniqueness
// technique's result (which every algorithm shares in fp32) in the caller's buffers, -1 and
// zeros past U_g; a bad index or U_g above the capacity reported in the status on every rank
// alike with the buffers left as they were, then by zfcCommGetAsyncError or by the next call,
// once; a capacity that differs across ranks refused at once.
#include <cstring>
#include <string>
#include <vector>

#include "sparse_helpers.hpp"

namespace zfc {
namespace test {
namespace {

constexpr size_t kDim = 10;
constexpr int64_t kVocab = 3000;

float untouched_value() {
  const uint32_t bits = 0x7fc0beef;  // a NaN no result has
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

bool all_untouched(const std::vector<float>& v) {
  const float s = untouched_value();
  for (float x : v) {
    if (std::memcmp(&x, &s, sizeof x) != 0) return false;
  }
  return true;
}

struct Bounded {
  zfcResult_t result = zfcInternalError;
  std::string error;
  zfcBoundedStatus_t status{-7, -7, -7};
  std::vector<char> ids;
  std::vector<float> rows;
  zfcOpStats_t stats{};
};

zfcSparsePlan_t make_plan(zfcComm_t comm, zfcDataType_t index_type, zfcCompressionKind_t kind) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = kDim;
  cfg.vocab_size = kVocab;
  cfg.index_type = index_type;
  cfg.algorithm = zfcAlgoUniqueAllReduce;
  cfg.compression = kind;
  cfg.compress_scale = kind == zfcCompressFp16 ? 64.0f : 1.0f;
  zfcSparsePlan_t plan = nullptr;
  EXPECT_EQ(zfcSparsePlanCreate(comm, &cfg, &plan), zfcSuccess) << zfcGetLastError(comm);
  return plan;
}

Bounded bounded(zfcComm_t comm, zfcSparsePlan_t plan, zfcDataType_t type,
                const std::vector<int64_t>& indices, const std::vector<float>& rows,
                size_t capacity, bool with_status = true) {
  const size_t index_bytes = type == zfcInt32 ? 4 : 8;
  const std::vector<char> ids = typed_indices(indices, type);
  Bounded b;
  b.ids.assign(capacity * index_bytes, '\x5a');
  b.rows.assign(capacity * kDim, untouched_value());
  b.result = zfcSparseReduceBounded(plan, ids.data(), indices.size(), rows.data(), capacity,
                                    b.ids.data(), b.rows.data(),
                                    with_status ? &b.status : nullptr, nullptr);
  if (b.result != zfcSuccess) b.error = zfcGetLastError(comm);
  zfcStats_t stats = ZFC_STATS_INITIALIZER;
  zfcCommGetStats(comm, &stats);
  b.stats = stats.last;
  return b;
}

int64_t index_at(const std::vector<char>& ids, zfcDataType_t type, size_t i) {
  if (type == zfcInt32) {
    int32_t v;
    std::memcpy(&v, ids.data() + 4 * i, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, ids.data() + 8 * i, 8);
  return v;
}

class BoundedTest : public WorldTest {
 protected:
  Workload workload() const {
    return zipf_workload(size_, kDim, kVocab, 1.1, 23, [](int r) {
      return r == 1 ? size_t{0} : 70 + 31 * static_cast<size_t>(r);
    });
  }
  const RankInput& mine(const Workload& w) const { return w.ranks[static_cast<size_t>(rank_)]; }
  // A capacity above U_g, the same on every rank: every rank's tokens, and some room.
  static size_t room_for_all(const Workload& w) {
    return static_cast<size_t>(w.total_tokens()) + 8;
  }
};

TEST_F(BoundedTest, GivesTheBitsOfTheUniquenessTechniqueInFixedSizes) {
  const Workload w = workload();
  const RankInput& in = mine(w);
  for (zfcCompressionKind_t kind : {zfcCompressNone, zfcCompressFp16, zfcCompressBf16}) {
    for (zfcDataType_t type : {zfcInt32, zfcInt64}) {
      const std::string what = "compression " + std::to_string(kind) +
                               (type == zfcInt32 ? " int32" : " int64");
      PlanOptions opt;
      opt.index_type = type;
      opt.compression = kind;
      opt.scale = kind == zfcCompressFp16 ? 64.0f : 1.0f;
      const PlanRun plain = run_plan(comm_, in, kDim, kVocab, opt);
      ASSERT_EQ(plain.result, zfcSuccess) << what;
      const size_t ug = plain.indices.size();
      ASSERT_GT(ug, 0u) << what;
      const size_t capacity = ug + 5;
      zfcSparsePlan_t plan = make_plan(comm_, type, kind);
      const Bounded b = bounded(comm_, plan, type, in.indices, in.rows, capacity);
      zfcSparsePlanDestroy(plan);
      ASSERT_EQ(b.result, zfcSuccess) << what << ": " << b.error;
      EXPECT_EQ(b.status.result, zfcSuccess) << what;
      EXPECT_EQ(b.status.num_unique, static_cast<int64_t>(ug)) << what;
      EXPECT_EQ(b.status.overflowed, 0) << what;
      for (size_t i = 0; i < capacity; ++i) {
        EXPECT_EQ(index_at(b.ids, type, i), i < ug ? plain.indices[i] : -1) << what << " " << i;
      }
      EXPECT_EQ(std::memcmp(b.rows.data(), plain.rows.data(), ug * kDim * sizeof(float)), 0)
          << what;
      for (size_t i = ug * kDim; i < capacity * kDim; ++i) {
        ASSERT_EQ(b.rows[i], 0.0f) << what << " element " << i;
      }
      // On the host: every phase there, no wait, the uniqueness technique.
      EXPECT_EQ(b.stats.algorithm, zfcAlgoUniqueAllReduce) << what;
      EXPECT_EQ(b.stats.host_syncs, 0u) << what;
      for (int p = 0; p < zfcNumPhases; ++p) EXPECT_EQ(b.stats.path[p], zfcPathHost) << what;
      zfcResult_t async = zfcInternalError;
      ASSERT_EQ(zfcCommGetAsyncError(comm_, &async), zfcSuccess);
      EXPECT_EQ(async, zfcSuccess) << what;
    }
  }
}

TEST_F(BoundedTest, ACapacityBelowUgFailsEveryRankAfterwardsAndWritesNothing) {
  const Workload w = workload();
  const RankInput& in = mine(w);
  PlanOptions opt;
  const PlanRun plain = run_plan(comm_, in, kDim, kVocab, opt);
  ASSERT_EQ(plain.result, zfcSuccess);
  const size_t ug = plain.indices.size();
  ASSERT_GT(ug, 1u);
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt32, zfcCompressNone);
  const Bounded b = bounded(comm_, plan, zfcInt32, in.indices, in.rows, ug - 1);
  // The call itself succeeded: the sizes were never the host's to check.
  ASSERT_EQ(b.result, zfcSuccess) << b.error;
  EXPECT_EQ(b.status.result, zfcInvalidArgument);
  EXPECT_EQ(b.status.num_unique, static_cast<int64_t>(ug));
  EXPECT_TRUE(all_untouched(b.rows));
  EXPECT_EQ(b.ids, std::vector<char>(b.ids.size(), '\x5a'));
  // Reported by the query, once, with the sizes.
  zfcResult_t async = zfcInternalError;
  ASSERT_EQ(zfcCommGetAsyncError(comm_, &async), zfcSuccess);
  EXPECT_EQ(async, zfcInvalidArgument);
  const std::string text = zfcGetLastError(comm_);
  // (With one or two ranks one rank alone has more than the capacity: "at least" then.)
  EXPECT_NE(text.find(" " + std::to_string(ug) + " distinct indices"), std::string::npos)
      << text;
  EXPECT_NE(text.find("more than its capacity " + std::to_string(ug - 1)), std::string::npos)
      << text;
  ASSERT_EQ(zfcCommGetAsyncError(comm_, &async), zfcSuccess);
  EXPECT_EQ(async, zfcSuccess);
  // Unless the query took it, the next call that is not bounded reports it, on every rank.
  const Bounded again = bounded(comm_, plan, zfcInt32, in.indices, in.rows, ug - 1);
  ASSERT_EQ(again.result, zfcSuccess);
  EXPECT_EQ(again.status.result, zfcInvalidArgument);
  const PlanRun next = run_plan(comm_, in, kDim, kVocab, opt);
  EXPECT_EQ(next.result, zfcInvalidArgument);
  const PlanRun after = run_plan(comm_, in, kDim, kVocab, opt);
  EXPECT_EQ(after.result, zfcSuccess);
  // A later bounded call with room is a success again.
  const Bounded fits = bounded(comm_, plan, zfcInt32, in.indices, in.rows, ug);
  ASSERT_EQ(fits.result, zfcSuccess);
  EXPECT_EQ(fits.status.result, zfcSuccess);
  EXPECT_EQ(fits.status.num_unique, static_cast<int64_t>(ug));
  zfcSparsePlanDestroy(plan);
}

TEST_F(BoundedTest, ABadIndexOnOneRankFailsTheStepOnEveryRank) {
  const Workload w = workload();
  RankInput in = mine(w);
  const int culprit = size_ - 1;
  if (in.indices.size() < 4) in.indices.resize(4, 1), in.rows.resize(4 * kDim, 0.5f);
  if (rank_ == culprit) in.indices[3] = kVocab;
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt64, zfcCompressNone);
  const Bounded b = bounded(comm_, plan, zfcInt64, in.indices, in.rows, kVocab);
  ASSERT_EQ(b.result, zfcSuccess) << b.error;
  EXPECT_EQ(b.status.result, zfcInvalidArgument);
  EXPECT_TRUE(all_untouched(b.rows));
  const PlanRun next = run_plan(comm_, mine(w), kDim, kVocab, PlanOptions{});
  EXPECT_EQ(next.result, zfcInvalidArgument);
  const std::string text = zfcGetLastError(comm_);
  const std::string expected = "rank " + std::to_string(culprit) + ": indices[3] is outside";
  EXPECT_NE(text.find(expected), std::string::npos) << text;
  zfcSparsePlanDestroy(plan);
}

TEST_F(BoundedTest, AFailureIsReportedOnceAfterAnArgumentErrorOrByAGroup) {
  const Workload w = workload();
  const RankInput& in = mine(w);
  const PlanRun plain = run_plan(comm_, in, kDim, kVocab, PlanOptions{});
  ASSERT_EQ(plain.result, zfcSuccess);
  const size_t ug = plain.indices.size();
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt32, zfcCompressNone);
  const std::vector<char> ids = typed_indices(in.indices, zfcInt32);
  // A call failing on rank 0's own argument takes the earlier failure along on every rank.
  ASSERT_EQ(bounded(comm_, plan, zfcInt32, in.indices, in.rows, ug - 1).status.result,
            zfcInvalidArgument);
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  EXPECT_EQ(zfcSparseReduce(plan, ids.data(), in.indices.size(), in.rows.data(),
                            rank_ == 0 ? nullptr : &out, nullptr),
            zfcInvalidArgument);
  EXPECT_EQ(run_plan(comm_, in, kDim, kVocab, PlanOptions{}).result, zfcSuccess);
  // A group reports it at zfcGroupEnd, on every rank, and the next call is clean.
  ASSERT_EQ(bounded(comm_, plan, zfcInt32, in.indices, in.rows, ug - 1).status.result,
            zfcInvalidArgument);
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  EXPECT_EQ(zfcSparseReduce(plan, ids.data(), in.indices.size(), in.rows.data(), &out, nullptr),
            zfcSuccess);
  EXPECT_EQ(zfcGroupEnd(comm_), zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("more than its capacity"),
            std::string::npos) << zfcGetLastError(comm_);
  EXPECT_EQ(run_plan(comm_, in, kDim, kVocab, PlanOptions{}).result, zfcSuccess);
  zfcSparsePlanDestroy(plan);
}

TEST_F(BoundedTest, NoIndicesAnywhere) {
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt64, zfcCompressNone);
  const std::vector<int64_t> none;
  const std::vector<float> no_rows;
  const Bounded empty = bounded(comm_, plan, zfcInt64, none, no_rows, 0);
  ASSERT_EQ(empty.result, zfcSuccess) << empty.error;
  EXPECT_EQ(empty.status.result, zfcSuccess);
  EXPECT_EQ(empty.status.num_unique, 0);
  const Bounded room = bounded(comm_, plan, zfcInt64, none, no_rows, 3);
  ASSERT_EQ(room.result, zfcSuccess) << room.error;
  EXPECT_EQ(room.status.num_unique, 0);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(index_at(room.ids, zfcInt64, i), -1);
  EXPECT_EQ(room.rows, std::vector<float>(3 * kDim, 0.0f));
  zfcSparsePlanDestroy(plan);
}

TEST_F(BoundedTest, ArgumentErrorsFailTheCallOnEveryRank) {
  const Workload w = workload();
  const RankInput& in = mine(w);
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt32, zfcCompressNone);
  // No status on rank 0.
  const Bounded a = bounded(comm_, plan, zfcInt32, in.indices, in.rows, 500, rank_ != 0);
  EXPECT_EQ(a.result, zfcInvalidArgument);
  EXPECT_NE(a.error.find("rank 0: out_status is NULL"), std::string::npos) << a.error;
  if (size_ > 1) {
    const Bounded m = bounded(comm_, plan, zfcInt32, in.indices, in.rows,
                              rank_ == size_ - 1 ? 501 : 500);
    EXPECT_EQ(m.result, zfcMismatch);
    EXPECT_NE(m.error.find("capacity differs across ranks"), std::string::npos) << m.error;
  }
  // In a group: refused.
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  const Bounded g = bounded(comm_, plan, zfcInt32, in.indices, in.rows, 500);
  EXPECT_EQ(g.result, zfcInvalidUsage);
  EXPECT_NE(zfcGroupEnd(comm_), zfcSuccess);
  zfcResult_t async = zfcInternalError;
  EXPECT_EQ(zfcCommGetAsyncError(comm_, nullptr), zfcInvalidArgument);
  ASSERT_EQ(zfcCommGetAsyncError(comm_, &async), zfcSuccess);
  EXPECT_EQ(async, zfcSuccess);
  zfcSparsePlanDestroy(plan);
}

// After a plan's first call with a capacity, calls with it agree in their kernels: the same
// bits, no wait; every rank changing the capacity agrees on the host again.
TEST_F(BoundedTest, LaterCallsAgreeInTheirKernels) {
  const Workload w = workload();
  const RankInput& in = mine(w);
  const PlanRun plain = run_plan(comm_, in, kDim, kVocab, PlanOptions{});
  ASSERT_EQ(plain.result, zfcSuccess);
  const size_t cap = plain.indices.size() + 5;
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt64, zfcCompressFp16);
  const Bounded first = bounded(comm_, plan, zfcInt64, in.indices, in.rows, cap);
  ASSERT_EQ(first.result, zfcSuccess) << first.error;
  ASSERT_EQ(first.status.result, zfcSuccess);
  for (size_t c : {cap, cap, cap + 3, cap + 3}) {
    const Bounded next = bounded(comm_, plan, zfcInt64, in.indices, in.rows, c);
    ASSERT_EQ(next.result, zfcSuccess) << next.error;
    EXPECT_EQ(next.status.result, zfcSuccess);
    EXPECT_EQ(next.status.num_unique, first.status.num_unique);
    EXPECT_EQ(next.stats.host_syncs, 0u);
    if (c != cap) continue;
    EXPECT_EQ(next.ids, first.ids);
    EXPECT_EQ(std::memcmp(next.rows.data(), first.rows.data(), first.rows.size() * 4), 0);
  }
  zfcResult_t async = zfcInternalError;
  ASSERT_EQ(zfcCommGetAsyncError(comm_, &async), zfcSuccess);
  EXPECT_EQ(async, zfcSuccess);
  EXPECT_EQ(run_plan(comm_, in, kDim, kVocab, PlanOptions{}).result, zfcSuccess);
  zfcSparsePlanDestroy(plan);
}

// One rank of calls that agree in their kernels changes the capacity (the last rank, then
// rank 0) or fails its own checks: its call returns the failure, the others' status has it,
// nothing is written, and the plan's agreement stands. With three ranks or more, a rank in
// another operation fails every rank's call at once, none waiting for ever.
TEST_F(BoundedTest, AChangedCallOnOneRankIsReportedByTheOthers) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks";
  const Workload w = workload();
  const RankInput& in = mine(w);
  const size_t cap = room_for_all(w);
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt64, zfcCompressNone);
  ASSERT_EQ(bounded(comm_, plan, zfcInt64, in.indices, in.rows, cap).status.result, zfcSuccess);
  zfcResult_t async = zfcInternalError;
  for (const int odd : {size_ - 1, 0}) {
    const Bounded changed =
        bounded(comm_, plan, zfcInt64, in.indices, in.rows, rank_ == odd ? cap + 1 : cap);
    if (rank_ == odd) {
      EXPECT_EQ(changed.result, zfcMismatch);
      EXPECT_NE(changed.error.find("capacity differs across ranks"), std::string::npos)
          << changed.error;
      continue;
    }
    ASSERT_EQ(changed.result, zfcSuccess) << changed.error;
    EXPECT_EQ(changed.status.result, zfcMismatch);
    EXPECT_EQ(changed.status.num_unique, 0);
    EXPECT_TRUE(all_untouched(changed.rows));
    ASSERT_EQ(zfcCommGetAsyncError(comm_, &async), zfcSuccess);
    EXPECT_EQ(async, zfcMismatch);
    // Named against rank 0's: the lowest other rank when rank 0 changed.
    const std::string text = zfcGetLastError(comm_);
    const int named = odd == 0 ? 1 : odd;
    EXPECT_NE(text.find("rank " + std::to_string(named) + "'s call differs from rank 0's in "
                        "its capacity"), std::string::npos) << text;
  }
  // Its own checks failing (no status): the others' status has its code, and the next call
  // that is not bounded reports it on every rank.
  const int odd = size_ - 1;
  const Bounded unchecked =
      bounded(comm_, plan, zfcInt64, in.indices, in.rows, cap, rank_ != odd);
  if (rank_ == odd) {
    EXPECT_EQ(unchecked.result, zfcInvalidArgument);
    EXPECT_NE(unchecked.error.find("out_status is NULL"), std::string::npos) << unchecked.error;
  } else {
    ASSERT_EQ(unchecked.result, zfcSuccess) << unchecked.error;
    EXPECT_EQ(unchecked.status.result, zfcInvalidArgument);
    EXPECT_TRUE(all_untouched(unchecked.rows));
  }
  EXPECT_EQ(run_plan(comm_, in, kDim, kVocab, PlanOptions{}).result, zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("its own checks of the call failed"),
            std::string::npos) << zfcGetLastError(comm_);
  if (size_ >= 3) {
    // Rank 0 agrees in its kernels, rank 1 on the host (another capacity), the rest run an
    // allreduce: every call fails, out of step, and nothing waits for ever.
    float values[4] = {1, 2, 3, 4};
    const zfcResult_t r =
        rank_ >= 2 ? zfcAllReduce(comm_, values, values, 4, zfcFloat32, nullptr, nullptr, nullptr)
                   : bounded(comm_, plan, zfcInt64, in.indices, in.rows,
                             rank_ == 1 ? cap + 1 : cap).result;
    EXPECT_EQ(r, zfcMismatch) << zfcGetLastError(comm_);
  }
  // The plan's agreement stands.
  const Bounded again = bounded(comm_, plan, zfcInt64, in.indices, in.rows, cap);
  ASSERT_EQ(again.result, zfcSuccess) << again.error;
  EXPECT_EQ(again.status.result, zfcSuccess);
  ASSERT_EQ(zfcCommGetAsyncError(comm_, &async), zfcSuccess);
  EXPECT_EQ(async, zfcSuccess);
  EXPECT_EQ(run_plan(comm_, in, kDim, kVocab, PlanOptions{}).result, zfcSuccess);
  zfcSparsePlanDestroy(plan);
}

// Calls that agree in their kernels on host buffers, with a rank in another operation (a
// group that fails) or on a plan of another dim: every rank fails at once, nothing waits.
// A plan made again on one rank: one call fails, the next agrees in the kernels everywhere.
TEST_F(BoundedTest, PlansOutOfStepFailAtOnceAndRecover) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks";
  const Workload w = workload();
  const RankInput& in = mine(w);
  const size_t cap = room_for_all(w);
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt64, zfcCompressNone);
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = kDim + 2;
  cfg.vocab_size = kVocab;
  cfg.index_type = zfcInt64;
  zfcSparsePlan_t wider = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(comm_, &cfg, &wider), zfcSuccess);
  std::vector<float> wide_rows(in.indices.size() * (kDim + 2), 0.5f);
  const std::vector<int64_t>& idx = in.indices;
  std::vector<int64_t> ids(cap);
  std::vector<float> out(cap * (kDim + 2));
  zfcBoundedStatus_t status{};
  auto call_wider = [&] {
    return zfcSparseReduceBounded(wider, idx.data(), idx.size(), wide_rows.data(), cap,
                                  ids.data(), out.data(), &status, nullptr);
  };
  ASSERT_EQ(bounded(comm_, plan, zfcInt64, idx, in.rows, cap).status.result, zfcSuccess);
  ASSERT_EQ(call_wider(), zfcSuccess) << zfcGetLastError(comm_);
  // Rank 0 in a group whose call fails on its own argument; the others in their kernels.
  zfcSparseResult_t* no_result = nullptr;
  const std::vector<char> typed = typed_indices(idx, zfcInt64);
  zfcResult_t r = zfcSuccess;
  if (rank_ == 0) {
    ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
    zfcSparseReduce(plan, typed.data(), idx.size(), in.rows.data(), no_result, nullptr);
    r = zfcGroupEnd(comm_);
  } else {
    r = bounded(comm_, plan, zfcInt64, idx, in.rows, cap).result;
  }
  EXPECT_NE(r, zfcSuccess);
  // Rank 0 on the plan of another dim, both agreed before.
  r = rank_ == 0 ? call_wider() : bounded(comm_, plan, zfcInt64, idx, in.rows, cap).result;
  EXPECT_EQ(r, zfcMismatch) << zfcGetLastError(comm_);
  // The last rank makes its plan again: it agrees on the host once, the others in their
  // kernels; then every rank in the kernels.
  if (rank_ == size_ - 1) {
    zfcSparsePlanDestroy(plan);
    plan = make_plan(comm_, zfcInt64, zfcCompressNone);
  }
  const Bounded once = bounded(comm_, plan, zfcInt64, idx, in.rows, cap);
  if (rank_ == size_ - 1) {
    EXPECT_EQ(once.result, zfcMismatch);
    EXPECT_NE(once.error.find("made again on some ranks only"), std::string::npos) << once.error;
  } else {
    ASSERT_EQ(once.result, zfcSuccess) << once.error;
    EXPECT_EQ(once.status.result, zfcMismatch);
  }
  zfcResult_t async = zfcInternalError;
  ASSERT_EQ(zfcCommGetAsyncError(comm_, &async), zfcSuccess);
  const Bounded then = bounded(comm_, plan, zfcInt64, idx, in.rows, cap);
  ASSERT_EQ(then.result, zfcSuccess) << then.error;
  EXPECT_EQ(then.status.result, zfcSuccess);
  EXPECT_EQ(run_plan(comm_, in, kDim, kVocab, PlanOptions{}).result, zfcSuccess);
  zfcSparsePlanDestroy(wider);
  zfcSparsePlanDestroy(plan);
}

}  // namespace
}  // namespace test
}  // namespace zfc
