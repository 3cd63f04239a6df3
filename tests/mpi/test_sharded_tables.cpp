// Sharded embedding tables across ranks: after several steps the shards, gathered, hold
// bit for bit the replicated table updated by zfcSparseReduce and zfcApplyUpdate (fp32, every
// update kind, both index types); the forward lookup returns the table's current rows; bad
// input fails every rank alike and writes nothing; an overflow skips the update everywhere;
// the bytes each rank receives are exactly the documented ones, and the busiest rank's are
// known to every rank.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "common/forwarded_traffic.hpp"
#include "sparse_helpers.hpp"

namespace zfc {
namespace test {
namespace {

constexpr size_t kDim = 8;
constexpr int64_t kVocab = 3000;

float initial_value(int64_t v, size_t k) {
  return static_cast<float>((v * 131 + static_cast<int64_t>(k) * 17) % 1000) / 1000.0f - 0.5f;
}

bool same_bits(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

// This rank's shard of a table (and its Adagrad state), cut from the replicated one.
struct Shard {
  std::vector<float> table, state;
  size_t rows = 0;
};

Shard cut_shard(const std::vector<float>& full, const std::vector<float>& full_state,
                int64_t vocab, size_t dim, int size, int rank) {
  Shard s;
  EXPECT_EQ(zfcShardRows(vocab, size, rank, &s.rows), zfcSuccess);
  s.table.assign(s.rows * dim, NAN);
  s.state.assign(s.rows * dim, NAN);
  for (int64_t v = 0; v < vocab; ++v) {
    int owner = -1;
    size_t row = 0;
    EXPECT_EQ(zfcShardLocate(vocab, size, v, &owner, &row), zfcSuccess);
    if (owner != rank) continue;
    std::copy(&full[v * dim], &full[(v + 1) * dim], &s.table[row * dim]);
    std::copy(&full_state[v * dim], &full_state[(v + 1) * dim], &s.state[row * dim]);
  }
  return s;
}

zfcSparsePlan_t make_plan(zfcComm_t comm, zfcDataType_t index_type, zfcAlgorithm_t algorithm,
                          zfcCompressionKind_t compression = zfcCompressNone,
                          float scale = 1.0f) {
  return test::make_test_plan(comm, kDim, kVocab, algorithm, index_type, compression, scale);
}

int64_t id_at(const void* ids, zfcDataType_t type, size_t i) {
  if (type == zfcInt32) return static_cast<const int32_t*>(ids)[i];
  return static_cast<const int64_t*>(ids)[i];
}

// The whole table, gathered by this rank from the shards (ids 0..V-1 in order).
std::vector<float> gather_all(zfcComm_t comm, const Shard& shard) {
  zfcSparsePlan_t plan = make_plan(comm, zfcInt64, zfcAlgoDefault);
  std::vector<int64_t> all(static_cast<size_t>(kVocab));
  for (int64_t v = 0; v < kVocab; ++v) all[static_cast<size_t>(v)] = v;
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  EXPECT_EQ(zfcShardedGather(plan, shard.table.data(), shard.rows, all.data(), all.size(), &out,
                             nullptr, nullptr),
            zfcSuccess)
      << zfcGetLastError(comm);
  std::vector<float> table;
  if (out.rows != nullptr) table.assign(out.rows, out.rows + kVocab * kDim);
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  return table;
}

size_t step_tokens(int r, int step) {
  if (r == 1 && step == 2) return 0;  // a rank with nothing to say, once
  return 200 + 37 * static_cast<size_t>(r) + 11 * static_cast<size_t>(step);
}

const char* update_name(zfcUpdateKind_t kind) {
  return kind == zfcUpdateAdd ? "add" : kind == zfcUpdateSgd ? "sgd" : "adagrad";
}

class ShardedTableTest
    : public WorldTest,
      public ::testing::WithParamInterface<std::tuple<zfcUpdateKind_t, zfcDataType_t>> {};

TEST_P(ShardedTableTest, ShardsMatchTheReplicatedTableBitForBit) {
  const auto [kind, index_type] = GetParam();
  std::vector<float> table(kVocab * kDim), state(kVocab * kDim, 0.25f);
  for (int64_t v = 0; v < kVocab; ++v) {
    for (size_t k = 0; k < kDim; ++k) table[v * kDim + k] = initial_value(v, k);
  }
  Shard shard = cut_shard(table, state, kVocab, kDim, size_, rank_);
  zfcSparsePlan_t replicated = make_plan(comm_, index_type, zfcAlgoOwnerPartitioned);
  zfcSparsePlan_t sharded = make_plan(comm_, index_type, zfcAlgoDefault);
  zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
  update.kind = kind;
  update.alpha = 0.05f;
  update.epsilon = 1e-6f;
  for (int step = 0; step < 4; ++step) {
    const Workload w = zipf_workload(size_, kDim, kVocab, 1.1, 40 + step,
                                     [step](int r) { return step_tokens(r, step); });
    const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
    const std::vector<char> ids = typed_indices(mine.indices, index_type);
    // The forward lookup: this rank's distinct ids and the table's current rows.
    zfcSparseResult_t looked = ZFC_SPARSE_RESULT_INITIALIZER;
    std::vector<int32_t> positions(mine.indices.size(), -1);
    ASSERT_EQ(zfcShardedGather(sharded, shard.table.data(), shard.rows, ids.data(),
                               mine.indices.size(), &looked, positions.data(), nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    const std::set<int64_t> distinct(mine.indices.begin(), mine.indices.end());
    ASSERT_EQ(looked.num_unique, distinct.size());
    EXPECT_EQ(looked.algorithm, zfcAlgoKeyRouted);
    size_t p = 0;
    for (int64_t v : distinct) {
      ASSERT_EQ(id_at(looked.indices, index_type, p), v);
      ASSERT_TRUE(same_bits(looked.rows + p * kDim, &table[v * kDim], kDim)) << "id " << v;
      ++p;
    }
    for (size_t i = 0; i < mine.indices.size(); ++i) {
      ASSERT_EQ(id_at(looked.indices, index_type, static_cast<size_t>(positions[i])),
                mine.indices[i]);
    }
    // The replicated step, and the sharded one.
    zfcSparseResult_t reduced = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduce(replicated, ids.data(), mine.indices.size(), mine.rows.data(),
                              &reduced, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    ASSERT_EQ(zfcApplyUpdate(table.data(), state.data(), kVocab, kDim, reduced.indices,
                             index_type, reduced.rows, reduced.num_unique, &update, nullptr),
              zfcSuccess);
    int overflowed = -1;
    ASSERT_EQ(zfcShardedReduceApply(sharded, ids.data(), mine.indices.size(), mine.rows.data(),
                                    &update, shard.table.data(), shard.state.data(), shard.rows,
                                    &overflowed, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    EXPECT_EQ(overflowed, 0);
  }
  const std::vector<float> gathered = gather_all(comm_, shard);
  ASSERT_EQ(gathered.size(), table.size());
  for (int64_t v = 0; v < kVocab; ++v) {
    ASSERT_TRUE(same_bits(&gathered[v * kDim], &table[v * kDim], kDim)) << "id " << v;
  }
  if (kind == zfcUpdateAdagrad) {
    const Shard want = cut_shard(table, state, kVocab, kDim, size_, rank_);
    EXPECT_TRUE(same_bits(shard.state.data(), want.state.data(), shard.rows * kDim));
  }
  EXPECT_EQ(zfcSparsePlanDestroy(replicated), zfcSuccess);
  EXPECT_EQ(zfcSparsePlanDestroy(sharded), zfcSuccess);
}

INSTANTIATE_TEST_SUITE_P(
    UpdatesAndIndexTypes, ShardedTableTest,
    ::testing::Combine(::testing::Values(zfcUpdateAdd, zfcUpdateSgd, zfcUpdateAdagrad),
                       ::testing::Values(zfcInt32, zfcInt64)),
    [](const auto& info) {
      return std::string(update_name(std::get<0>(info.param))) +
             (std::get<1>(info.param) == zfcInt32 ? "_int32" : "_int64");
    });

std::vector<float> fresh_table() {
  std::vector<float> table(kVocab * kDim);
  for (int64_t v = 0; v < kVocab; ++v) {
    for (size_t k = 0; k < kDim; ++k) table[v * kDim + k] = initial_value(v, k);
  }
  return table;
}

TEST_F(WorldTest, HalfPrecisionOnTheWireRoundsEachRanksSumOnce) {
  std::vector<float> table = fresh_table(), state(table.size(), 0.0f);
  Shard shard = cut_shard(table, state, kVocab, kDim, size_, rank_);
  for (zfcCompressionKind_t kind : {zfcCompressFp16, zfcCompressBf16}) {
    zfcSparsePlan_t plan = make_plan(comm_, zfcInt32, zfcAlgoDefault, kind, 1.0f);
    const Workload w = zipf_workload(size_, kDim, kVocab, 1.1, 7, [](int r) {
      return 300 + 5 * static_cast<size_t>(r);
    });
    const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
    const std::vector<char> ids = typed_indices(mine.indices, zfcInt32);
    // The lookup's rows are the shard's, rounded to the wire type.
    const std::vector<float> before = gather_all(comm_, shard);
    zfcSparseResult_t looked = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcShardedGather(plan, shard.table.data(), shard.rows, ids.data(),
                               mine.indices.size(), &looked, nullptr, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    for (size_t p = 0; p < looked.num_unique; ++p) {
      const int64_t v = static_cast<const int32_t*>(looked.indices)[p];
      for (size_t k = 0; k < kDim; ++k) {
        ASSERT_EQ(looked.rows[p * kDim + k], wire_round(before[v * kDim + k], kind));
      }
    }
    zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
    update.kind = zfcUpdateSgd;
    update.alpha = 0.5f;
    int overflowed = -1;
    ASSERT_EQ(zfcShardedReduceApply(plan, ids.data(), mine.indices.size(), mine.rows.data(),
                                    &update, shard.table.data(), nullptr, shard.rows,
                                    &overflowed, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    EXPECT_EQ(overflowed, 0);
    // Exactly the update of each rank's sum rounded to the wire, summed in fp32 in rank order.
    const std::vector<float> after = gather_all(comm_, shard);
    const SparseReference ref = reference_sparse(w.ranks, kDim, kind);
    std::vector<float> want = before;
    for (size_t p = 0; p < ref.unique.size(); ++p) {
      for (size_t k = 0; k < kDim; ++k) {
        want[ref.unique[p] * kDim + k] -= 0.5f * ref.rows[p * kDim + k];
      }
    }
    ASSERT_EQ(after.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_TRUE(same_bits(&after[i], &want[i], 1))
          << "element " << i << ": " << after[i] << " vs " << want[i];
    }
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  }
}

TEST_F(WorldTest, BadInputFailsEveryRankAndWritesNothing) {
  std::vector<float> table = fresh_table(), state(table.size(), 0.0f);
  Shard shard = cut_shard(table, state, kVocab, kDim, size_, rank_);
  const std::vector<float> kept = shard.table;
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt64, zfcAlgoDefault);
  const int last = size_ - 1;
  std::vector<int64_t> ids = {1, 2, 3, rank_ == last ? kVocab : 4};
  const std::vector<float> rows(ids.size() * kDim, 1.0f);
  zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
  int overflowed = -1;
  // An id outside the vocabulary on the last rank.
  EXPECT_EQ(zfcShardedReduceApply(plan, ids.data(), ids.size(), rows.data(), &update,
                                  shard.table.data(), nullptr, shard.rows, &overflowed, nullptr),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("rank " + std::to_string(last) + ":"),
            std::string::npos)
      << zfcGetLastError(comm_);
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  EXPECT_EQ(zfcShardedGather(plan, shard.table.data(), shard.rows, ids.data(), ids.size(), &out,
                             nullptr, nullptr),
            zfcInvalidArgument);
  EXPECT_EQ(out.rows, nullptr);
  ids.back() = 4;
  // A shard of the wrong shape on rank 0.
  const size_t rows0 = shard.rows + (rank_ == 0 ? 1 : 0);
  EXPECT_EQ(zfcShardedReduceApply(plan, ids.data(), ids.size(), rows.data(), &update,
                                  shard.table.data(), nullptr, rows0, &overflowed, nullptr),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("rank 0: shard_rows is"),
            std::string::npos)
      << zfcGetLastError(comm_);
  // Adagrad without its state, on every rank.
  update.kind = zfcUpdateAdagrad;
  EXPECT_EQ(zfcShardedReduceApply(plan, ids.data(), ids.size(), rows.data(), &update,
                                  shard.table.data(), nullptr, shard.rows, &overflowed, nullptr),
            zfcInvalidArgument);
  update.kind = zfcUpdateSgd;
  if (size_ > 1) {
    // Ranks that disagree on the update.
    update.alpha = rank_ == last ? 0.25f : 0.5f;
    EXPECT_EQ(zfcShardedReduceApply(plan, ids.data(), ids.size(), rows.data(), &update,
                                    shard.table.data(), nullptr, shard.rows, &overflowed,
                                    nullptr),
              zfcMismatch);
    EXPECT_NE(std::string(zfcGetLastError(comm_)).find("the update differs"),
              std::string::npos);
  }
  EXPECT_TRUE(same_bits(shard.table.data(), kept.data(), kept.size()));
  EXPECT_EQ(overflowed, -1);
  // The communicator is still usable.
  update.alpha = 0.5f;
  EXPECT_EQ(zfcShardedReduceApply(plan, ids.data(), ids.size(), rows.data(), &update,
                                  shard.table.data(), nullptr, shard.rows, &overflowed, nullptr),
            zfcSuccess)
      << zfcGetLastError(comm_);
  EXPECT_EQ(overflowed, 0);
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

TEST_F(WorldTest, AnOverflowAnywhereLeavesEveryShardAsItWas) {
  std::vector<float> table = fresh_table(), state(table.size(), 0.0f);
  Shard shard = cut_shard(table, state, kVocab, kDim, size_, rank_);
  const std::vector<float> kept = shard.table;
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt64, zfcAlgoDefault, zfcCompressFp16, 1.0f);
  const std::vector<int64_t> ids = {5, static_cast<int64_t>(100 + rank_)};
  std::vector<float> rows(ids.size() * kDim, 0.125f);
  if (rank_ == size_ - 1) rows[kDim + 3] = 1e6f;  // beyond fp16's range once scaled
  zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
  int overflowed = -1;
  ASSERT_EQ(zfcShardedReduceApply(plan, ids.data(), ids.size(), rows.data(), &update,
                                  shard.table.data(), nullptr, shard.rows, &overflowed, nullptr),
            zfcSuccess)
      << zfcGetLastError(comm_);
  EXPECT_EQ(overflowed, 1);
  EXPECT_TRUE(same_bits(shard.table.data(), kept.data(), kept.size()));
  zfcStats_t stats = ZFC_STATS_INITIALIZER;
  ASSERT_EQ(zfcCommGetStats(comm_, &stats), zfcSuccess);
  EXPECT_EQ(stats.last.overflows, 1u);
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

// What `rank` receives in a gather and in an apply, from the documented formats: the
// headers, the ids others ask of it and the rows it is answered with (gather), or the
// (id, row) blocks others send it and the owners' reports (apply). `gather` and `apply` count
// each block once, at its destination (the ledger: the busiest rank's and the summed bytes);
// the *_wire figures are what the rank's network carries (zfcOpStats_t's bytes_received),
// relays included when the run routes its exchanges forwarded.
struct Expected {
  uint64_t gather = 0, apply = 0, gather_wire = 0, apply_wire = 0;
};

std::vector<Expected> expected_bytes(const Workload& w, int size, size_t key_bytes) {
  auto pad8 = [](uint64_t b) { return (b + 7) / 8 * 8; };
  const uint64_t G = static_cast<uint64_t>(size), row = kDim * 4;
  const size_t n = static_cast<size_t>(size);
  std::vector<std::set<int64_t>> distinct;
  for (const RankInput& in : w.ranks) distinct.emplace_back(in.indices.begin(), in.indices.end());
  auto owned_by = [&](size_t r, size_t owner) {
    uint64_t count = 0;
    for (int64_t v : distinct[r]) {
      int o = -1;
      EXPECT_EQ(zfcShardLocate(kVocab, size, v, &o, nullptr), zfcSuccess);
      count += static_cast<size_t>(o) == owner ? 1 : 0;
    }
    return count;
  };
  // The blocks of the three exchanges, from rank s to rank t.
  std::vector<std::vector<uint64_t>> ids(n, std::vector<uint64_t>(n)), replies = ids,
      pairs = ids;
  for (size_t s = 0; s < n; ++s) {
    for (size_t t = 0; t < n; ++t) {
      ids[s][t] = owned_by(s, t) * key_bytes;
      replies[s][t] = 8 + owned_by(t, s) * row;
      pairs[s][t] = 8 + pad8(owned_by(s, t) * key_bytes) + pad8(owned_by(s, t) * row);
    }
  }
  const std::vector<WireBytes> ids_wire = exchange_traffic(ids),
                               replies_wire = exchange_traffic(replies),
                               pairs_wire = exchange_traffic(pairs);
  std::vector<Expected> all(n);
  for (size_t t = 0; t < n; ++t) {
    Expected& e = all[t];
    e.gather = e.apply = 96 * (G - 1);
    e.apply += 16 * (G - 1);
    e.gather_wire = e.gather + ids_wire[t].received + replies_wire[t].received;
    e.apply_wire = e.apply + pairs_wire[t].received;
    for (size_t s = 0; s < n; ++s) {
      if (s == t) continue;
      e.gather += ids[s][t] + replies[s][t];
      e.apply += pairs[s][t];
    }
  }
  return all;
}

TEST_F(WorldTest, BytesAreExactAndEveryRankKnowsTheBusiestRank) {
  std::vector<float> table = fresh_table(), state(table.size(), 0.0f);
  Shard shard = cut_shard(table, state, kVocab, kDim, size_, rank_);
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt32, zfcAlgoDefault);
  const Workload w = zipf_workload(size_, kDim, kVocab, 1.1, 11, [](int r) {
    return 150 + 50 * static_cast<size_t>(r);
  });
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  const std::vector<char> ids = typed_indices(mine.indices, zfcInt32);
  const std::vector<Expected> want = expected_bytes(w, size_, 4);
  for (int call = 0; call < 2; ++call) {
    ASSERT_EQ(zfcCommResetStats(comm_), zfcSuccess);
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
    const zfcResult_t res =
        call == 0 ? zfcShardedGather(plan, shard.table.data(), shard.rows, ids.data(),
                                     mine.indices.size(), &out, nullptr, nullptr)
                  : zfcShardedReduceApply(plan, ids.data(), mine.indices.size(),
                                          mine.rows.data(), &update, shard.table.data(),
                                          nullptr, shard.rows, nullptr, nullptr);
    ASSERT_EQ(res, zfcSuccess) << zfcGetLastError(comm_);
    zfcStats_t stats = ZFC_STATS_INITIALIZER;
    ASSERT_EQ(zfcCommGetStats(comm_, &stats), zfcSuccess);
    uint64_t most = 0, sum = 0;
    for (const Expected& e : want) {
      const uint64_t b = call == 0 ? e.gather : e.apply;
      most = std::max(most, b);
      sum += b;
    }
    const Expected& me = want[static_cast<size_t>(rank_)];
    EXPECT_EQ(stats.last.bytes_received, call == 0 ? me.gather_wire : me.apply_wire)
        << "call " << call;
    EXPECT_EQ(stats.last.bytes_received_max, most) << "call " << call;
    EXPECT_EQ(stats.last.bytes_received_sum, sum) << "call " << call;
    EXPECT_EQ(stats.last.rounds, 3) << "call " << call;
    EXPECT_EQ(stats.last.local_unique, w.local_unique(rank_));
  }
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

TEST_F(WorldTest, TwoTablesInOneGroupGiveWhatTheyGiveAlone) {
  std::vector<float> table = fresh_table(), state(table.size(), 0.0f);
  Shard a = cut_shard(table, state, kVocab, kDim, size_, rank_);
  for (float& v : table) v *= -2.0f;
  Shard b = cut_shard(table, state, kVocab, kDim, size_, rank_);
  zfcSparsePlan_t pa = make_plan(comm_, zfcInt64, zfcAlgoDefault);
  zfcSparsePlan_t pb = make_plan(comm_, zfcInt64, zfcAlgoDefault);
  const Workload w = zipf_workload(size_, kDim, kVocab, 1.1, 21, [](int r) {
    return 100 + 9 * static_cast<size_t>(r);
  });
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  zfcSparseResult_t alone = ZFC_SPARSE_RESULT_INITIALIZER;
  ASSERT_EQ(zfcShardedGather(pa, b.table.data(), b.rows, mine.indices.data(),
                             mine.indices.size(), &alone, nullptr, nullptr),
            zfcSuccess);
  const std::vector<float> b_alone(alone.rows, alone.rows + alone.num_unique * kDim);
  zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
  Shard a_alone = a;
  ASSERT_EQ(zfcShardedReduceApply(pb, mine.indices.data(), mine.indices.size(),
                                  mine.rows.data(), &update, a_alone.table.data(), nullptr,
                                  a_alone.rows, nullptr, nullptr),
            zfcSuccess);
  zfcSparseResult_t grouped = ZFC_SPARSE_RESULT_INITIALIZER;
  int overflowed = -1;
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  ASSERT_EQ(zfcShardedGather(pa, b.table.data(), b.rows, mine.indices.data(),
                             mine.indices.size(), &grouped, nullptr, nullptr),
            zfcSuccess);
  ASSERT_EQ(zfcShardedReduceApply(pb, mine.indices.data(), mine.indices.size(),
                                  mine.rows.data(), &update, a.table.data(), nullptr, a.rows,
                                  &overflowed, nullptr),
            zfcSuccess);
  EXPECT_EQ(grouped.rows, nullptr);  // written at zfcGroupEnd
  ASSERT_EQ(zfcGroupEnd(comm_), zfcSuccess) << zfcGetLastError(comm_);
  EXPECT_EQ(overflowed, 0);
  ASSERT_EQ(grouped.num_unique, alone.num_unique);
  EXPECT_TRUE(same_bits(grouped.rows, b_alone.data(), b_alone.size()));
  EXPECT_TRUE(same_bits(a.table.data(), a_alone.table.data(), a.table.size()));
  EXPECT_EQ(zfcSparsePlanDestroy(pa), zfcSuccess);
  EXPECT_EQ(zfcSparsePlanDestroy(pb), zfcSuccess);
}

// A grouped step is skipped whole: a value that is not finite in another call of the group
// (here an allreduce, on the last rank only) leaves the shard as it was on every rank.
TEST_F(WorldTest, AnOverflowElsewhereInTheGroupLeavesTheShard) {
  std::vector<float> table = fresh_table(), state(table.size(), 0.0f);
  Shard a = cut_shard(table, state, kVocab, kDim, size_, rank_);
  const Shard before = a;
  zfcSparsePlan_t plan = make_plan(comm_, zfcInt64, zfcAlgoDefault);
  const Workload w = zipf_workload(size_, kDim, kVocab, 1.1, 23, [](int r) {
    return 80 + 5 * static_cast<size_t>(r);
  });
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
  update.kind = zfcUpdateAdagrad;
  update.alpha = 0.5f;
  Shard applied_alone = before;
  ASSERT_EQ(zfcShardedReduceApply(plan, mine.indices.data(), mine.indices.size(),
                                  mine.rows.data(), &update, applied_alone.table.data(),
                                  applied_alone.state.data(), applied_alone.rows, nullptr,
                                  nullptr),
            zfcSuccess);
  for (const bool poisoned : {true, false}) {
    float values[3] = {1.0f, 2.0f, 3.0f};
    if (poisoned && rank_ == size_ - 1) values[1] = std::numeric_limits<float>::infinity();
    int table_over = -1, values_over = -1;
    ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
    ASSERT_EQ(zfcShardedReduceApply(plan, mine.indices.data(), mine.indices.size(),
                                    mine.rows.data(), &update, a.table.data(),
                                    a.state.data(), a.rows, &table_over, nullptr),
              zfcSuccess);
    ASSERT_EQ(zfcAllReduce(comm_, values, values, 3, zfcFloat32, nullptr, &values_over,
                           nullptr),
              zfcSuccess);
    ASSERT_EQ(zfcGroupEnd(comm_), zfcSuccess) << zfcGetLastError(comm_);
    EXPECT_EQ(values_over, poisoned ? 1 : 0);
    EXPECT_EQ(table_over, poisoned ? 1 : 0);
    const Shard& expected = poisoned ? before : applied_alone;
    EXPECT_TRUE(same_bits(a.table.data(), expected.table.data(), a.table.size()));
    EXPECT_TRUE(same_bits(a.state.data(), expected.state.data(), a.state.size()));
  }
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

}  // namespace
}  // namespace test
}  // namespace zfc
