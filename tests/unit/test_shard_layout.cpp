// The layout of sharded tables (zfcShardRows, zfcShardLocate) and the row updates
// (zfcApplyUpdate) that sharded and replicated tables share.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "workload/zipf.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace {

TEST(ShardLayout, EveryIdHasOneRowAndShardsDifferByAtMostOneRow) {
  for (int ranks : {1, 2, 3, 4, 5, 7, 8, 16}) {
    for (int64_t vocab : {int64_t{1}, int64_t{5}, int64_t{97}, int64_t{1000}, int64_t{4099}}) {
      std::vector<size_t> rows(static_cast<size_t>(ranks));
      size_t total = 0;
      for (int r = 0; r < ranks; ++r) {
        ASSERT_EQ(zfcShardRows(vocab, ranks, r, &rows[static_cast<size_t>(r)]), zfcSuccess);
        total += rows[static_cast<size_t>(r)];
        const size_t want = static_cast<size_t>(vocab / ranks);
        EXPECT_TRUE(rows[static_cast<size_t>(r)] == want ||
                    rows[static_cast<size_t>(r)] == want + 1)
            << "V " << vocab << " G " << ranks << " rank " << r;
      }
      EXPECT_EQ(total, static_cast<size_t>(vocab));
      // Each rank's rows are filled exactly once: the layout is a bijection.
      std::vector<std::vector<int>> seen(static_cast<size_t>(ranks));
      for (int r = 0; r < ranks; ++r) seen[static_cast<size_t>(r)].assign(rows[r], 0);
      for (int64_t v = 0; v < vocab; ++v) {
        int owner = -1;
        size_t row = 0;
        ASSERT_EQ(zfcShardLocate(vocab, ranks, v, &owner, &row), zfcSuccess);
        ASSERT_GE(owner, 0);
        ASSERT_LT(owner, ranks);
        ASSERT_LT(row, rows[static_cast<size_t>(owner)]) << "id " << v;
        EXPECT_EQ(row, static_cast<size_t>(v / ranks));
        ++seen[static_cast<size_t>(owner)][row];
      }
      for (const auto& s : seen) {
        for (int c : s) EXPECT_EQ(c, 1);
      }
    }
  }
}

TEST(ShardLayout, ZipfLoadSpreadsEvenly) {
  // What an owner serves in a step is one row per distinct id per rank that holds it. Over
  // 40 steps of 8 ranks with 640 Zipf(1.1) tokens each from 10^5 words, the busiest of the
  // 8 owners serves within 5 % of the mean (ids of like frequency sit side by side, and
  // each block of 8 puts one on every owner). The draws are seeded: the figure is exact.
  const workload::ZipfDistribution zipf(1.1, 100000);
  const int ranks = 8;
  std::vector<double> load(ranks, 0.0);
  double pairs = 0;
  for (uint64_t batch = 0; batch < 40 * ranks; ++batch) {
    std::vector<int32_t> ids = zipf.draw(640, 1000 + batch);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (int32_t id : ids) {
      int owner = 0;
      ASSERT_EQ(zfcShardLocate(100000, ranks, id, &owner, nullptr), zfcSuccess);
      load[static_cast<size_t>(owner)] += 1.0;
      pairs += 1.0;
    }
  }
  const double most = *std::max_element(load.begin(), load.end());
  EXPECT_LT(most / (pairs / ranks), 1.05);
}

TEST(ShardLayout, BadArgumentsAreRefused) {
  size_t rows = 7;
  EXPECT_EQ(zfcShardRows(0, 2, 0, &rows), zfcInvalidArgument);
  EXPECT_EQ(zfcShardRows(10, 0, 0, &rows), zfcInvalidArgument);
  EXPECT_EQ(zfcShardRows(10, 2, 2, &rows), zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("rank 2"), std::string::npos);
  EXPECT_EQ(zfcShardRows(10, 2, 0, nullptr), zfcInvalidArgument);
  EXPECT_EQ(rows, 7u);
  int owner = -1;
  EXPECT_EQ(zfcShardLocate(10, 2, 10, &owner, nullptr), zfcInvalidArgument);
  EXPECT_EQ(zfcShardLocate(10, 2, -1, &owner, nullptr), zfcInvalidArgument);
  EXPECT_EQ(owner, -1);
}

TEST(ApplyUpdate, AddSgdAndAdagradFollowTheirFormulas) {
  const size_t dim = 2;
  const int32_t idx[3] = {1, 0, 1};
  const float rows[6] = {1.0f, -2.0f, 0.5f, 0.25f, 3.0f, 4.0f};
  zfcRowUpdate_t u = ZFC_ROW_UPDATE_INITIALIZER;
  for (int kind : {zfcUpdateAdd, zfcUpdateSgd, zfcUpdateAdagrad}) {
    u.kind = kind;
    u.alpha = 0.1f;
    u.epsilon = 1e-3f;
    std::vector<float> table = {1, 2, 3, 4}, state = {0.5f, 0.5f, 0.5f, 0.5f};
    std::vector<float> want = table, want_state = state;
    for (int p = 0; p < 3; ++p) {
      for (size_t k = 0; k < dim; ++k) {
        float& w = want[static_cast<size_t>(idx[p]) * dim + k];
        float& s = want_state[static_cast<size_t>(idx[p]) * dim + k];
        const float g = rows[static_cast<size_t>(p) * dim + k];
        if (kind == zfcUpdateAdd) w += 0.1f * g;
        if (kind == zfcUpdateSgd) w -= 0.1f * g;
        if (kind == zfcUpdateAdagrad) {
          s += g * g;
          w -= 0.1f * (g / (std::sqrt(s) + 1e-3f));
        }
      }
    }
    ASSERT_EQ(zfcApplyUpdate(table.data(), state.data(), 2, dim, idx, zfcInt32, rows, 3, &u,
                             nullptr),
              zfcSuccess);
    EXPECT_EQ(table, want) << "kind " << kind;
    EXPECT_EQ(state, want_state) << "kind " << kind;
  }
}

TEST(ApplyUpdate, BadArgumentsWriteNothing) {
  std::vector<float> table = {1, 2}, state = {0, 0};
  const float rows[2] = {1, 1};
  const int64_t bad[2] = {0, 2};
  zfcRowUpdate_t u = ZFC_ROW_UPDATE_INITIALIZER;
  EXPECT_EQ(zfcApplyUpdate(table.data(), state.data(), 2, 1, bad, zfcInt64, rows, 2, &u,
                           nullptr),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("indices[1] = 2"), std::string::npos);
  const int64_t good[1] = {1};
  u.kind = zfcUpdateAdagrad;
  EXPECT_EQ(zfcApplyUpdate(table.data(), nullptr, 2, 1, good, zfcInt64, rows, 1, &u, nullptr),
            zfcInvalidArgument);
  u.kind = 7;
  EXPECT_EQ(zfcApplyUpdate(table.data(), state.data(), 2, 1, good, zfcInt64, rows, 1, &u,
                           nullptr),
            zfcInvalidArgument);
  u = ZFC_ROW_UPDATE_INITIALIZER;
  u.alpha = NAN;
  EXPECT_EQ(zfcApplyUpdate(table.data(), state.data(), 2, 1, good, zfcInt64, rows, 1, &u,
                           nullptr),
            zfcInvalidArgument);
  u = ZFC_ROW_UPDATE_INITIALIZER;
  u.size = 8;
  EXPECT_EQ(zfcApplyUpdate(table.data(), state.data(), 2, 1, good, zfcInt64, rows, 1, &u,
                           nullptr),
            zfcInvalidUsage);
  EXPECT_EQ(zfcApplyUpdate(table.data(), state.data(), 2, 1, good, zfcInt64, rows, 1, nullptr,
                           nullptr),
            zfcInvalidArgument);
  EXPECT_EQ(table, (std::vector<float>{1, 2}));
  EXPECT_EQ(state, (std::vector<float>{0, 0}));
}

}  // namespace
}  // namespace zfc
