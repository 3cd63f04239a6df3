// zfcSparseReduceInto: the result of zfcSparseReduce written into the caller's buffers. The
// same indices and bits as the plan-owned result for every algorithm and index type, the
// same bytes on the wire, no U_g x dim result in the plan's workspace, a capacity below U_g
// on any rank refused on every rank before anything is written, and the call in a group.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "sparse_helpers.hpp"

namespace zfc {
namespace test {
namespace {

constexpr size_t kDim = 12;
constexpr int64_t kVocab = 2000;

// A NaN whose bits no result has: what an untouched buffer still holds.
float sentinel() {
  const uint32_t bits = 0x7fc0dead;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

bool untouched(const std::vector<float>& v) {
  const float s = sentinel();
  for (float x : v) {
    if (std::memcmp(&x, &s, sizeof x) != 0) return false;
  }
  return true;
}

struct Call {
  zfcResult_t result = zfcInternalError;
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  zfcOpStats_t stats{};
  std::string error;
  std::vector<char> kept_ids;  // a plan-owned result, copied before the plan goes
  std::vector<float> kept_rows;
};

zfcSparsePlan_t make_plan(zfcComm_t comm, zfcAlgorithm_t algorithm, zfcDataType_t index_type,
                          int compression = -1, float scale = 1.0f) {
  return make_test_plan(comm, kDim, kVocab, algorithm, index_type, compression, scale);
}

// One call on a fresh plan: zfcSparseReduce, or, with `rows_out`, zfcSparseReduceInto.
Call reduce(zfcComm_t comm, zfcAlgorithm_t algorithm, zfcDataType_t index_type,
            const RankInput& mine, void* ids_out, float* rows_out, size_t capacity) {
  zfcSparsePlan_t plan = make_plan(comm, algorithm, index_type);
  const std::vector<char> ids = typed_indices(mine.indices, index_type);
  Call c;
  c.result = rows_out == nullptr && ids_out == nullptr
                 ? zfcSparseReduce(plan, ids.data(), mine.indices.size(), mine.rows.data(),
                                   &c.out, nullptr)
                 : zfcSparseReduceInto(plan, ids.data(), mine.indices.size(),
                                       mine.rows.data(), ids_out, rows_out, capacity, &c.out,
                                       nullptr);
  if (c.result != zfcSuccess) c.error = zfcGetLastError(comm);
  zfcStats_t stats = ZFC_STATS_INITIALIZER;
  zfcCommGetStats(comm, &stats);
  c.stats = stats.last;
  // A plan's own result dies with the plan (moving the vectors keeps their buffers).
  if (c.result == zfcSuccess && rows_out == nullptr && ids_out == nullptr) {
    const size_t index_bytes = index_type == zfcInt32 ? 4 : 8;
    const char* ids_in = static_cast<const char*>(c.out.indices);
    c.kept_ids.assign(ids_in, ids_in + c.out.num_unique * index_bytes);
    c.kept_rows.assign(c.out.rows, c.out.rows + c.out.num_unique * kDim);
    c.out.indices = c.kept_ids.data();
    c.out.rows = c.kept_rows.data();
  }
  zfcSparsePlanDestroy(plan);
  return c;
}

class IntoTest : public EveryAlgorithmTest {
 protected:
  Workload workload() const {
    return zipf_workload(size_, kDim, kVocab, 1.1, 17, [](int r) {
      return r == 1 ? size_t{0} : 90 + 23 * static_cast<size_t>(r);
    });
  }
};

// One zfcSparseReduce of `mine` on a new plan of `a`; false (a test failure) when the plan
// or the call fails. The plan, which owns *out, is the caller's to destroy.
bool reduce_once(zfcComm_t comm, zfcAlgorithm_t a, const RankInput& mine,
                 const std::vector<char>& ids, int compression, float scale,
                 zfcSparsePlan_t* plan, zfcSparseResult_t* out) {
  *plan = make_plan(comm, a, zfcInt32, compression, scale);
  if (*plan == nullptr) return false;
  *out = ZFC_SPARSE_RESULT_INITIALIZER;
  const zfcResult_t r =
      zfcSparseReduce(*plan, ids.data(), mine.indices.size(), mine.rows.data(), out, nullptr);
  EXPECT_EQ(r, zfcSuccess) << zfcGetAlgorithmName(a) << ": " << zfcGetLastError(comm);
  return r == zfcSuccess;
}

TEST_F(IntoTest, TheCallersBuffersGetTheBitsOfThePlansResult) {
  const Workload w = workload();
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  for (const auto& [a, comm] : algorithms()) {
    for (zfcDataType_t type : {zfcInt32, zfcInt64}) {
      const std::string what = std::string(zfcGetAlgorithmName(a)) +
                               (type == zfcInt32 ? " int32" : " int64");
      const Call plain = reduce(comm, a, type, mine, nullptr, nullptr, 0);
      ASSERT_EQ(plain.result, zfcSuccess) << what << ": " << plain.error;
      const size_t ug = plain.out.num_unique, index_bytes = type == zfcInt32 ? 4 : 8;
      // Ranks give different rooms, each enough; the room past U_g stays as it was.
      const size_t capacity = ug + static_cast<size_t>(rank_);
      std::vector<char> ids(capacity * index_bytes + 1, '\x5a');
      std::vector<float> rows(capacity * kDim, sentinel());
      const Call into = reduce(comm, a, type, mine, ids.data(), rows.data(), capacity);
      ASSERT_EQ(into.result, zfcSuccess) << what << ": " << into.error;
      EXPECT_EQ(into.out.indices, ids.data()) << what;
      EXPECT_EQ(into.out.rows, rows.data()) << what;
      ASSERT_EQ(into.out.num_unique, ug) << what;
      EXPECT_EQ(into.out.algorithm, plain.out.algorithm) << what;
      EXPECT_EQ(into.out.overflowed, 0) << what;
      EXPECT_EQ(std::memcmp(ids.data(), plain.out.indices, ug * index_bytes), 0) << what;
      EXPECT_EQ(std::memcmp(rows.data(), plain.out.rows, ug * kDim * sizeof(float)), 0) << what;
      EXPECT_TRUE(untouched(std::vector<float>(rows.begin() + ug * kDim, rows.end()))) << what;
      EXPECT_EQ(ids.back(), '\x5a') << what;
      // The same exchange: the same bytes and rounds; the result is not in the workspace.
      EXPECT_EQ(into.stats.bytes_sent, plain.stats.bytes_sent) << what;
      EXPECT_EQ(into.stats.bytes_received, plain.stats.bytes_received) << what;
      EXPECT_EQ(into.stats.rounds, plain.stats.rounds) << what;
      EXPECT_LE(into.stats.peak_workspace_bytes + ug * kDim * sizeof(float),
                plain.stats.peak_workspace_bytes)
          << what << ": into " << into.stats.peak_workspace_bytes << ", plain "
          << plain.stats.peak_workspace_bytes << ", U_g " << ug;
    }
  }
}

// A row that bf16 holds at a scale of 1/8 but that decodes past fp32's range (FLT_MAX / 8
// rounds up to 2^125 on the wire, 2^128 once divided): every algorithm, hierarchical and
// auto included, reports the overflow on every rank.
TEST_F(IntoTest, AnOverflowOnlyTheDecodeMakesIsAgreedByEveryAlgorithm) {
  Workload w = workload();
  w.ranks[0].rows[0] = std::numeric_limits<float>::max();
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  const std::vector<char> ids = typed_indices(mine.indices, zfcInt32);
  for (const auto& [a, comm] : algorithms()) {
    zfcSparsePlan_t plan = nullptr;
    zfcSparseResult_t out;
    ASSERT_TRUE(reduce_once(comm, a, mine, ids, zfcCompressBf16, 0.125f, &plan, &out));
    EXPECT_EQ(out.overflowed, 1) << zfcGetAlgorithmName(a);
    EXPECT_TRUE(same_on_all_ranks(out.overflowed)) << zfcGetAlgorithmName(a);
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  }
}

// Rows of -0 only: every sum starts from +0, so every algorithm returns +0 (no sum is -0),
// on every wire, whether its owners zero-fill or write a row's first contribution.
TEST_F(IntoTest, RowsOfNegativeZeroSumToPositiveZeroInEveryAlgorithm) {
  Workload w = workload();
  for (RankInput& r : w.ranks) std::fill(r.rows.begin(), r.rows.end(), -0.0f);
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  const std::vector<char> ids = typed_indices(mine.indices, zfcInt32);
  for (int compression : {-1, static_cast<int>(zfcCompressFp16)}) {
    for (const auto& [a, comm] : algorithms()) {
      zfcSparsePlan_t plan = nullptr;
      zfcSparseResult_t out;
      ASSERT_TRUE(reduce_once(comm, a, mine, ids, compression, 1.0f, &plan, &out));
      size_t negative = 0;
      for (size_t i = 0; i < out.num_unique * kDim; ++i) negative += std::signbit(out.rows[i]);
      EXPECT_EQ(negative, 0u) << zfcGetAlgorithmName(a) << " compression " << compression;
      EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
    }
  }
}

TEST_F(IntoTest, ACapacityBelowUgOnOneRankFailsEveryRankBeforeAnyWrite) {
  const Workload w = workload();
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  for (const auto& [a, comm] : algorithms()) {
    const Call plain = reduce(comm, a, zfcInt64, mine, nullptr, nullptr, 0);
    ASSERT_EQ(plain.result, zfcSuccess) << plain.error;
    const size_t ug = plain.out.num_unique;
    ASSERT_GT(ug, 0u);
    const size_t capacity = rank_ == size_ - 1 ? ug - 1 : ug;
    std::vector<int64_t> ids(ug, -7);
    std::vector<float> rows(ug * kDim, sentinel());
    const Call into = reduce(comm, a, zfcInt64, mine, ids.data(), rows.data(), capacity);
    const std::string what = zfcGetAlgorithmName(a);
    EXPECT_EQ(into.result, zfcInvalidArgument) << what;
    const std::string expected = "rank " + std::to_string(size_ - 1) + ": capacity " +
                                 std::to_string(ug - 1) + " is smaller";
    EXPECT_NE(into.error.find(expected), std::string::npos) << what << ": " << into.error;
    EXPECT_TRUE(untouched(rows)) << what;
    EXPECT_EQ(ids, std::vector<int64_t>(ug, -7)) << what;
  }
}

TEST_F(IntoTest, MissingBuffersAreAgreedErrors) {
  const Workload w = workload();
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  std::vector<int32_t> ids(kVocab);
  std::vector<float> rows(static_cast<size_t>(kVocab) * kDim);
  const bool culprit = rank_ == 0;
  const Call c = reduce(comm_, zfcAlgoAuto, zfcInt32, mine, ids.data(),
                        culprit ? nullptr : rows.data(), ids.size());
  EXPECT_EQ(c.result, zfcInvalidArgument);
  EXPECT_NE(c.error.find("out_rows is NULL with capacity 2000"), std::string::npos) << c.error;
  const Call d = reduce(comm_, zfcAlgoAuto, zfcInt32, mine, culprit ? nullptr : ids.data(),
                        rows.data(), ids.size());
  EXPECT_EQ(d.result, zfcInvalidArgument);
  EXPECT_NE(d.error.find("out_indices is NULL"), std::string::npos) << d.error;
}

// The result may overwrite the input rows (the caller's one buffer for both): every
// algorithm still gives the bits of the plan-owned result.
TEST_F(IntoTest, TheResultMayOverwriteTheInputRows) {
  const Workload w = workload();
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  for (const auto& [a, comm] : algorithms()) {
    const Call plain = reduce(comm, a, zfcInt64, mine, nullptr, nullptr, 0);
    ASSERT_EQ(plain.result, zfcSuccess) << plain.error;
    const size_t ug = plain.out.num_unique, count = mine.indices.size();
    const size_t room = std::max(ug, count);
    RankInput shared = mine;  // the input rows, at the head of a buffer of `room` rows
    shared.rows.resize(room * kDim, sentinel());
    zfcSparsePlan_t plan = make_plan(comm, a, zfcInt64);
    std::vector<int64_t> ids(room);
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduceInto(plan, shared.indices.data(), count, shared.rows.data(),
                                  ids.data(), shared.rows.data(), room, &out, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm);
    EXPECT_EQ(out.rows, shared.rows.data());
    ASSERT_EQ(out.num_unique, ug);
    EXPECT_EQ(std::memcmp(shared.rows.data(), plain.out.rows, ug * kDim * sizeof(float)), 0)
        << zfcGetAlgorithmName(a);
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  }
}

// Every rank brings nothing: U_g is 0, and no room is needed.
TEST_F(IntoTest, AnEmptyResultNeedsNoRoom) {
  const RankInput none;
  int32_t id = -1;
  const Call c = reduce(comm_, zfcAlgoOwnerPartitioned, zfcInt32, none, &id, nullptr, 0);
  ASSERT_EQ(c.result, zfcSuccess) << c.error;
  EXPECT_EQ(c.out.num_unique, 0u);
  EXPECT_EQ(id, -1);
}

TEST_F(IntoTest, InAGroupTheBuffersAreWrittenAtItsEndAndOnlyOnSuccess) {
  const Workload w = workload();
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  const Call plain = reduce(comm_, zfcAlgoKeyRouted, zfcInt64, mine, nullptr, nullptr, 0);
  ASSERT_EQ(plain.result, zfcSuccess) << plain.error;
  const size_t ug = plain.out.num_unique;
  zfcSparsePlan_t plan = make_plan(comm_, zfcAlgoKeyRouted, zfcInt64);
  std::vector<int64_t> ids(ug);
  std::vector<float> rows(ug * kDim, sentinel());
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  float loss = static_cast<float>(rank_ + 1);
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcSparseReduceInto(plan, mine.indices.data(), mine.indices.size(),
                                mine.rows.data(), ids.data(), rows.data(), ug, &out, nullptr),
            zfcSuccess);
  ASSERT_EQ(zfcAllReduce(comm_, &loss, &loss, 1, zfcFloat32, nullptr, nullptr, nullptr),
            zfcSuccess);
  EXPECT_TRUE(untouched(rows));  // recorded, not run
  ASSERT_EQ(zfcGroupEnd(comm_), zfcSuccess) << zfcGetLastError(comm_);
  EXPECT_EQ(loss, static_cast<float>(size_ * (size_ + 1) / 2));
  ASSERT_EQ(out.num_unique, ug);
  EXPECT_EQ(out.rows, rows.data());
  EXPECT_EQ(std::memcmp(ids.data(), plain.out.indices, ug * sizeof(int64_t)), 0);
  EXPECT_EQ(std::memcmp(rows.data(), plain.out.rows, ug * kDim * sizeof(float)), 0);
  // A room too small on the last rank fails the group on every rank, and no buffer of the
  // group is written: neither the caller's rows nor an allreduce's (one that does not ride).
  const size_t room = rank_ == size_ - 1 ? ug - 1 : ug;
  std::vector<float> short_rows(room * kDim, sentinel());
  std::vector<float> dense(1000, 1.0f), summed(1000, sentinel());
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcAllReduce(comm_, dense.data(), summed.data(), dense.size(), zfcFloat32, nullptr,
                         nullptr, nullptr),
            zfcSuccess);
  ASSERT_EQ(zfcSparseReduceInto(plan, mine.indices.data(), mine.indices.size(),
                                mine.rows.data(), ids.data(), short_rows.data(), room, &out,
                                nullptr),
            zfcSuccess);
  EXPECT_EQ(zfcGroupEnd(comm_), zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("capacity"), std::string::npos)
      << zfcGetLastError(comm_);
  EXPECT_TRUE(untouched(short_rows));
  EXPECT_TRUE(untouched(summed));
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

}  // namespace
}  // namespace test
}  // namespace zfc
