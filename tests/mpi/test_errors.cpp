// Every argument error a user can make in a collective, made on one rank: every rank must
// return the same code, the message must name the bad value and the rank, nothing the caller
// owns may change, and the communicator must work afterwards. Registered with 3 ranks (the
// bad rank is then neither the first nor the last) and more.
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "exec/memory_space.hpp"
#include "sparse_helpers.hpp"

namespace zfc {
namespace test {
namespace {

constexpr int kBad = 1;  // the rank that makes the mistake

class ErrorTest : public WorldTest {
 protected:
  void SetUp() override {
    WorldTest::SetUp();
    if (size_ < 2) GTEST_SKIP() << "argument agreement needs at least two ranks";
  }

  // Every rank got `code`; the message names `rank` (unless -1) and contains `what`.
  void expect_agreed(zfcResult_t got, zfcResult_t code, int rank, const std::string& what) {
    EXPECT_EQ(got, code) << zfcGetLastError(comm_);
    EXPECT_TRUE(same_on_all_ranks(static_cast<uint64_t>(got)));
    const std::string msg = zfcGetLastError(comm_);
    if (rank >= 0) {
      EXPECT_NE(msg.find("rank " + std::to_string(rank)), std::string::npos) << msg;
    }
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
    expect_still_usable();
  }

  void expect_still_usable() {
    float v = 1.0f, sum = 0.0f;
    ASSERT_EQ(zfcAllReduce(comm_, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    EXPECT_EQ(sum, static_cast<float>(size_));
  }

  // A unique merge of {1, 2, rank+3} where rank kBad's arguments are edited by `spoil`.
  template <class Spoil>
  zfcResult_t merge_with(Spoil spoil, std::vector<int32_t>* unique_out,
                         std::vector<int32_t>* positions, size_t* num_unique) {
    std::vector<int32_t> idx = {1, 2, rank_ + 3};
    const void* indices = idx.data();
    size_t count = idx.size();
    int64_t vocab = 100;
    zfcDataType_t type = zfcInt32;
    size_t capacity = unique_out->size();
    void* stream = nullptr;
    if (rank_ == kBad) spoil(idx, indices, count, vocab, type, capacity, stream);
    return zfcUniqueMerge(comm_, indices, type, count, vocab, unique_out->data(), capacity,
                          num_unique, positions->data(), stream);
  }
};

// Runs a spoiled merge and checks the verdict and that the outputs kept their sentinels.
#define EXPECT_MERGE_FAILS(code, rank, what, spoil)                                     \
  do {                                                                                  \
    std::vector<int32_t> unique_out(64, -5), positions(3, -6);                          \
    size_t num_unique = 12345;                                                          \
    const zfcResult_t got = merge_with(spoil, &unique_out, &positions, &num_unique);   \
    expect_agreed(got, code, rank, what);                                               \
    EXPECT_EQ(num_unique, 12345u);                                                      \
    EXPECT_EQ(unique_out, std::vector<int32_t>(64, -5));                                \
    EXPECT_EQ(positions, std::vector<int32_t>(3, -6));                                  \
  } while (0)

using Idx = std::vector<int32_t>;

TEST_F(ErrorTest, UniqueMergeIndexAboveVocabulary) {
  EXPECT_MERGE_FAILS(zfcInvalidArgument, kBad, "= 100 is outside [0, 100)",
                     [](Idx& i, const void*&, size_t&, int64_t&, zfcDataType_t&, size_t&,
                        void*&) { i[2] = 100; });
}

TEST_F(ErrorTest, UniqueMergeNegativeIndex) {
  EXPECT_MERGE_FAILS(zfcInvalidArgument, kBad, "indices[0] = -4",
                     [](Idx& i, const void*&, size_t&, int64_t&, zfcDataType_t&, size_t&,
                        void*&) { i[0] = -4; });
}

TEST_F(ErrorTest, UniqueMergeNullIndices) {
  EXPECT_MERGE_FAILS(zfcInvalidArgument, kBad, "indices is NULL with count 3",
                     [](Idx&, const void*& p, size_t&, int64_t&, zfcDataType_t&, size_t&,
                        void*&) { p = nullptr; });
}

TEST_F(ErrorTest, UniqueMergeCapacityTooSmall) {
  // U_g is 2 + size_; rank kBad has room for 2.
  EXPECT_MERGE_FAILS(zfcInvalidArgument, kBad, "unique_capacity 2 is smaller",
                     [](Idx&, const void*&, size_t&, int64_t&, zfcDataType_t&, size_t& cap,
                        void*&) { cap = 2; });
}

TEST_F(ErrorTest, UniqueMergeVocabularyDiffers) {
  EXPECT_MERGE_FAILS(zfcMismatch, kBad, "vocab_size differs across ranks: rank 0 has 100",
                     [](Idx&, const void*&, size_t&, int64_t& v, zfcDataType_t&, size_t&,
                        void*&) { v = 200; });
}

TEST_F(ErrorTest, UniqueMergeIndexTypeDiffers) {
  std::vector<int64_t> wide = {1, 2, 4};
  EXPECT_MERGE_FAILS(zfcMismatch, kBad, "index data type differs",
                     [&](Idx&, const void*& p, size_t&, int64_t&, zfcDataType_t& t, size_t&,
                         void*&) {
                       t = zfcInt64;
                       p = wide.data();
                     });
}

TEST_F(ErrorTest, UniqueMergeBadIndexType) {
  EXPECT_MERGE_FAILS(zfcInvalidArgument, kBad, "index_type 2",
                     [](Idx&, const void*&, size_t&, int64_t&, zfcDataType_t& t, size_t&,
                        void*&) { t = zfcFloat32; });
}

TEST_F(ErrorTest, UniqueMergeStreamOnHost) {
  // A stream goes with device buffers: with host buffers it is refused, and a build without
  // CUDA refuses any stream. Either way every rank returns the same error.
  static int fake_stream;
  EXPECT_MERGE_FAILS(device_support_built() ? zfcInvalidArgument : zfcUnsupported, kBad,
                     "stream",
                     [](Idx&, const void*&, size_t&, int64_t&, zfcDataType_t&, size_t&,
                        void*& s) { s = &fake_stream; });
}

// ---- allreduce ----------------------------------------------------------------------------

TEST_F(ErrorTest, AllReduceCountDiffers) {
  std::vector<float> data(10, 1.0f), out(10, -3.0f);
  const size_t count = rank_ == kBad ? 9 : 10;
  const zfcResult_t got =
      zfcAllReduce(comm_, data.data(), out.data(), count, zfcFloat32, nullptr, nullptr, nullptr);
  expect_agreed(got, zfcMismatch, kBad, "count differs across ranks: rank 0 has 10");
  EXPECT_EQ(out, std::vector<float>(10, -3.0f));
}

TEST_F(ErrorTest, AllReduceCompressionDiffers) {
  std::vector<float> data(10, 1.0f), out(10, -3.0f);
  const zfcCompression_t none{zfcCompressNone, 1.0f}, fp16{zfcCompressFp16, 1.0f};
  int overflowed = -9;
  const zfcResult_t got = zfcAllReduce(comm_, data.data(), out.data(), 10, zfcFloat32,
                                       rank_ == kBad ? &fp16 : &none, &overflowed, nullptr);
  expect_agreed(got, zfcMismatch, kBad, "compression differs");
  EXPECT_EQ(out, std::vector<float>(10, -3.0f));
  EXPECT_EQ(overflowed, -9);
}

TEST_F(ErrorTest, AllReduceBadScaleAndType) {
  std::vector<float> data(4, 1.0f), out(4, -3.0f);
  const zfcCompression_t bad_scale{zfcCompressFp16, -2.0f}, good{zfcCompressFp16, 2.0f};
  zfcResult_t got = zfcAllReduce(comm_, data.data(), out.data(), 4, zfcFloat32,
                                 rank_ == kBad ? &bad_scale : &good, nullptr, nullptr);
  expect_agreed(got, zfcInvalidArgument, kBad, "scale -2");
  got = zfcAllReduce(comm_, data.data(), out.data(), 4, rank_ == kBad ? zfcInt32 : zfcFloat32,
                     nullptr, nullptr, nullptr);
  expect_agreed(got, zfcUnsupported, kBad, "type 0");
  got = zfcAllReduce(comm_, rank_ == kBad ? nullptr : data.data(), out.data(), 4, zfcFloat32,
                     nullptr, nullptr, nullptr);
  expect_agreed(got, zfcInvalidArgument, kBad, "send is NULL with count 4");
  EXPECT_EQ(out, std::vector<float>(4, -3.0f));
}

TEST_F(ErrorTest, DifferentOperationsOnDifferentRanks) {
  std::vector<float> data(3, 1.0f);
  std::vector<int32_t> idx = {1, 2, 3}, unique(8, -1);
  size_t num_unique = 0;
  zfcResult_t got;
  if (rank_ == kBad) {
    got = zfcUniqueMerge(comm_, idx.data(), zfcInt32, 3, 10, unique.data(), 8, &num_unique,
                         nullptr, nullptr);
  } else {
    got = zfcAllReduce(comm_, data.data(), data.data(), 3, zfcFloat32, nullptr, nullptr,
                       nullptr);
  }
  expect_agreed(got, zfcMismatch, kBad, "out of step");
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("collective #"), std::string::npos);
  EXPECT_EQ(data, std::vector<float>(3, 1.0f));
}

// ---- the fused sparse reduce --------------------------------------------------------------

class SparseErrorTest : public ErrorTest {
 protected:
  // One reduce on a plan whose config rank kBad edits with `spoil_config`, with call
  // arguments rank kBad edits with `spoil_call`. *out keeps its sentinel unless it succeeds.
  template <class SpoilConfig, class SpoilCall>
  zfcResult_t reduce_with(SpoilConfig spoil_config, SpoilCall spoil_call,
                          zfcSparseResult_t* out) {
    zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
    cfg.dim = 4;
    cfg.vocab_size = 1000;
    cfg.algorithm = zfcAlgoUniqueAllReduce;
    if (rank_ == kBad) spoil_config(cfg);
    zfcSparsePlan_t plan = nullptr;
    const zfcResult_t created = zfcSparsePlanCreate(comm_, &cfg, &plan);
    EXPECT_EQ(created, zfcSuccess) << zfcGetLastError(comm_);
    if (created != zfcSuccess) return created;
    std::vector<int32_t> idx = {7, 8, 7, rank_};
    std::vector<float> rows(idx.size() * cfg.dim, 0.5f);
    std::vector<uint16_t> half(rows.size(), 0x3800);  // 0.5 in fp16 and close in bf16
    const void* indices = idx.data();
    const void* row_data = cfg.row_type == zfcFloat32 ? static_cast<const void*>(rows.data())
                                                      : half.data();
    size_t count = idx.size();
    if (rank_ == kBad) spoil_call(idx, indices, row_data, count);
    const zfcResult_t got = zfcSparseReduce(plan, indices, count, row_data, out, nullptr);
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
    return got;
  }

  static zfcSparseResult_t sentinel() {
    zfcSparseResult_t s;
    std::memset(&s, 0x5a, sizeof s);
    s.size = sizeof s;
    return s;
  }
  static bool unchanged(const zfcSparseResult_t& s) {
    const zfcSparseResult_t ref = sentinel();
    return std::memcmp(&s, &ref, sizeof s) == 0;
  }

  // The spoiled reduce fails alike on every rank and leaves the caller's result untouched.
  template <class SpoilConfig, class SpoilCall>
  void expect_reduce_fails(SpoilConfig spoil_config, SpoilCall spoil_call, zfcResult_t code,
                           const std::string& what) {
    zfcSparseResult_t out = sentinel();
    const zfcResult_t got = reduce_with(spoil_config, spoil_call, &out);
    expect_agreed(got, code, kBad, what);
    EXPECT_TRUE(unchanged(out));
  }
};

using Cfg = zfcSparsePlanConfig_t;
auto no_config = [](Cfg&) {};
auto no_call = [](Idx&, const void*&, const void*&, size_t&) {};

TEST_F(SparseErrorTest, DimDiffers) {
  expect_reduce_fails([](Cfg& c) { c.dim = 5; }, no_call, zfcMismatch,
                      "dim differs across ranks: rank 0 has 4, rank 1 has 5");
}

TEST_F(SparseErrorTest, RowTypeDiffers) {
  expect_reduce_fails([](Cfg& c) { c.row_type = zfcFloat16; }, no_call, zfcMismatch,
                      "row data type differs");
}

TEST_F(SparseErrorTest, VocabularyDiffers) {
  expect_reduce_fails([](Cfg& c) { c.vocab_size = 999; }, no_call, zfcMismatch,
                      "vocab_size differs");
}

TEST_F(SparseErrorTest, AlgorithmDiffers) {
  expect_reduce_fails([](Cfg& c) { c.algorithm = zfcAlgoAllGather; }, no_call, zfcMismatch,
                      "algorithm differs");
}

TEST_F(SparseErrorTest, CompressionDiffers) {
  expect_reduce_fails(
      [](Cfg& c) {
        c.compression = zfcCompressFp16;
        c.compress_scale = 4.0f;
      },
      no_call, zfcMismatch, "compression differs");
}

TEST_F(SparseErrorTest, IndexOutsideVocabulary) {
  expect_reduce_fails(
      no_config, [](Idx& i, const void*&, const void*&, size_t&) { i[1] = 1000; },
      zfcInvalidArgument, "indices[1] = 1000 is outside [0, 1000)");
}

TEST_F(SparseErrorTest, NullRows) {
  expect_reduce_fails(
      no_config, [](Idx&, const void*&, const void*& r, size_t&) { r = nullptr; },
      zfcInvalidArgument, "rows is NULL with count 4");
}

TEST_F(SparseErrorTest, NullOutput) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = 2;
  cfg.vocab_size = 10;
  zfcSparsePlan_t plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(comm_, &cfg, &plan), zfcSuccess);
  int32_t idx[2] = {1, 2};
  float rows[4] = {1, 2, 3, 4};
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  const zfcResult_t got =
      zfcSparseReduce(plan, idx, 2, rows, rank_ == kBad ? nullptr : &out, nullptr);
  expect_agreed(got, zfcInvalidArgument, kBad, "out is NULL");
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

TEST_F(SparseErrorTest, ZeroCountsAreValid) {
  zfcSparseResult_t out = sentinel();
  const zfcResult_t got = reduce_with(
      no_config,
      [](Idx&, const void*& p, const void*& r, size_t& n) {
        p = nullptr;
        r = nullptr;
        n = 0;
      },
      &out);
  ASSERT_EQ(got, zfcSuccess) << zfcGetLastError(comm_);
  std::set<int> expect = {7, 8};  // and every rank's own number, but kBad's
  for (int r = 0; r < size_; ++r) {
    if (r != kBad) expect.insert(r);
  }
  EXPECT_EQ(out.num_unique, expect.size());
}

// ---- errors found by the caller (zfcCommSetLocalError) -----------------------------------

// Rank kBad refuses the call's arguments itself and makes it with neutral ones; every rank's
// call fails with its code and message, in place of the neutral call's own verdict.
TEST_F(ErrorTest, LocalErrorFailsEveryRankOnce) {
  std::vector<float> data(16, 1.0f), out(16, -3.0f);
  size_t count = data.size();
  const float* send = data.data();
  if (rank_ == kBad) {
    ASSERT_EQ(zfcCommSetLocalError(comm_, zfcInvalidArgument, "send holds float64 values"),
              zfcSuccess);
    count = 15;  // its own verdict (zfcMismatch) gives way to the error set
    send = nullptr;
  }
  const zfcResult_t got = zfcAllReduce(comm_, send, rank_ == kBad ? nullptr : out.data(), count,
                                       zfcFloat32, nullptr, nullptr, nullptr);
  expect_agreed(got, zfcInvalidArgument, kBad, "rank 1: send holds float64 values");
  EXPECT_EQ(out, std::vector<float>(16, -3.0f));
  // Taken by that call: the next (expect_agreed's allreduce) succeeded; and once more.
  expect_still_usable();
}

TEST_F(ErrorTest, LocalErrorKeepsTheFirstAndDefaultsItsText) {
  if (rank_ == kBad) {
    ASSERT_EQ(zfcCommSetLocalError(comm_, zfcUnsupported, nullptr), zfcSuccess);
    ASSERT_EQ(zfcCommSetLocalError(comm_, zfcInvalidArgument, "a later refusal"), zfcSuccess);
  }
  float v = 1.0f, sum = 0.0f;
  const zfcResult_t got = zfcAllReduce(comm_, rank_ == kBad ? nullptr : &v, &sum,
                                       rank_ == kBad ? 0 : 1, zfcFloat32, nullptr, nullptr,
                                       nullptr);
  expect_agreed(got, zfcUnsupported, kBad, zfcGetErrorString(zfcUnsupported));
  EXPECT_EQ(std::string(zfcGetLastError(comm_)).find("later"), std::string::npos);
}

TEST_F(ErrorTest, LocalErrorRefusesASuccessCode) {
  EXPECT_EQ(zfcCommSetLocalError(comm_, zfcSuccess, "fine"), zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("code 0"), std::string::npos);
  EXPECT_EQ(zfcCommSetLocalError(comm_, zfcNumResults, "too high"), zfcInvalidArgument);
  EXPECT_EQ(zfcCommSetLocalError(nullptr, zfcInvalidArgument, "x"), zfcInvalidArgument);
  expect_still_usable();  // nothing was set
}

// In a group, the refusing rank records fewer calls: its error, not the count, is the verdict,
// and nothing of any rank's is written.
TEST_F(ErrorTest, LocalErrorInAGroupFailsTheGroup) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = 2;
  cfg.vocab_size = 50;
  zfcSparsePlan_t plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(comm_, &cfg, &plan), zfcSuccess) << zfcGetLastError(comm_);
  std::vector<int32_t> idx = {3, rank_};
  std::vector<float> rows(4, 1.0f), sums(3, -2.0f);
  zfcSparseResult_t res = ZFC_SPARSE_RESULT_INITIALIZER;
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  EXPECT_EQ(zfcAllReduce(comm_, rows.data(), sums.data(), 3, zfcFloat32, nullptr, nullptr,
                         nullptr),
            zfcSuccess);
  if (rank_ == kBad) {
    EXPECT_EQ(zfcCommSetLocalError(comm_, zfcInvalidArgument, "rows has 3 elements"),
              zfcSuccess);
  } else {
    EXPECT_EQ(zfcSparseReduce(plan, idx.data(), idx.size(), rows.data(), &res, nullptr),
              zfcSuccess);
  }
  const zfcResult_t got = zfcGroupEnd(comm_);
  expect_agreed(got, zfcInvalidArgument, kBad, "rank 1: rows has 3 elements");
  EXPECT_EQ(sums, std::vector<float>(3, -2.0f));
  EXPECT_EQ(res.num_unique, 0u);
  // Set before an empty group on one rank only: that rank still takes part in it.
  if (rank_ == kBad) {
    EXPECT_EQ(zfcCommSetLocalError(comm_, zfcMismatch, "a group refused whole"), zfcSuccess);
  }
  ASSERT_EQ(zfcGroupStart(comm_), zfcSuccess);
  if (rank_ != kBad) {
    EXPECT_EQ(zfcSparseReduce(plan, idx.data(), idx.size(), rows.data(), &res, nullptr),
              zfcSuccess);
  }
  expect_agreed(zfcGroupEnd(comm_), zfcMismatch, kBad, "a group refused whole");
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

// A bounded call agrees on the host when its plan has no agreed capacity yet: every rank
// returns the refusal.
TEST_F(ErrorTest, LocalErrorFailsABoundedCall) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = 2;
  cfg.vocab_size = 50;
  zfcSparsePlan_t plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(comm_, &cfg, &plan), zfcSuccess) << zfcGetLastError(comm_);
  std::vector<int32_t> idx = {3, rank_}, out_idx(8, -4);
  std::vector<float> rows(4, 1.0f), out_rows(16, -4.0f);
  zfcBoundedStatus_t status{0, 0, 0};
  zfcResult_t got;
  if (rank_ == kBad) {
    ASSERT_EQ(zfcCommSetLocalError(comm_, zfcInvalidArgument, "out rows is read-only"),
              zfcSuccess);
    got = zfcSparseReduceBounded(plan, nullptr, 0, nullptr, 0, nullptr, nullptr, &status,
                                 nullptr);
  } else {
    got = zfcSparseReduceBounded(plan, idx.data(), idx.size(), rows.data(), 8, out_idx.data(),
                                 out_rows.data(), &status, nullptr);
  }
  expect_agreed(got, zfcInvalidArgument, kBad, "rank 1: out rows is read-only");
  EXPECT_EQ(out_idx, std::vector<int32_t>(8, -4));
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

// With no collective after it, the error goes with the communicator: destroy and abort free
// it as usual, without communicating.
TEST_F(ErrorTest, LocalErrorDroppedWithTheCommunicator) {
  for (const bool abort : {false, true}) {
    zfcComm_t c = nullptr;
    ASSERT_EQ(open_world_comm(&c, nullptr), zfcSuccess) << zfcGetLastError(nullptr);
    if (rank_ == kBad) {
      ASSERT_EQ(zfcCommSetLocalError(c, zfcInvalidArgument, "never reported"), zfcSuccess);
    }
    EXPECT_EQ(abort ? zfcCommAbort(c) : zfcCommDestroy(c), zfcSuccess);
  }
  expect_still_usable();
}

// ---- communicators ------------------------------------------------------------------------

TEST_F(ErrorTest, SplitWithBadColor) {
  zfcComm_t sub = reinterpret_cast<zfcComm_t>(0x1);
  const zfcResult_t got = zfcCommSplit(comm_, rank_ == kBad ? -7 : 0, 0, &sub);
  expect_agreed(got, zfcInvalidArgument, kBad, "color -7");
  EXPECT_EQ(sub, reinterpret_cast<zfcComm_t>(0x1));
}

TEST_F(ErrorTest, InitWithBadConfigOnOneRank) {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  if (rank_ == kBad) cfg.magic = 0;
  MPI_Comm world = MPI_COMM_WORLD;
  zfcComm_t c = reinterpret_cast<zfcComm_t>(0x2);
  const zfcResult_t got = zfcCommInitMpi(&c, &world, &cfg);
  EXPECT_EQ(got, zfcInvalidUsage);
  EXPECT_TRUE(same_on_all_ranks(static_cast<uint64_t>(got)));
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("rank 1: config struct"),
            std::string::npos)
      << zfcGetLastError(nullptr);
  EXPECT_EQ(c, reinterpret_cast<zfcComm_t>(0x2));
  expect_still_usable();
}

// How long a refusal takes: one header exchange, the same on every rank. Printed for
// docs/reliability.md, not judged (times are not test criteria on shared machines).
TEST_F(ErrorTest, RefusalTakesOneHeaderExchange) {
  constexpr int kCalls = 200;
  std::vector<float> data(16, 1.0f), out(16);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < kCalls; ++i) {
    const size_t count = rank_ == kBad ? 15 : 16;
    ASSERT_EQ(zfcAllReduce(comm_, data.data(), out.data(), count, zfcFloat32, nullptr, nullptr,
                           nullptr),
              zfcMismatch);
  }
  const double per_call_us = (MPI_Wtime() - t0) / kCalls * 1e6;
  double worst = 0.0;
  MPI_Reduce(&per_call_us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank_ == 0) {
    std::printf("a refused collective (count differs on rank %d) returned zfcMismatch on all "
                "%d ranks after %.1f us (slowest rank, mean of %d calls)\n", kBad, size_,
                worst, kCalls);
  }
  expect_still_usable();
}

}  // namespace
}  // namespace test
}  // namespace zfc
