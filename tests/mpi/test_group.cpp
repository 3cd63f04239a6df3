// zfcGroupStart / zfcGroupEnd: a step's collectives (a dense allreduce, two sparse plans and a
// small allreduce of scalars) in one call give the bits the same calls give one by one, in
// one agreement (rounds and bytes checked exactly against the separate calls'), and every
// misuse fails alike on every rank with nothing of the caller's written.
#include <cstring>
#include <string>
#include <vector>

#include "sparse_helpers.hpp"

namespace zfc {
namespace test {
namespace {

constexpr size_t kInDim = 16, kOutDim = 17, kDense = 3000;
constexpr int64_t kVocab = 5000;

// One plan's inputs on this rank, as the library takes them.
struct PlanInput {
  std::vector<int32_t> indices;
  std::vector<float> rows;
};

PlanInput plan_input(size_t count, size_t dim, uint64_t seed, int rank) {
  workload::ZipfDistribution zipf(1.1, kVocab);
  std::vector<int64_t> ids = zipf_indices(zipf, count, seed, rank);
  return {std::vector<int32_t>(ids.begin(), ids.end()), random_rows(count, dim, seed, rank)};
}

// What a step's calls hand back, copied out of the plans.
struct StepResult {
  std::vector<int32_t> in_indices, out_indices;
  std::vector<float> in_rows, out_rows, dense, scalars;
  int in_algorithm = -1, out_algorithm = -1, dense_over = -1, in_over = -1;
  zfcOpStats_t last{};   // the group's stats entry (grouped), or the scalars' (separate)
  uint64_t received = 0;  // this rank's bytes received over the step
  int rounds = 0;
};

void copy_result(const zfcSparseResult_t& r, size_t dim, std::vector<int32_t>* idx,
                 std::vector<float>* rows) {
  const int32_t* p = static_cast<const int32_t*>(r.indices);
  idx->assign(p, p + r.num_unique);
  rows->assign(r.rows, r.rows + r.num_unique * dim);
}

class GroupTest : public WorldTest {
 protected:
  void SetUp() override {
    WorldTest::SetUp();
    in_ = plan_input(300 + 37 * static_cast<size_t>(rank_), kInDim, 11, rank_);
    out_ = plan_input(120 + 5 * static_cast<size_t>(rank_), kOutDim, 23, rank_);
    dense_ = random_rows(1, kDense, 31, rank_);
    scalars_ = {0.25f * static_cast<float>(rank_ + 1), 1.0f / 3.0f, -7.5f};
  }
  void TearDown() override {
    zfcSparsePlanDestroy(in_plan_);
    zfcSparsePlanDestroy(out_plan_);
    WorldTest::TearDown();
  }

  void make_plans(zfcAlgorithm_t algo, zfcCompressionKind_t wire) {
    zfcSparsePlanDestroy(in_plan_);
    zfcSparsePlanDestroy(out_plan_);
    in_plan_ = out_plan_ = nullptr;
    for (size_t dim : {kInDim, kOutDim}) {
      zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
      cfg.dim = dim;
      cfg.vocab_size = kVocab;
      cfg.algorithm = algo;
      cfg.compression = wire;
      cfg.compress_scale = wire == zfcCompressNone ? 1.0f : 64.0f;
      ASSERT_EQ(zfcSparsePlanCreate(comm_, &cfg, dim == kInDim ? &in_plan_ : &out_plan_),
                zfcSuccess);
    }
    how_.kind = wire;
    how_.scale = wire == zfcCompressNone ? 1.0f : 64.0f;
  }

  // The step's four calls, one by one (grouped = false) or in one group. *per_call gets the
  // separate calls' stats entries.
  StepResult step(bool grouped, std::vector<zfcOpStats_t>* per_call = nullptr) {
    StepResult r;
    r.dense.assign(kDense, -1.0f);
    r.scalars.assign(scalars_.size(), -1.0f);
    zfcSparseResult_t in = ZFC_SPARSE_RESULT_INITIALIZER, out = ZFC_SPARSE_RESULT_INITIALIZER;
    auto note = [&]() {
      if (grouped) return;
      const zfcOpStats_t s = last_stats();
      r.received += s.bytes_received;
      r.rounds += s.rounds;
      if (per_call != nullptr) per_call->push_back(s);
    };
    if (grouped) EXPECT_EQ(zfcGroupStart(comm_), zfcSuccess);
    EXPECT_EQ(zfcAllReduce(comm_, dense_.data(), r.dense.data(), kDense, zfcFloat32, &how_,
                           &r.dense_over, nullptr), zfcSuccess) << zfcGetLastError(comm_);
    note();
    EXPECT_EQ(zfcSparseReduce(in_plan_, in_.indices.data(), in_.indices.size(), in_.rows.data(),
                              &in, nullptr), zfcSuccess) << zfcGetLastError(comm_);
    note();
    EXPECT_EQ(zfcSparseReduce(out_plan_, out_.indices.data(), out_.indices.size(),
                              out_.rows.data(), &out, nullptr), zfcSuccess);
    note();
    EXPECT_EQ(zfcAllReduce(comm_, scalars_.data(), r.scalars.data(), scalars_.size(),
                           zfcFloat32, nullptr, nullptr, nullptr), zfcSuccess);
    note();
    if (grouped) {
      EXPECT_EQ(in.indices, nullptr);  // nothing is handed back before the group ends
      EXPECT_EQ(zfcGroupEnd(comm_), zfcSuccess) << zfcGetLastError(comm_);
      r.last = last_stats();
      r.received = r.last.bytes_received;
      r.rounds = r.last.rounds;
    }
    copy_result(in, kInDim, &r.in_indices, &r.in_rows);
    copy_result(out, kOutDim, &r.out_indices, &r.out_rows);
    r.in_algorithm = in.algorithm;
    r.out_algorithm = out.algorithm;
    r.in_over = in.overflowed;
    return r;
  }

  PlanInput in_, out_;
  std::vector<float> dense_, scalars_;
  zfcCompression_t how_{zfcCompressNone, 1.0f};
  zfcSparsePlan_t in_plan_ = nullptr, out_plan_ = nullptr;
};

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b,
                      const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
}

TEST_F(GroupTest, GivesTheBitsOfSeparateCalls) {
  for (zfcAlgorithm_t algo : {zfcAlgoUniqueAllReduce, zfcAlgoOwnerPartitioned,
                              zfcAlgoKeyRouted, zfcAlgoAllGather, zfcAlgoAuto}) {
    for (zfcCompressionKind_t wire : {zfcCompressNone, zfcCompressFp16, zfcCompressBf16}) {
      SCOPED_TRACE(std::string(zfcGetAlgorithmName(algo)) + " wire " + std::to_string(wire));
      make_plans(algo, wire);
      const StepResult one = step(false);
      make_plans(algo, wire);  // auto starts from the same state
      const StepResult all = step(true);
      EXPECT_EQ(all.in_indices, one.in_indices);
      EXPECT_EQ(all.out_indices, one.out_indices);
      expect_same_bits(all.in_rows, one.in_rows, "input plan rows");
      expect_same_bits(all.out_rows, one.out_rows, "output plan rows");
      expect_same_bits(all.dense, one.dense, "dense allreduce");
      expect_same_bits(all.scalars, one.scalars, "scalars");
      EXPECT_EQ(all.in_algorithm, one.in_algorithm);
      EXPECT_EQ(all.out_algorithm, one.out_algorithm);
      EXPECT_EQ(all.dense_over, one.dense_over);
      EXPECT_EQ(all.in_over, one.in_over);
      EXPECT_EQ(all.last.calls, 4u);
      EXPECT_TRUE(same_on_all_ranks(std::hash<std::string>()(std::string(
          reinterpret_cast<const char*>(all.in_rows.data()), all.in_rows.size() * 4))));
    }
  }
}

// The group costs one agreement: its rounds are the separate calls' less each call's own
// header round, and the scalars' whole allreduce (they ride in the group's first exchange).
// Its bytes are theirs less the scalars' exchange, plus the group's header, the calls'
// payload sizes and the scalars themselves in every other rank's block.
TEST_F(GroupTest, OneAgreementForTheStep) {
  make_plans(zfcAlgoOwnerPartitioned, zfcCompressFp16);
  std::vector<zfcOpStats_t> calls;
  const StepResult one = step(false, &calls);
  const StepResult all = step(true);
  ASSERT_EQ(calls.size(), 4u);
  const uint64_t others = static_cast<uint64_t>(size_ - 1);
  const uint64_t scalar_bytes = scalars_.size() * sizeof(float);
  const uint64_t expected = one.received - calls[3].bytes_received + others * 96 +
                            others * (96 + 4 * 8 + scalar_bytes);
  EXPECT_EQ(all.received, expected);
  if (size_ > 1) {
    // Separate: 3 rounds each (header, then two exchanges); grouped: 1 + 2 + 2 + 2.
    EXPECT_EQ(one.rounds, 12);
    EXPECT_EQ(all.rounds, 7);
  }
}

TEST_F(GroupTest, SmallAllReduceAloneInAGroupTakesOneRound) {
  std::vector<float> sum(scalars_.size(), 0.0f), ref(scalars_.size(), 0.0f);
  ASSERT_EQ(zfcAllReduce(comm_, scalars_.data(), ref.data(), ref.size(), zfcFloat32, nullptr,
                         nullptr, nullptr), zfcSuccess);
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcAllReduce(comm_, scalars_.data(), sum.data(), sum.size(), zfcFloat32, nullptr,
                         nullptr, nullptr), zfcSuccess);
  EXPECT_EQ(sum, std::vector<float>(scalars_.size(), 0.0f));  // written at the end only
  ASSERT_EQ(zfcGroupEnd(comm_), zfcSuccess) << zfcGetLastError(comm_);
  expect_same_bits(sum, ref, "scalars");
  if (size_ > 1) EXPECT_EQ(last_stats().rounds, 1);
}

// Compressed small allreduces ride too, with the wire's rounding and the agreed overflow flag
// of the allreduce (rank 0's 4000 * 64 overflows fp16, not bf16).
TEST_F(GroupTest, SmallCompressedAllReduceRidesWithTheSameBits) {
  std::vector<float> v = {0.1f * static_cast<float>(rank_), 1.0f / 7.0f, -3.3f, 2.5e-3f, 9.0f};
  for (int big = 0; big < 2; ++big) {
    if (rank_ == 0) v[4] = big ? 4000.0f : 9.0f;
    for (zfcCompressionKind_t wire : {zfcCompressFp16, zfcCompressBf16}) {
      const zfcCompression_t how{wire, 64.0f};
      std::vector<float> ref(v.size(), 0.0f), got(v.size(), 0.0f);
      int ref_over = -1, got_over = -1;
      ASSERT_EQ(zfcAllReduce(comm_, v.data(), ref.data(), v.size(), zfcFloat32, &how,
                             &ref_over, nullptr), zfcSuccess);
      ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
      ASSERT_EQ(zfcAllReduce(comm_, v.data(), got.data(), v.size(), zfcFloat32, &how,
                             &got_over, nullptr), zfcSuccess);
      ASSERT_EQ(zfcGroupEnd(comm_), zfcSuccess) << zfcGetLastError(comm_);
      expect_same_bits(got, ref, "compressed scalars");
      EXPECT_EQ(got_over, ref_over);
      EXPECT_EQ(got_over, big && wire == zfcCompressFp16 ? 1 : 0);
    }
  }
}

TEST_F(GroupTest, EmptyAndNestedGroups) {
  ASSERT_EQ(zfcCommResetStats(comm_), zfcSuccess);
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcGroupEnd(comm_), zfcSuccess);
  zfcStats_t s = ZFC_STATS_INITIALIZER;
  ASSERT_EQ(zfcCommGetStats(comm_, &s), zfcSuccess);
  EXPECT_EQ(s.total.calls, 0u);  // an empty group sends nothing
  std::vector<float> sum(scalars_.size(), 0.0f), ref(scalars_.size(), 0.0f);
  ASSERT_EQ(zfcAllReduce(comm_, scalars_.data(), ref.data(), ref.size(), zfcFloat32, nullptr,
                         nullptr, nullptr), zfcSuccess);
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcAllReduce(comm_, scalars_.data(), sum.data(), sum.size(), zfcFloat32, nullptr,
                         nullptr, nullptr), zfcSuccess);
  ASSERT_EQ(zfcGroupEnd(comm_), zfcSuccess);  // the inner end runs nothing
  EXPECT_EQ(sum[0], 0.0f);
  ASSERT_EQ(zfcGroupEnd(comm_), zfcSuccess);
  expect_same_bits(sum, ref, "scalars");
  EXPECT_EQ(zfcGroupEnd(comm_), zfcInvalidUsage);  // no group is open
}

class GroupErrorTest : public GroupTest {
 protected:
  void SetUp() override {
    GroupTest::SetUp();
    make_plans(zfcAlgoOwnerPartitioned, zfcCompressNone);
  }
  // The rank that errs where only one does: rank 1, or the only rank.
  int odd_rank() const { return size_ > 1 ? 1 : 0; }
  std::string odd_name() const { return "rank " + std::to_string(odd_rank()); }
  // Every rank got `code`, with a message containing every one of `what`.
  void expect_agreed(zfcResult_t got, zfcResult_t code, std::vector<std::string> what) {
    EXPECT_EQ(got, code) << zfcGetLastError(comm_);
    EXPECT_TRUE(same_on_all_ranks(static_cast<uint64_t>(got)));
    const std::string msg = zfcGetLastError(comm_);
    for (const std::string& w : what) EXPECT_NE(msg.find(w), std::string::npos) << msg;
    EXPECT_TRUE(same_on_all_ranks(std::hash<std::string>()(msg))) << msg;
    // Still usable, grouped.
    const StepResult r = step(true);
    EXPECT_FALSE(r.in_indices.empty());
    EXPECT_NE(r.scalars, std::vector<float>(3, -1.0f));
  }
};

TEST_F(GroupErrorTest, BadIndexInOnePlanOnOneRankWritesNothing) {
  std::vector<float> recv(kDense, -2.0f), sums(3, -3.0f);
  int over = -4;
  zfcSparseResult_t in = ZFC_SPARSE_RESULT_INITIALIZER, out = ZFC_SPARSE_RESULT_INITIALIZER;
  if (rank_ == odd_rank()) out_.indices[3] = static_cast<int32_t>(kVocab) + 9;
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcAllReduce(comm_, dense_.data(), recv.data(), kDense, zfcFloat32, nullptr, &over,
                         nullptr), zfcSuccess);
  ASSERT_EQ(zfcSparseReduce(in_plan_, in_.indices.data(), in_.indices.size(), in_.rows.data(),
                            &in, nullptr), zfcSuccess);
  ASSERT_EQ(zfcSparseReduce(out_plan_, out_.indices.data(), out_.indices.size(),
                            out_.rows.data(), &out, nullptr), zfcSuccess);
  ASSERT_EQ(zfcAllReduce(comm_, scalars_.data(), sums.data(), 3, zfcFloat32, nullptr, nullptr,
                         nullptr), zfcSuccess);
  const zfcResult_t got = zfcGroupEnd(comm_);
  EXPECT_EQ(recv, std::vector<float>(kDense, -2.0f));
  EXPECT_EQ(sums, std::vector<float>(3, -3.0f));
  EXPECT_EQ(over, -4);
  EXPECT_EQ(in.indices, nullptr);
  EXPECT_EQ(out.num_unique, 0u);
  out_ = plan_input(120 + 5 * static_cast<size_t>(rank_), kOutDim, 23, rank_);
  expect_agreed(got, zfcInvalidArgument, {"call 2 of the group", odd_name(), "5009"});
}

TEST_F(GroupErrorTest, DifferentNumberOfCalls) {
  if (size_ < 2) GTEST_SKIP() << "ranks that disagree: one rank cannot";
  std::vector<float> sums(3, -3.0f);
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  for (int k = 0; k < (rank_ == 1 ? 2 : 1); ++k) {
    ASSERT_EQ(zfcAllReduce(comm_, scalars_.data(), sums.data(), 3, zfcFloat32, nullptr,
                           nullptr, nullptr), zfcSuccess);
  }
  const zfcResult_t got = zfcGroupEnd(comm_);
  EXPECT_EQ(sums, std::vector<float>(3, -3.0f));
  expect_agreed(got, zfcMismatch, {"number of calls in the group", "rank 1"});
}

// A call that fails its local checks on a rank whose group holds fewer calls than the others':
// every rank still reads the failure from that rank's group header (the calls' headers of a
// group of another size are not read), so all take the failure texts' round and agree.
TEST_F(GroupErrorTest, ALocalFailureInGroupsOfDifferentSizes) {
  if (size_ < 2) GTEST_SKIP() << "ranks that disagree: one rank cannot";
  std::vector<float> sums(3, -3.0f);
  zfcSparseResult_t in = ZFC_SPARSE_RESULT_INITIALIZER;
  if (rank_ == 0) in_.indices[1] = static_cast<int32_t>(kVocab) + 7;
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcSparseReduce(in_plan_, in_.indices.data(), in_.indices.size(), in_.rows.data(),
                            &in, nullptr), zfcSuccess);
  if (rank_ != 0) {
    ASSERT_EQ(zfcAllReduce(comm_, scalars_.data(), sums.data(), 3, zfcFloat32, nullptr,
                           nullptr, nullptr), zfcSuccess);
  }
  const zfcResult_t got = zfcGroupEnd(comm_);
  EXPECT_EQ(sums, std::vector<float>(3, -3.0f));
  EXPECT_EQ(in.indices, nullptr);
  in_ = plan_input(300 + 37 * static_cast<size_t>(rank_), kInDim, 11, rank_);
  expect_agreed(got, zfcInvalidArgument, {"rank 0", "call 0 of the group", "5007"});
}

TEST_F(GroupErrorTest, CallsOfDifferentKindsOrArguments) {
  if (size_ < 2) GTEST_SKIP() << "ranks that disagree: one rank cannot";
  std::vector<float> sums(3, -3.0f);
  zfcSparseResult_t in = ZFC_SPARSE_RESULT_INITIALIZER;
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  if (rank_ == 1) {
    ASSERT_EQ(zfcAllReduce(comm_, scalars_.data(), sums.data(), 2, zfcFloat32, nullptr,
                           nullptr, nullptr), zfcSuccess);
  } else {
    ASSERT_EQ(zfcSparseReduce(in_plan_, in_.indices.data(), in_.indices.size(),
                              in_.rows.data(), &in, nullptr), zfcSuccess);
  }
  expect_agreed(zfcGroupEnd(comm_), zfcMismatch, {"call 0 of the group", "rank 1"});
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcAllReduce(comm_, scalars_.data(), sums.data(), rank_ == 1 ? 2 : 3, zfcFloat32,
                         nullptr, nullptr, nullptr), zfcSuccess);
  expect_agreed(zfcGroupEnd(comm_), zfcMismatch, {"call 0 of the group", "count", "rank 1"});
  EXPECT_EQ(sums, std::vector<float>(3, -3.0f));
}

TEST_F(GroupErrorTest, GroupOnOneRankPlainCallOnTheOthers) {
  if (size_ < 2) GTEST_SKIP() << "ranks that disagree: one rank cannot";
  std::vector<float> sums(3, -3.0f);
  if (rank_ == 1) ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  zfcResult_t got = zfcAllReduce(comm_, scalars_.data(), sums.data(), 3, zfcFloat32, nullptr,
                                 nullptr, nullptr);
  if (rank_ == 1) got = zfcGroupEnd(comm_);
  EXPECT_EQ(sums, std::vector<float>(3, -3.0f));
  expect_agreed(got, zfcMismatch, {"out of step", "zfcGroupEnd"});
}

TEST_F(GroupErrorTest, CallsThatCannotBeGrouped) {
  std::vector<int32_t> idx = {1, 2}, unique_out(8);
  size_t num_unique = 0;
  zfcSparseResult_t a = ZFC_SPARSE_RESULT_INITIALIZER, b = ZFC_SPARSE_RESULT_INITIALIZER;
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  EXPECT_EQ(zfcUniqueMerge(comm_, idx.data(), zfcInt32, 2, 10, unique_out.data(), 8,
                           &num_unique, nullptr, nullptr), zfcInvalidUsage);
  expect_agreed(zfcGroupEnd(comm_), zfcInvalidUsage, {"zfcUniqueMerge", "zfcGroupStart"});
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcSparseReduce(in_plan_, in_.indices.data(), in_.indices.size(), in_.rows.data(),
                            &a, nullptr), zfcSuccess);
  ASSERT_EQ(zfcSparseReduce(in_plan_, in_.indices.data(), in_.indices.size(), in_.rows.data(),
                            &b, nullptr), zfcSuccess);
  EXPECT_EQ(zfcSparsePlanDestroy(in_plan_), zfcInvalidUsage);
  expect_agreed(zfcGroupEnd(comm_), zfcInvalidUsage, {"twice in one group"});
  EXPECT_EQ(a.indices, nullptr);
}

}  // namespace
}  // namespace test
}  // namespace zfc
