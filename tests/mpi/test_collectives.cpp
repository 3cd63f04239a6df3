// zfcUniqueMerge, zfcAllReduce and zfcCommSplit across ranks, against single-process
// references that every rank computes from every rank's (regenerated) input.
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "common/mpi_world.hpp"
#include "algo/agreement.hpp"
#include "common/reference.hpp"
#include "common/reference_eight_bit.hpp"
#include "core/comm.hpp"
#include "topo/topology.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace zfc {
namespace test {
namespace {

struct MergeCase {
  zfcDataType_t type;
  int64_t vocab;
  double zipf_s;
  int64_t offset;  // added to every index, to reach the high bits of large vocabularies
};

class UniqueMergeTest : public WorldTest, public ::testing::WithParamInterface<MergeCase> {};

size_t tokens_of(int rank) { return 300 + 97 * static_cast<size_t>(rank); }

std::vector<int64_t> merge_input(const MergeCase& c, int rank) {
  workload::ZipfDistribution zipf(c.zipf_s, std::min<int64_t>(c.vocab, 200000));
  std::vector<int64_t> idx = zipf_indices(zipf, tokens_of(rank), 11, rank);
  for (int64_t& v : idx) v = (v * 7919 + c.offset) % c.vocab;
  return idx;
}

template <class T, class S>
std::vector<T> as_type(const std::vector<S>& v) {
  return std::vector<T>(v.begin(), v.end());
}

TEST_P(UniqueMergeTest, MatchesReferenceOnEveryRank) {
  const MergeCase c = GetParam();
  std::set<int64_t> all;
  for (int r = 0; r < size_; ++r) {
    for (int64_t v : merge_input(c, r)) all.insert(v);
  }
  const std::vector<int64_t> ref(all.begin(), all.end());
  const std::vector<int64_t> mine = merge_input(c, rank_);

  std::vector<int64_t> unique64(ref.size() + 5, -7);
  std::vector<int32_t> unique32(ref.size() + 5, -7);
  std::vector<int32_t> positions(mine.size(), -1);
  size_t num_unique = 0;
  std::vector<int32_t> mine32 = as_type<int32_t>(mine);
  const void* in = c.type == zfcInt32 ? static_cast<const void*>(mine32.data()) : mine.data();
  void* out = c.type == zfcInt32 ? static_cast<void*>(unique32.data()) : unique64.data();
  ASSERT_EQ(zfcUniqueMerge(comm_, in, c.type, mine.size(), c.vocab, out, ref.size() + 5,
                           &num_unique, positions.data(), nullptr),
            zfcSuccess)
      << zfcGetLastError(comm_);
  ASSERT_EQ(num_unique, ref.size());
  std::vector<int64_t> got = c.type == zfcInt32 ? as_type<int64_t>(unique32) : unique64;
  got.resize(num_unique);
  EXPECT_EQ(got, ref);
  for (size_t i = 0; i < mine.size(); ++i) {
    ASSERT_GE(positions[i], 0);
    ASSERT_LT(static_cast<size_t>(positions[i]), num_unique);
    EXPECT_EQ(ref[static_cast<size_t>(positions[i])], mine[i]) << "token " << i;
  }
  // Past U_g the output is untouched.
  EXPECT_EQ(c.type == zfcInt32 ? unique32[num_unique] : unique64[num_unique], -7);
  EXPECT_TRUE(same_on_all_ranks(fnv1a(got.data(), got.size() * sizeof(int64_t))));

  const zfcOpStats_t last = last_stats();
  EXPECT_EQ(last.tokens, mine.size());
  EXPECT_EQ(last.local_unique, std::set<int64_t>(mine.begin(), mine.end()).size());
  EXPECT_EQ(last.global_unique, ref.size());
  if (size_ > 1) EXPECT_GT(last.bytes_sent, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    IndexTypesAndRanges, UniqueMergeTest,
    ::testing::Values(MergeCase{zfcInt32, 100000, 1.1, 0},            // bitmap path
                      MergeCase{zfcInt64, 100000, 1.1, 0},            // bitmap, int64 ids
                      MergeCase{zfcInt32, int64_t{1} << 30, 1.0, 5},  // radix path
                      MergeCase{zfcInt64, int64_t{1} << 32, 1.0, (int64_t{1} << 32) - 9000},
                      MergeCase{zfcInt64, int64_t{5} << 40, 0.9, int64_t{3} << 40},
                      MergeCase{zfcInt32, 50, 1.2, 0}));  // tiny vocabulary, many repeats

TEST_F(WorldTest, UniqueMergeWithEmptyRanks) {
  // Odd ranks bring nothing; then every rank brings nothing.
  std::vector<int32_t> mine;
  if (rank_ % 2 == 0) mine = {5, 3, 5, static_cast<int32_t>(rank_ + 10)};
  std::set<int32_t> all;
  for (int r = 0; r < size_; r += 2) all.insert({5, 3, r + 10});
  std::vector<int32_t> unique(64, -1), positions(mine.size() + 1, -1);
  size_t num_unique = 99;
  ASSERT_EQ(zfcUniqueMerge(comm_, mine.empty() ? nullptr : mine.data(), zfcInt32, mine.size(),
                           1000, unique.data(), unique.size(), &num_unique, positions.data(),
                           nullptr),
            zfcSuccess)
      << zfcGetLastError(comm_);
  ASSERT_EQ(num_unique, all.size());
  EXPECT_TRUE(std::equal(all.begin(), all.end(), unique.begin()));
  for (size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(unique[positions[i]], mine[i]);

  ASSERT_EQ(zfcUniqueMerge(comm_, nullptr, zfcInt32, 0, 1000, nullptr, 0, &num_unique, nullptr,
                           nullptr),
            zfcSuccess)
      << zfcGetLastError(comm_);
  EXPECT_EQ(num_unique, 0u);
}

struct ReduceCase {
  size_t count;
  zfcCompressionKind_t kind;
  float scale;
  bool in_place;
};

class AllReduceTest : public WorldTest, public ::testing::WithParamInterface<ReduceCase> {};

std::vector<float> reduce_input(size_t n, int rank) { return random_rows(n, 1, 23, rank); }

TEST_P(AllReduceTest, BitIdenticalToReference) {
  const ReduceCase c = GetParam();
  std::vector<std::vector<float>> inputs;
  for (int r = 0; r < size_; ++r) inputs.push_back(reduce_input(c.count, r));
  const std::vector<float> ref = reference_allreduce(inputs, c.kind, c.scale);

  std::vector<float> send = inputs[static_cast<size_t>(rank_)];
  std::vector<float> recv(c.count, -1.0f);
  float* dst = c.in_place ? send.data() : recv.data();
  const zfcCompression_t how{c.kind, c.scale};
  int overflowed = -1;
  ASSERT_EQ(zfcAllReduce(comm_, send.data(), dst, c.count, zfcFloat32, &how, &overflowed,
                         nullptr),
            zfcSuccess)
      << zfcGetLastError(comm_);
  EXPECT_EQ(overflowed, 0);
  for (size_t i = 0; i < c.count; ++i) {
    uint32_t got, want;
    std::memcpy(&got, dst + i, 4);
    std::memcpy(&want, &ref[i], 4);
    ASSERT_EQ(got, want) << "element " << i << ": " << dst[i] << " vs " << ref[i];
  }
  EXPECT_TRUE(same_on_all_ranks(fnv1a(dst, c.count * sizeof(float))));
  if (c.kind != zfcCompressNone) {
    // The wire's rounding stays within a few units of its last place per addend.
    const double tol = (c.kind == zfcCompressFp16 ? 2e-3 : 1.6e-2) * size_;
    for (size_t i = 0; i < c.count; ++i) {
      double exact = 0;
      for (const auto& in : inputs) exact += in[i];
      ASSERT_NEAR(dst[i], exact, tol) << "element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    SizesAndWires, AllReduceTest,
    ::testing::Values(ReduceCase{0, zfcCompressNone, 1.0f, false},
                      ReduceCase{1, zfcCompressNone, 1.0f, false},
                      ReduceCase{7, zfcCompressNone, 1.0f, true},
                      ReduceCase{1000, zfcCompressNone, 1.0f, false},
                      ReduceCase{100003, zfcCompressNone, 1.0f, true},
                      ReduceCase{1, zfcCompressFp16, 1.0f, false},
                      ReduceCase{1000, zfcCompressFp16, 1024.0f, false},
                      ReduceCase{100003, zfcCompressFp16, 64.0f, true},
                      ReduceCase{777, zfcCompressBf16, 1.0f, false},
                      ReduceCase{100003, zfcCompressBf16, 1.0f, true}));

// The eight-bit formats, both roundings: the bits of the reference on every rank, for counts
// that fill rows of ZFC_ALLREDUCE_BLOCK_VALUES, leave a short one or fit in one; each call a
// step of stochastic rounding. A second communicator replaying the same calls gives the same
// bits (a second run); another seed changes the stochastic results only.
TEST_F(WorldTest, EightBitAllReduceMatchesTheReferenceAndRepeats) {
  const int kinds[] = {zfcCompressFp8E4M3, zfcCompressFp8E5M2, zfcCompressInt8,
                       zfcCompressInt8Stochastic, zfcCompressFp8E4M3Stochastic};
  const size_t counts[] = {1, 256, 1000, 100003};
  // Runs every case on `comm` (its calls' steps counted from `step`); the hash of each.
  const auto run_all = [&](zfcComm_t comm, uint64_t seed, bool check) {
    std::vector<uint64_t> hashes;
    uint32_t step = 0;
    for (int kind : kinds) {
      for (size_t n : counts) {
        std::vector<std::vector<float>> inputs;
        for (int r = 0; r < size_; ++r) inputs.push_back(reduce_input(n, r));
        std::vector<float> out(n, -1.0f);
        const zfcCompression_t how{static_cast<zfcCompressionKind_t>(kind), 1.0f};
        int overflowed = -1;
        EXPECT_EQ(zfcAllReduce(comm, inputs[static_cast<size_t>(rank_)].data(), out.data(), n,
                               zfcFloat32, &how, &overflowed, nullptr),
                  zfcSuccess)
            << zfcGetLastError(comm);
        EXPECT_EQ(overflowed, 0);
        if (check) {
          const std::vector<float> want =
              reference_allreduce_rows(inputs, kind, ZFC_ALLREDUCE_BLOCK_VALUES, seed, step);
          EXPECT_EQ(std::memcmp(out.data(), want.data(), n * sizeof(float)), 0)
              << "kind " << kind << " count " << n;
        }
        ++step;
        hashes.push_back(fnv1a(out.data(), n * sizeof(float)));
        EXPECT_TRUE(same_on_all_ranks(hashes.back()));
      }
    }
    return hashes;
  };
  const std::vector<uint64_t> first = run_all(comm_, 0, true);
  zfcComm_t again = nullptr;
  ASSERT_EQ(open_world_comm(&again, nullptr), zfcSuccess);
  EXPECT_EQ(run_all(again, 0, false), first);
  ASSERT_EQ(zfcCommDestroy(again), zfcSuccess);
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.rounding_seed = 5;
  ASSERT_EQ(open_world_comm(&again, &cfg), zfcSuccess);
  const std::vector<uint64_t> seeded = run_all(again, 5, true);
  ASSERT_EQ(zfcCommDestroy(again), zfcSuccess);
  // (A single value is its row's largest, which int8 sends exactly and fp8 rounds one way or
  // the other: only the longer cases must differ.)
  for (size_t i = 0; i < first.size(); ++i) {
    const bool stochastic = (kinds[i / 4] & ZFC_COMPRESS_STOCHASTIC) != 0;
    if (counts[i % 4] > 1) EXPECT_EQ(seeded[i] == first[i], !stochastic) << "case " << i;
  }
}

// A value that is not finite on one rank is an overflow every rank reports, in every
// eight-bit format, and leaves the other rows as they would be.
TEST_F(WorldTest, EightBitAllReduceAgreesOnAValueThatIsNotFinite) {
  for (zfcCompressionKind_t kind : {zfcCompressFp8E4M3, zfcCompressInt8Stochastic}) {
    std::vector<float> data(1000, 1.0f), out(1000);
    if (rank_ == size_ - 1) data[700] = std::numeric_limits<float>::infinity();
    const zfcCompression_t how{kind, 1.0f};
    int overflowed = -1;
    ASSERT_EQ(zfcAllReduce(comm_, data.data(), out.data(), 1000, zfcFloat32, &how, &overflowed,
                           nullptr),
              zfcSuccess);
    EXPECT_EQ(overflowed, 1);
    EXPECT_FALSE(std::isfinite(out[700]));
    EXPECT_EQ(out[0], static_cast<float>(size_));  // 1 and size are exact in every format
    EXPECT_TRUE(same_on_all_ranks(fnv1a(out.data(), out.size() * sizeof(float))));
  }
}

// Error feedback: the call sums send + residual as zfcAllReduce would, and leaves in residual
// what this rank's encode of it left out (the reference's row trip); fed back over steps of
// the same values the total stays within one rounding of the exact total, where without it
// the error of every step adds up. An overflow leaves residual as it was.
TEST_F(WorldTest, ErrorFeedbackCarriesWhatTheEncodeLeftOut) {
  const size_t n = 1000, row = ZFC_ALLREDUCE_BLOCK_VALUES;
  const int kind = zfcCompressInt8;
  const zfcCompression_t how{static_cast<zfcCompressionKind_t>(kind), 1.0f};
  std::vector<float> send = reduce_input(n, rank_), residual(n, 0.0f);
  for (size_t i = 0; i < n; ++i) residual[i] = 0.01f * static_cast<float>(i % 7);
  // The sum of send + residual, by zfcAllReduce on a second communicator whose steps match.
  std::vector<float> fed(n), want(n), got(n);
  for (size_t i = 0; i < n; ++i) fed[i] = send[i] + residual[i];
  zfcComm_t twin = nullptr;
  ASSERT_EQ(open_world_comm(&twin, nullptr), zfcSuccess);
  ASSERT_EQ(zfcAllReduce(twin, fed.data(), want.data(), n, zfcFloat32, &how, nullptr, nullptr),
            zfcSuccess);
  ASSERT_EQ(zfcCommDestroy(twin), zfcSuccess);
  int overflowed = -1;
  ASSERT_EQ(zfcAllReduceWithResidual(comm_, send.data(), got.data(), n, zfcFloat32, &how,
                                     residual.data(), &overflowed, nullptr),
            zfcSuccess)
      << zfcGetLastError(comm_);
  EXPECT_EQ(overflowed, 0);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0);
  for (size_t b = 0; b * row < n; ++b) {
    std::vector<float> v(row, 0.0f);
    for (size_t c = 0; c < row && b * row + c < n; ++c) v[c] = fed[b * row + c];
    const std::vector<float> back =
        reference_row_trip(v, kind, {0, 0, static_cast<uint32_t>(rank_), 0, b});
    for (size_t c = 0; c < row && b * row + c < n; ++c) {
      ASSERT_EQ(residual[b * row + c], v[c] - back[c]) << "value " << b * row + c;
    }
  }

  // Steps of the same values: the total with feedback stays near the exact total.
  const int steps = 20;
  std::vector<float> carried(n, 0.0f), with(n, 0.0f);
  std::vector<float> total_with(n, 0.0f), total_without(n, 0.0f);
  for (int s = 0; s < steps; ++s) {
    ASSERT_EQ(zfcAllReduceWithResidual(comm_, send.data(), with.data(), n, zfcFloat32, &how,
                                       carried.data(), nullptr, nullptr),
              zfcSuccess);
    for (size_t i = 0; i < n; ++i) total_with[i] += with[i];
    ASSERT_EQ(zfcAllReduce(comm_, send.data(), got.data(), n, zfcFloat32, &how, nullptr, nullptr),
              zfcSuccess);
    for (size_t i = 0; i < n; ++i) total_without[i] += got[i];
  }
  double err_with = 0, err_without = 0;
  for (size_t i = 0; i < n; ++i) {
    double exact = 0;
    for (int r = 0; r < size_; ++r) exact += reduce_input(n, r)[i];
    err_with += std::fabs(total_with[i] - steps * exact);
    err_without += std::fabs(total_without[i] - steps * exact);
  }
  if (size_ == 1) EXPECT_LT(err_with * 4, err_without);  // one rank's rounding only

  // A value that is not finite: an overflow, and the residual is kept.
  std::vector<float> bad = send, kept = carried;
  if (rank_ == 0) bad[3] = std::numeric_limits<float>::infinity();
  ASSERT_EQ(zfcAllReduceWithResidual(comm_, bad.data(), got.data(), n, zfcFloat32, &how,
                                     carried.data(), &overflowed, nullptr),
            zfcSuccess);
  EXPECT_EQ(overflowed, 1);
  EXPECT_EQ(carried, kept);
}

TEST_F(WorldTest, AllReduceOverflowIsReportedEverywhere) {
  // Only the last rank has a value that leaves fp16's range once scaled.
  std::vector<float> data(100, 1.0f);
  if (rank_ == size_ - 1) data[42] = 70000.0f;
  const zfcCompression_t fp16{zfcCompressFp16, 1.0f};
  int overflowed = -1;
  std::vector<float> out(100);
  ASSERT_EQ(zfcAllReduce(comm_, data.data(), out.data(), 100, zfcFloat32, &fp16, &overflowed,
                         nullptr),
            zfcSuccess);
  EXPECT_EQ(overflowed, 1);
  EXPECT_FALSE(std::isfinite(out[42]));
  EXPECT_EQ(out[41], static_cast<float>(size_));
  EXPECT_TRUE(same_on_all_ranks(fnv1a(out.data(), out.size() * sizeof(float))));
  const zfcOpStats_t last = last_stats();
  EXPECT_EQ(last.overflows, 1u);

  // A scale that keeps the values in range fixes it, on every rank.
  const zfcCompression_t scaled{zfcCompressFp16, 1.0f / 64.0f};
  ASSERT_EQ(zfcAllReduce(comm_, data.data(), out.data(), 100, zfcFloat32, &scaled, &overflowed,
                         nullptr),
            zfcSuccess);
  EXPECT_EQ(overflowed, 0);
  EXPECT_NEAR(out[42], 70000.0f + (size_ - 1), 64.0f);
}

// The length of rank r's chunk of n values split over g ranks (the allreduce's Chunks).
size_t chunk_len(size_t n, size_t g, size_t r) { return n / g + (r < n % g ? 1 : 0); }

TEST_F(WorldTest, AllReduceBytesAreCounted) {
  const size_t n = 4096;
  std::vector<float> data(n, 1.0f);
  for (zfcCompressionKind_t kind : {zfcCompressNone, zfcCompressFp16, zfcCompressInt8}) {
    const zfcCompression_t how{kind, 1.0f};
    ASSERT_EQ(zfcAllReduce(comm_, data.data(), data.data(), n, zfcFloat32, &how, nullptr,
                           nullptr),
              zfcSuccess);
    const zfcOpStats_t last = last_stats();
    EXPECT_EQ(last.path[zfcPhaseRowExchange], zfcPathHost);
    EXPECT_EQ(last.path[zfcPhaseMerge], zfcPathNone);  // an allreduce has none
    EXPECT_EQ(last.host_syncs, 0u);
    // Reduce-scatter sends every chunk but its own and receives its own from every peer;
    // the gather does the reverse. Both carry the wire type; int8's chunks are whole rows of
    // ZFC_ALLREDUCE_BLOCK_VALUES bytes and a 4-byte scale.
    const bool rows = kind == zfcCompressInt8;
    const uint64_t w = kind == zfcCompressNone ? 4 : rows ? ZFC_ALLREDUCE_BLOCK_VALUES + 4 : 2;
    const uint64_t units = rows ? n / ZFC_ALLREDUCE_BLOCK_VALUES : n;
    const uint64_t g = static_cast<uint64_t>(size_);
    const uint64_t mine = chunk_len(units, g, static_cast<size_t>(rank_));
    const uint64_t header = sizeof(OpHeader) * (g - 1);  // one header to each peer
    EXPECT_EQ(last.bytes_sent, header + ((units - mine) + mine * (g - 1)) * w);
    EXPECT_EQ(last.bytes_received, header + (mine * (g - 1) + (units - mine)) * w);
  }
}

// The allreduce's scratch, exact: with recv written after the last transfer, the gather
// lands where the reduce-scatter's blocks were, so a call holds one copy of the data (the
// larger of n and G chunks of the biggest size), its own chunk's sums, and the size lists.
// One rank sums straight into recv: no copy of the data at all.
TEST_F(WorldTest, AllReduceWorkspaceHoldsOneCopy) {
  const size_t n = (size_t{1} << 18) + 3;  // uneven chunks
  std::vector<float> send(n, 0.5f), recv(n);
  const zfcCompression_t none{zfcCompressNone, 1.0f};
  ASSERT_EQ(zfcAllReduce(comm_, send.data(), recv.data(), n, zfcFloat32, &none, nullptr,
                         nullptr),
            zfcSuccess);
  const zfcOpStats_t last = last_stats();
  if (size_ == 1) {
    EXPECT_LT(last.peak_workspace_bytes, 4096u);
    return;
  }
  const size_t g = static_cast<size_t>(size_);
  const size_t mine = chunk_len(n, g, static_cast<size_t>(rank_));
  const size_t lists = 4 * g * sizeof(size_t) + g * sizeof(uint64_t);
  const size_t data = std::max(g * mine, n) * sizeof(float) + mine * sizeof(float) + lists;
  // Beside the data, the call's agreement header takes a few hundred bytes; a second copy
  // of the data would be n floats (1 MiB) more.
  EXPECT_GE(last.peak_workspace_bytes, data);
  EXPECT_LT(last.peak_workspace_bytes, data + 4096);
}

TEST_F(WorldTest, SplitByParity) {
  // Rank 0 opts out when there are at least three ranks.
  const bool out = size_ >= 3 && rank_ == 0;
  const int color = out ? ZFC_SPLIT_NOCOLOR : rank_ % 2;
  zfcComm_t sub = nullptr;
  ASSERT_EQ(zfcCommSplit(comm_, color, -rank_, &sub), zfcSuccess) << zfcGetLastError(comm_);
  if (out) {
    EXPECT_EQ(sub, nullptr);
    return;
  }
  ASSERT_NE(sub, nullptr);
  int members = 0;
  for (int r = 0; r < size_; ++r) members += (r % 2 == color && !(size_ >= 3 && r == 0)) ? 1 : 0;
  int sub_size = 0, sub_rank = 0;
  ASSERT_EQ(zfcCommCount(sub, &sub_size), zfcSuccess);
  ASSERT_EQ(zfcCommRank(sub, &sub_rank), zfcSuccess);
  EXPECT_EQ(sub_size, members);
  // Keys are -rank: the highest world rank comes first.
  int higher = 0;
  for (int r = rank_ + 1; r < size_; ++r) higher += (r % 2 == color) ? 1 : 0;
  EXPECT_EQ(sub_rank, higher);
  float v = static_cast<float>(rank_), sum = 0;
  ASSERT_EQ(zfcAllReduce(sub, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr), zfcSuccess);
  float expect = 0;
  for (int r = 0; r < size_; ++r) {
    if (r % 2 == color && !(size_ >= 3 && r == 0)) expect += static_cast<float>(r);
  }
  EXPECT_EQ(sum, expect);
  EXPECT_EQ(zfcCommDestroy(sub), zfcSuccess);
}

// Communicators split from one another never share a message id with a live communicator
// of any of their ranks, so their messages cannot match each other's receives. The splits
// below include pairs that an id hashed from (parent, split count, color) gave the same id
// (the first split with color 131 and the eighth with color 0), and nested splits.
TEST_F(WorldTest, SplitCommunicatorsHaveDistinctMessageIds) {
  if (!testing_over_ucx()) GTEST_SKIP() << "message ids are the UCX transport's";
  std::vector<zfcComm_t> live = {comm_};
  for (int split = 1; split <= 8; ++split) {
    const int color = split == 1 ? 131 : split % 3 == 0 ? rank_ % 2 : 0;
    zfcComm_t sub = nullptr;
    ASSERT_EQ(zfcCommSplit(comm_, color, rank_, &sub), zfcSuccess) << zfcGetLastError(comm_);
    live.push_back(sub);
    zfcComm_t nested = nullptr;  // a split of the split, by the other parity
    ASSERT_EQ(zfcCommSplit(sub, (rank_ + split) % 2, 0, &nested), zfcSuccess);
    live.push_back(nested);
  }
  std::set<uint32_t> ids;
  for (zfcComm_t c : live) {
    const uint32_t id = ucx_comm_id(*c->transport);
    EXPECT_NE(id, 0u);
    EXPECT_TRUE(ids.insert(id).second) << "two live communicators of rank " << rank_
                                        << " share id " << id;
  }
  // Interleaved collectives on all of them give each its own sum.
  for (size_t i = live.size(); i-- > 1;) {
    float v = static_cast<float>(rank_ + 1), sum = 0;
    ASSERT_EQ(zfcAllReduce(live[i], &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr),
              zfcSuccess) << zfcGetLastError(live[i]);
    int n = 0;
    zfcCommCount(live[i], &n);
    EXPECT_GE(sum, static_cast<float>(n));
  }
  for (size_t i = 1; i < live.size(); ++i) EXPECT_EQ(zfcCommDestroy(live[i]), zfcSuccess);
}

TEST_F(WorldTest, LocalRanksAndTopology) {
  // Every rank of this test runs on one machine.
  int local_rank = -1, local_count = -1;
  ASSERT_EQ(zfcCommLocalRank(comm_, &local_rank, &local_count), zfcSuccess);
  EXPECT_EQ(local_rank, rank_);
  EXPECT_EQ(local_count, size_);
  const std::string topo = zfcCommGetTopology(comm_);
  EXPECT_NE(topo.find("local rank " + std::to_string(rank_) + " of " + std::to_string(size_)),
            std::string::npos)
      << topo;
  EXPECT_STREQ(zfcCommGetTopology(nullptr), "");
  // A split orders its ranks by (key, rank): reversed keys reverse the local ranks too.
  zfcComm_t child = nullptr;
  ASSERT_EQ(zfcCommSplit(comm_, rank_ % 2, -rank_, &child), zfcSuccess);
  int child_rank = -1, child_size = -1;
  ASSERT_EQ(zfcCommRank(child, &child_rank), zfcSuccess);
  ASSERT_EQ(zfcCommCount(child, &child_size), zfcSuccess);
  ASSERT_EQ(zfcCommLocalRank(child, &local_rank, &local_count), zfcSuccess);
  EXPECT_EQ(local_rank, child_rank);
  EXPECT_EQ(local_count, child_size);
  EXPECT_EQ(child_rank, (size_ - 1 - rank_) / 2);
  EXPECT_EQ(zfcCommDestroy(child), zfcSuccess);
}

TEST_F(WorldTest, BindingFollowsTheShareOfCores) {
  // A second communicator created with ZIPFCOLL_BIND=1 binds this process to its share.
  setenv("ZIPFCOLL_BIND", "1", 1);
  zfcComm_t bound = nullptr;
  ASSERT_EQ(test::open_world_comm(&bound, nullptr), zfcSuccess);
  unsetenv("ZIPFCOLL_BIND");
  const std::string topo = zfcCommGetTopology(bound);
  if (zfc::hwloc_available()) {
    EXPECT_NE(topo.find(", bound"), std::string::npos) << topo;
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    const zfc::Topology t = zfc::discover_topology(rank_, size_, false);
    const int threads_per_core = t.hardware_threads / t.cores;
    EXPECT_EQ(CPU_COUNT(&set), static_cast<int>(t.rank_cores.size()) * threads_per_core);
  } else {
    EXPECT_NE(topo.find("not bound"), std::string::npos) << topo;
  }
  EXPECT_EQ(zfcCommDestroy(bound), zfcSuccess);
}

TEST_F(WorldTest, AbortFreesLocallyEvenWithLivePlans) {
  zfcComm_t extra = nullptr;
  ASSERT_EQ(test::open_world_comm(&extra, nullptr), zfcSuccess);
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = 4;
  cfg.vocab_size = 100;
  zfcSparsePlan_t plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(extra, &cfg, &plan), zfcSuccess);
  // Destroy refuses while a plan lives; abort does not, and the plan frees the rest.
  EXPECT_EQ(zfcCommDestroy(extra), zfcInvalidUsage);
  EXPECT_NE(std::string(zfcGetLastError(extra)).find("1 sparse plans"), std::string::npos);
  EXPECT_EQ(zfcCommAbort(extra), zfcSuccess);
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  // Abort is local: it completes without any peer taking part.
  zfcComm_t lone = nullptr;
  ASSERT_EQ(test::open_world_comm(&lone, nullptr), zfcSuccess);
  EXPECT_EQ(zfcCommAbort(lone), zfcSuccess);
  EXPECT_EQ(zfcCommAbort(nullptr), zfcSuccess);
}

TEST_F(WorldTest, PhaseTimesAddUpAndStatsAccumulate) {
  ASSERT_EQ(zfcCommResetStats(comm_), zfcSuccess);
  std::vector<int32_t> idx = {1, 5, 1, rank_};
  std::vector<float> rows(idx.size() * 16, 0.25f);
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = 16;
  cfg.vocab_size = 64;
  for (zfcAlgorithm_t a : {zfcAlgoAllGather, zfcAlgoUniqueAllReduce}) {
    zfcSparsePlanConfig_t c = cfg;
    c.algorithm = a;
    zfcSparsePlan_t p = nullptr;
    ASSERT_EQ(zfcSparsePlanCreate(comm_, &c, &p), zfcSuccess);
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduce(p, idx.data(), idx.size(), rows.data(), &out, nullptr), zfcSuccess);
    zfcStats_t st = ZFC_STATS_INITIALIZER;
    ASSERT_EQ(zfcCommGetStats(comm_, &st), zfcSuccess);
    double parts = 0;
    for (int ph = 0; ph < zfcPhaseTotal; ++ph) {
      EXPECT_GE(st.last.seconds[ph], 0.0) << zfcGetPhaseName(ph);
      parts += st.last.seconds[ph];
    }
    EXPECT_GT(st.last.seconds[zfcPhaseTotal], 0.0);
    EXPECT_LE(parts, st.last.seconds[zfcPhaseTotal] * 1.0001 + 1e-6) << zfcGetAlgorithmName(a);
    EXPECT_EQ(st.last.algorithm, a);
    // Host buffers: every phase on the host, and no wait for a device.
    for (int ph = 0; ph < zfcNumPhases; ++ph) {
      EXPECT_EQ(st.last.path[ph], zfcPathHost) << zfcGetPhaseName(ph);
    }
    EXPECT_EQ(st.last.host_syncs, 0u);
    EXPECT_EQ(zfcSparsePlanDestroy(p), zfcSuccess);
  }
  zfcStats_t st = ZFC_STATS_INITIALIZER;
  ASSERT_EQ(zfcCommGetStats(comm_, &st), zfcSuccess);
  EXPECT_EQ(st.total.calls, 2u);
  EXPECT_EQ(st.total.tokens, 2 * idx.size());
  EXPECT_GE(st.total.peak_workspace_bytes, st.last.peak_workspace_bytes);
  EXPECT_GE(st.total.bytes_sent, st.last.bytes_sent);
  zfcStats_t bad = ZFC_STATS_INITIALIZER;
  bad.size = 16;
  EXPECT_EQ(zfcCommGetStats(comm_, &bad), zfcInvalidUsage);
}

TEST_F(WorldTest, TrustedIndicesSkipTheRangeCheck) {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.bounds_check = 0;
  cfg.name = "trusted";
  zfcComm_t trusted = nullptr;
  ASSERT_EQ(test::open_world_comm(&trusted, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
  const int64_t idx[3] = {rank_, 40, rank_ + 1};
  int64_t unique[64];
  size_t num_unique = 0;
  ASSERT_EQ(zfcUniqueMerge(trusted, idx, zfcInt64, 3, 100, unique, 64, &num_unique, nullptr,
                           nullptr),
            zfcSuccess);
  EXPECT_EQ(num_unique, static_cast<size_t>(size_ + 2));  // 0..size_ and 40
  EXPECT_EQ(unique[num_unique - 1], 40);
  EXPECT_EQ(zfcCommDestroy(trusted), zfcSuccess);
}

}  // namespace
}  // namespace test
}  // namespace zfc
