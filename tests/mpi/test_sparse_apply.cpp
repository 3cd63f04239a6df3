// The fused reduce-and-apply of a replicated table (zfcSparseReduceApply) across ranks: after
// several steps the table (and Adagrad's state) holds bit for bit what zfcSparseReduce and
// zfcApplyUpdate give, for every update kind, algorithm, index type and stream chunk, fp16 on
// the wire included; an overflow anywhere leaves every table as it was; bad input fails every
// rank alike and writes nothing; the stream's bytes are exactly the documented ones, and the
// library holds less than the U_g x dim result.
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <tuple>

#include "sparse_helpers.hpp"

namespace zfc {
namespace test {
namespace {

constexpr size_t kDim = 8;
constexpr int64_t kVocab = 3000;

std::vector<float> fresh_table(int64_t vocab, size_t dim) {
  std::vector<float> table(static_cast<size_t>(vocab) * dim);
  for (size_t i = 0; i < table.size(); ++i) {
    table[i] = static_cast<float>((i * 131) % 1000) / 1000.0f - 0.5f;
  }
  return table;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct PlanArgs {
  zfcAlgorithm_t algorithm = zfcAlgoDefault;
  zfcDataType_t index_type = zfcInt32;
  zfcCompressionKind_t compression = zfcCompressNone;
  float scale = 1.0f;
  size_t chunk = 0;
  size_t dim = kDim;
  int64_t vocab = kVocab;
};

zfcSparsePlan_t make_plan(zfcComm_t comm, const PlanArgs& a) {
  zfcSparsePlanConfig_t c = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  c.dim = a.dim;
  c.vocab_size = a.vocab;
  c.index_type = a.index_type;
  c.algorithm = a.algorithm;
  c.compression = a.compression;
  c.compress_scale = a.scale;
  c.stream_chunk_bytes = a.chunk;
  zfcSparsePlan_t plan = nullptr;
  EXPECT_EQ(zfcSparsePlanCreate(comm, &c, &plan), zfcSuccess);
  return plan;
}

size_t step_tokens(int r, int step) {
  if (r == 1 && step == 2) return 0;  // a rank with nothing to say, once
  return 200 + 37 * static_cast<size_t>(r) + 11 * static_cast<size_t>(step);
}

const char* update_name(zfcUpdateKind_t kind) {
  return kind == zfcUpdateAdd ? "add" : kind == zfcUpdateSgd ? "sgd" : "adagrad";
}

// (update, algorithm, stream chunk in bytes: 0 is the default, 1 a pair per owner a round).
using FusedParam = std::tuple<zfcUpdateKind_t, zfcAlgorithm_t, size_t>;

class FusedApplyTest : public WorldTest, public ::testing::WithParamInterface<FusedParam> {};

TEST_P(FusedApplyTest, TableMatchesReduceThenApplyBitForBit) {
  const auto [kind, algorithm, chunk] = GetParam();
  // fp32 sums have the same bits in every algorithm: the reference runs another one.
  const zfcAlgorithm_t reference_algo =
      algorithm == zfcAlgoOwnerPartitioned ? zfcAlgoUniqueAllReduce : zfcAlgoOwnerPartitioned;
  std::vector<float> want = fresh_table(kVocab, kDim), want_state(want.size(), 0.25f);
  std::vector<float> got = want, got_state = want_state;
  zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
  update.kind = kind;
  update.alpha = 0.05f;
  update.epsilon = 1e-6f;
  for (int step = 0; step < 4; ++step) {
    // Both index types: int64 on odd steps.
    PlanArgs args;
    args.index_type = step % 2 == 1 ? zfcInt64 : zfcInt32;
    args.algorithm = reference_algo;
    zfcSparsePlan_t reference = make_plan(comm_, args);
    args.algorithm = algorithm;
    args.chunk = chunk;
    zfcSparsePlan_t fused = make_plan(comm_, args);
    const Workload w = zipf_workload(size_, kDim, kVocab, 1.1, 60 + step,
                                     [step](int r) { return step_tokens(r, step); });
    const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
    const std::vector<char> ids = typed_indices(mine.indices, args.index_type);
    zfcSparseResult_t reduced = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduce(reference, ids.data(), mine.indices.size(), mine.rows.data(),
                              &reduced, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    if (kind == zfcUpdateAdd) {
      ASSERT_EQ(zfcApplyRows(want.data(), kVocab, kDim, reduced.indices, args.index_type,
                             reduced.rows, reduced.num_unique, update.alpha, nullptr),
                zfcSuccess);
    } else {
      ASSERT_EQ(zfcApplyUpdate(want.data(), want_state.data(), kVocab, kDim, reduced.indices,
                               args.index_type, reduced.rows, reduced.num_unique, &update,
                               nullptr),
                zfcSuccess);
    }
    int overflowed = -1;
    ASSERT_EQ(zfcSparseReduceApply(fused, ids.data(), mine.indices.size(), mine.rows.data(),
                                   &update, got.data(), got_state.data(), &overflowed, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    EXPECT_EQ(overflowed, 0);
    zfcStats_t stats = ZFC_STATS_INITIALIZER;
    ASSERT_EQ(zfcCommGetStats(comm_, &stats), zfcSuccess);
    EXPECT_EQ(stats.last.algorithm,
              algorithm == zfcAlgoDefault ? zfcAlgoKeyRouted : static_cast<int>(algorithm));
    EXPECT_EQ(stats.last.global_unique, reduced.num_unique);
    ASSERT_TRUE(same_bits(got, want)) << "step " << step;
    EXPECT_EQ(zfcSparsePlanDestroy(reference), zfcSuccess);
    EXPECT_EQ(zfcSparsePlanDestroy(fused), zfcSuccess);
  }
  if (kind == zfcUpdateAdagrad) EXPECT_TRUE(same_bits(got_state, want_state));
}

INSTANTIATE_TEST_SUITE_P(
    UpdatesAlgorithmsChunks, FusedApplyTest,
    ::testing::Combine(::testing::Values(zfcUpdateAdd, zfcUpdateSgd, zfcUpdateAdagrad),
                       ::testing::Values(zfcAlgoDefault, zfcAlgoKeyRouted,
                                         zfcAlgoOwnerPartitioned, zfcAlgoAllGather),
                       ::testing::Values(size_t{0}, size_t{1}, size_t{3000})),
    [](const auto& info) {
      return std::string(update_name(std::get<0>(info.param))) + "_" +
             zfcGetAlgorithmName(std::get<1>(info.param)) + "_chunk" +
             std::to_string(std::get<2>(info.param));
    });

TEST_F(WorldTest, HalfPrecisionOnTheWireGivesTheUnfusedBits) {
  for (zfcCompressionKind_t compression : {zfcCompressFp16, zfcCompressBf16}) {
    PlanArgs args;
    args.algorithm = zfcAlgoKeyRouted;
    args.compression = compression;
    zfcSparsePlan_t reference = make_plan(comm_, args);
    args.chunk = 200;
    zfcSparsePlan_t fused = make_plan(comm_, args);
    const Workload w = zipf_workload(size_, kDim, kVocab, 1.1, 9, [](int r) {
      return 300 + 5 * static_cast<size_t>(r);
    });
    const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
    const std::vector<char> ids = typed_indices(mine.indices, zfcInt32);
    std::vector<float> want = fresh_table(kVocab, kDim), got = want;
    zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
    update.kind = zfcUpdateSgd;
    update.alpha = 0.5f;
    zfcSparseResult_t reduced = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduce(reference, ids.data(), mine.indices.size(), mine.rows.data(),
                              &reduced, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    ASSERT_EQ(zfcApplyUpdate(want.data(), nullptr, kVocab, kDim, reduced.indices, zfcInt32,
                             reduced.rows, reduced.num_unique, &update, nullptr),
              zfcSuccess);
    int overflowed = -1;
    ASSERT_EQ(zfcSparseReduceApply(fused, ids.data(), mine.indices.size(), mine.rows.data(),
                                   &update, got.data(), nullptr, &overflowed, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    EXPECT_EQ(overflowed, 0);
    EXPECT_TRUE(same_bits(got, want)) << zfcGetAlgorithmName(zfcAlgoKeyRouted);
    EXPECT_EQ(zfcSparsePlanDestroy(reference), zfcSuccess);
    EXPECT_EQ(zfcSparsePlanDestroy(fused), zfcSuccess);
  }
}

// One fused step of `args` in which rank `bad_rank`'s row value at `at` is `value`: every rank
// must report the overflow and leave its table as it was.
void expect_overflow_leaves_table(zfcComm_t comm, int rank, const PlanArgs& args, int bad_rank,
                                  size_t at, float value) {
  zfcSparsePlan_t plan = make_plan(comm, args);
  const std::vector<float> kept = fresh_table(kVocab, kDim);
  std::vector<float> table = kept;
  std::vector<int64_t> ids;
  for (int64_t v = 0; v < 40; ++v) ids.push_back(v * 7 + rank);
  const std::vector<char> typed = typed_indices(ids, args.index_type);
  std::vector<float> rows(ids.size() * kDim, 0.125f);
  if (rank == bad_rank) rows[at] = value;
  zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
  int overflowed = -1;
  const char* what = zfcGetAlgorithmName(args.algorithm);
  ASSERT_EQ(zfcSparseReduceApply(plan, typed.data(), ids.size(), rows.data(), &update,
                                 table.data(), nullptr, &overflowed, nullptr),
            zfcSuccess)
      << zfcGetLastError(comm);
  EXPECT_EQ(overflowed, 1) << what;
  EXPECT_TRUE(same_bits(table, kept)) << what;
  zfcStats_t stats = ZFC_STATS_INITIALIZER;
  ASSERT_EQ(zfcCommGetStats(comm, &stats), zfcSuccess);
  EXPECT_EQ(stats.last.overflows, 1u) << what;
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

TEST_F(WorldTest, AnOverflowAnywhereLeavesEveryTableAsItWas) {
  for (zfcAlgorithm_t algorithm : {zfcAlgoKeyRouted, zfcAlgoOwnerPartitioned}) {
    PlanArgs args;
    args.algorithm = algorithm;
    args.index_type = zfcInt64;
    args.compression = zfcCompressFp16;
    args.chunk = 1;
    // The last rank's third row from the end leaves fp16's range.
    expect_overflow_leaves_table(comm_, rank_, args, size_ - 1, 40 * kDim - 3, 1e6f);
  }
}

// A row bf16 holds at a scale of 1/8 but that decodes past fp32's range (FLT_MAX / 8 is 2^125
// on the wire, 2^128 once divided): the fused apply sees the overflow and writes no row.
TEST_F(WorldTest, AnOverflowOnlyTheDecodeMakesLeavesEveryTableAsItWas) {
  for (zfcAlgorithm_t algorithm : {zfcAlgoKeyRouted, zfcAlgoOwnerPartitioned}) {
    PlanArgs args;
    args.algorithm = algorithm;
    args.compression = zfcCompressBf16;
    args.scale = 0.125f;
    args.chunk = 1;
    expect_overflow_leaves_table(comm_, rank_, args, 0, 5, std::numeric_limits<float>::max());
  }
}

TEST_F(WorldTest, BadInputFailsEveryRankAndWritesNothing) {
  const std::vector<float> kept = fresh_table(kVocab, kDim);
  std::vector<float> table = kept;
  PlanArgs args;
  args.index_type = zfcInt64;
  zfcSparsePlan_t plan = make_plan(comm_, args);
  const int last = size_ - 1;
  std::vector<int64_t> ids = {1, 2, 3, rank_ == last ? kVocab : 4};
  const std::vector<float> rows(ids.size() * kDim, 1.0f);
  zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
  int overflowed = -1;
  const auto fused = [&](zfcSparsePlan_t p, float* t, float* s) {
    return zfcSparseReduceApply(p, ids.data(), ids.size(), rows.data(), &update, t, s,
                                &overflowed, nullptr);
  };
  // An id outside the vocabulary on the last rank.
  EXPECT_EQ(fused(plan, table.data(), nullptr), zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("rank " + std::to_string(last) + ":"),
            std::string::npos)
      << zfcGetLastError(comm_);
  ids.back() = 4;
  // No table on rank 0; Adagrad without its state everywhere.
  EXPECT_EQ(fused(plan, rank_ == 0 ? nullptr : table.data(), nullptr), zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("rank 0: table is NULL"),
            std::string::npos)
      << zfcGetLastError(comm_);
  update.kind = zfcUpdateAdagrad;
  EXPECT_EQ(fused(plan, table.data(), nullptr), zfcInvalidArgument);
  update.kind = zfcUpdateSgd;
  // Inside a group.
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  EXPECT_EQ(fused(plan, table.data(), nullptr), zfcInvalidUsage);
  EXPECT_NE(zfcGroupEnd(comm_), zfcSuccess);
  if (size_ > 1) {
    // Ranks that disagree on the update, or on the stream's chunk.
    update.alpha = rank_ == last ? 0.25f : 0.5f;
    EXPECT_EQ(fused(plan, table.data(), nullptr), zfcMismatch);
    EXPECT_NE(std::string(zfcGetLastError(comm_)).find("the update differs"),
              std::string::npos);
    update.alpha = 0.5f;
    args.chunk = rank_ == last ? 4096 : 8192;
    zfcSparsePlan_t uneven = make_plan(comm_, args);
    EXPECT_EQ(fused(uneven, table.data(), nullptr), zfcMismatch);
    EXPECT_NE(std::string(zfcGetLastError(comm_)).find("stream_chunk_bytes differs"),
              std::string::npos)
        << zfcGetLastError(comm_);
    EXPECT_EQ(zfcSparsePlanDestroy(uneven), zfcSuccess);
  }
  EXPECT_TRUE(same_bits(table, kept));
  EXPECT_EQ(overflowed, -1);
  // The communicator is still usable.
  update.alpha = 0.5f;
  EXPECT_EQ(fused(plan, table.data(), nullptr), zfcSuccess) << zfcGetLastError(comm_);
  EXPECT_EQ(overflowed, 0);
  EXPECT_FALSE(same_bits(table, kept));
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

// The owner of id v (the key-routed exchange's, which the sharded layout documents).
int owner_of(int64_t v, int size) {
  int owner = -1;
  EXPECT_EQ(zfcShardLocate(kVocab, size, v, &owner, nullptr), zfcSuccess);
  return owner;
}

// The bytes of an owner's n pairs on the wire after a lead: keys travel as 4 bytes (V < 2^32),
// keys and rows each padded to 8 bytes.
uint64_t pair_bytes(size_t n) { return (4 * n + 7) / 8 * 8 + n * kDim * 4; }

// The stream moves exactly the unfused exchange's bytes but for its blocks' framing: each
// owner sends a 24-byte report and a part of its pairs in the first round instead of a
// 16-byte report and all of them, then an 8-byte count and the next part in every later
// round. And the library never holds the U_g x dim result.
TEST_F(WorldTest, StreamBytesAreTheUnfusedOnesPlusTheLeads) {
  const Workload w = zipf_workload(size_, kDim, kVocab, 1.1, 21, [](int r) {
    return 400 + 13 * static_cast<size_t>(r);
  });
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  std::vector<size_t> owned(static_cast<size_t>(size_), 0);
  std::set<int64_t> global;
  for (const RankInput& r : w.ranks) global.insert(r.indices.begin(), r.indices.end());
  for (int64_t v : global) ++owned[static_cast<size_t>(owner_of(v, size_))];
  size_t largest = 0;
  for (size_t n : owned) largest = std::max(largest, n);
  const size_t per_round = 5;  // pairs per owner per round
  const size_t chunk = per_round * (4 + kDim * 4) * static_cast<size_t>(size_);
  const size_t rounds = std::max<size_t>(1, (largest + per_round - 1) / per_round);
  // What each owner's blocks grow by, over all rounds.
  std::vector<int64_t> grows(owned.size());
  for (size_t j = 0; j < owned.size(); ++j) {
    int64_t streamed = 0;
    for (size_t c = 0; c < rounds; ++c) {
      const size_t first = c * per_round;
      const size_t n = owned[j] > first ? std::min(owned[j] - first, per_round) : 0;
      streamed += static_cast<int64_t>((c == 0 ? 24 : 8) + pair_bytes(n));
    }
    grows[j] = streamed - static_cast<int64_t>(16 + pair_bytes(owned[j]));
  }
  PlanArgs args;
  args.index_type = zfcInt64;
  args.algorithm = zfcAlgoKeyRouted;
  zfcOpStats_t unfused{}, streamed{};
  {
    zfcSparsePlan_t plan = make_plan(comm_, args);
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduce(plan, mine.indices.data(), mine.indices.size(), mine.rows.data(),
                              &out, nullptr),
              zfcSuccess);
    zfcStats_t stats = ZFC_STATS_INITIALIZER;
    ASSERT_EQ(zfcCommGetStats(comm_, &stats), zfcSuccess);
    unfused = stats.last;
    EXPECT_EQ(out.num_unique, global.size());
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  }
  {
    args.chunk = chunk;
    zfcSparsePlan_t plan = make_plan(comm_, args);
    std::vector<float> table = fresh_table(kVocab, kDim);
    zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
    ASSERT_EQ(zfcSparseReduceApply(plan, mine.indices.data(), mine.indices.size(),
                                   mine.rows.data(), &update, table.data(), nullptr, nullptr,
                                   nullptr),
              zfcSuccess);
    zfcStats_t stats = ZFC_STATS_INITIALIZER;
    ASSERT_EQ(zfcCommGetStats(comm_, &stats), zfcSuccess);
    streamed = stats.last;
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  }
  const int64_t peers = size_ - 1;
  int64_t received = 0;
  for (int j = 0; j < size_; ++j) received += j == rank_ ? 0 : grows[static_cast<size_t>(j)];
  EXPECT_EQ(static_cast<int64_t>(streamed.bytes_received - unfused.bytes_received), received);
  EXPECT_EQ(static_cast<int64_t>(streamed.bytes_sent - unfused.bytes_sent),
            grows[static_cast<size_t>(rank_)] * peers);
  EXPECT_EQ(streamed.rounds, unfused.rounds + static_cast<int32_t>(rounds) - 1);
  EXPECT_EQ(streamed.global_unique, global.size());
  // The unfused exchange holds the U_g x dim result in fp32 and the gathered pairs; the
  // stream holds one round of at most `chunk` bytes (and the leads) instead.
  const uint64_t result = global.size() * kDim * 4;
  EXPECT_LE(streamed.peak_workspace_bytes + result, unfused.peak_workspace_bytes)
      << "streamed " << streamed.peak_workspace_bytes << ", unfused "
      << unfused.peak_workspace_bytes << ", U_g x dim x 4 = " << result;
}

}  // namespace
}  // namespace test
}  // namespace zfc
