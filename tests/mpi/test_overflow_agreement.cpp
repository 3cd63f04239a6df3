// FP16 overflow agreement: one inf or NaN on one rank, at one element, makes every rank
// report the overflow, with the same decision, in zfcAllReduce and in the fused reduce, for
// every wire format; and without one no rank reports it.
#include <cmath>
#include <limits>

#include "common/mpi_world.hpp"

namespace zfc {
namespace test {
namespace {

struct Fault {
  const char* what;
  float value;  // written on one rank at one element; 0: no fault
};

const Fault kFaults[] = {
    {"none", 0.0f},
    {"+inf", std::numeric_limits<float>::infinity()},
    {"-inf", -std::numeric_limits<float>::infinity()},
    {"nan", std::numeric_limits<float>::quiet_NaN()},
    {"fp16 overflow after scaling", 70000.0f},  // finite, but x 1 exceeds fp16's 65504
};

const zfcCompression_t kWires[] = {
    {zfcCompressNone, 1.0f}, {zfcCompressFp16, 1.0f}, {zfcCompressBf16, 1.0f}};

// Whether a fault must show: every non-finite value does, and a finite one only where the
// wire cannot carry it.
bool must_overflow(const Fault& f, const zfcCompression_t& how) {
  if (f.value == 0.0f) return false;
  if (std::isfinite(f.value)) return how.kind == zfcCompressFp16;
  return true;
}

class OverflowAgreement : public WorldTest {};

TEST_F(OverflowAgreement, AllReduceOnEveryRankAlike) {
  constexpr size_t kCount = 1000;
  const size_t elements[] = {0, kCount / 2 + 3, kCount - 1};
  for (const zfcCompression_t& how : kWires) {
    for (const Fault& f : kFaults) {
      for (int bad = 0; bad < size_; ++bad) {
        for (size_t at : elements) {
          std::vector<float> send(kCount, 0.5f), recv(kCount);
          if (rank_ == bad && f.value != 0.0f) send[at] = f.value;
          int overflowed = -1;
          ASSERT_EQ(zfcAllReduce(comm_, send.data(), recv.data(), kCount, zfcFloat32, &how,
                                 &overflowed, nullptr),
                    zfcSuccess)
              << zfcGetLastError(comm_);
          const bool expect = must_overflow(f, how);
          EXPECT_EQ(overflowed, expect ? 1 : 0) << f.what << " on rank " << bad << " at "
                                                << at << ", compression " << how.kind;
          EXPECT_TRUE(same_on_all_ranks(static_cast<uint64_t>(overflowed)));
          zfcStats_t stats = ZFC_STATS_INITIALIZER;
          ASSERT_EQ(zfcCommGetStats(comm_, &stats), zfcSuccess);
          EXPECT_EQ(stats.last.overflows, expect ? 1u : 0u);
        }
      }
    }
  }
}

TEST_F(OverflowAgreement, FusedReduceOnEveryRankAlike) {
  constexpr size_t kDim = 8, kCount = 64;
  const int algorithms[] = {zfcAlgoAllGather, zfcAlgoUniqueAllReduce, zfcAlgoUniqueAllGather,
                            zfcAlgoOwnerPartitioned, zfcAlgoKeyRouted};
  for (int algo : algorithms) {
    for (const zfcCompression_t& how : kWires) {
      zfcSparsePlanConfig_t pc = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
      pc.dim = kDim;
      pc.vocab_size = 500;
      pc.algorithm = algo;
      pc.compression = how.kind;
      pc.compress_scale = how.scale;
      zfcSparsePlan_t plan = nullptr;
      ASSERT_EQ(zfcSparsePlanCreate(comm_, &pc, &plan), zfcSuccess);
      for (const Fault& f : kFaults) {
        for (int bad = 0; bad < size_; ++bad) {
          std::vector<int32_t> idx(kCount);
          for (size_t i = 0; i < kCount; ++i) idx[i] = static_cast<int32_t>((i * 7 + rank_) % 90);
          std::vector<float> rows(kCount * kDim, 0.25f);
          if (rank_ == bad && f.value != 0.0f) rows[(kCount / 3) * kDim + 5] = f.value;
          zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
          ASSERT_EQ(zfcSparseReduce(plan, idx.data(), kCount, rows.data(), &out, nullptr),
                    zfcSuccess)
              << zfcGetLastError(comm_);
          EXPECT_EQ(out.overflowed, must_overflow(f, how) ? 1 : 0)
              << f.what << " on rank " << bad << ", " << zfcGetAlgorithmName(algo)
              << ", compression " << how.kind;
          EXPECT_TRUE(same_on_all_ranks(static_cast<uint64_t>(out.overflowed)));
        }
      }
      ASSERT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace zfc
