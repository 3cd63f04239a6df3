// Seed groups across ranks: every rank of a group gets the same step seeds and candidates,
// different groups different ones; the group communicator holds exactly the group; and
// arguments that differ across ranks fail on every rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <algorithm>
#include <cmath>

#include "common/mpi_world.hpp"
#include "common/reference.hpp"

namespace zfc {
namespace test {
namespace {

// Every rank's value of x, in rank order.
std::vector<uint64_t> gather(uint64_t x) {
  std::vector<uint64_t> all(static_cast<size_t>(world_size()));
  MPI_Allgather(&x, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  return all;
}

void check_group(zfcComm_t comm, zfcSeedPolicy_t policy, double alpha, int explicit_group,
                 int want_count) {
  zfcSeedGroup_t g = nullptr;
  ASSERT_EQ(zfcSeedGroupCreate(comm, policy, alpha, explicit_group, 99, &g), zfcSuccess)
      << zfcGetLastError(comm);
  int id = -1, count = -1;
  zfcComm_t gc = nullptr;
  ASSERT_EQ(zfcSeedGroupInfo(g, &id, &count, &gc), zfcSuccess);
  EXPECT_EQ(count, want_count) << policy;
  uint64_t seed = 0;
  ASSERT_EQ(zfcSeedGroupStepSeed(g, 5, &seed), zfcSuccess);
  EXPECT_EQ(seed, zfcStepSeed(99, id, 5));
  std::vector<int64_t> cand(256);
  ASSERT_EQ(zfcSampleLogUniform(seed, 50000, cand.size(), 1, cand.data(), nullptr, nullptr, 0,
                                nullptr, nullptr),
            zfcSuccess);
  const std::vector<uint64_t> ids = gather(static_cast<uint64_t>(id));
  const std::vector<uint64_t> seeds = gather(seed);
  const std::vector<uint64_t> samples = gather(fnv1a(cand.data(), cand.size() * 8));
  int members = 0;
  for (size_t r = 0; r < ids.size(); ++r) {
    const bool same = ids[r] == static_cast<uint64_t>(id);
    members += same ? 1 : 0;
    EXPECT_EQ(seeds[r] == seed, same) << r;
    EXPECT_EQ(samples[r] == samples[static_cast<size_t>(world_rank())], same) << r;
  }
  int gsize = -1;
  ASSERT_EQ(zfcCommCount(gc, &gsize), zfcSuccess);
  EXPECT_EQ(gsize, members);
  // The group communicator works: its members sum to its size.
  float one = 1, sum = 0;
  ASSERT_EQ(zfcAllReduce(gc, &one, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr), zfcSuccess);
  EXPECT_EQ(sum, static_cast<float>(members));
  EXPECT_EQ(zfcSeedGroupDestroy(g), zfcSuccess);
}

TEST_F(WorldTest, EveryPolicyGroupsRanksBySeed) {
  int power = 0;
  for (double s = 1; s < 1e9; ++s) {
    if (std::pow(static_cast<double>(size_), 0.64) <= s + 1e-9) {
      power = static_cast<int>(s);
      break;
    }
  }
  check_group(comm_, zfcSeedPower, 0.64, -1, power);
  check_group(comm_, zfcSeedAllSame, 0, -1, 1);
  check_group(comm_, zfcSeedAllDistinct, 0, -1, size_);
  const int log2 = std::max(1, static_cast<int>(std::lround(std::log2(size_))));
  check_group(comm_, zfcSeedLog2, 0, -1, log2);
  // Explicit: odd and even ranks, named 7 and 3 (renumbered 0 and 1 in increasing order).
  check_group(comm_, zfcSeedExplicit, 0, rank_ % 2 ? 7 : 3, size_ > 1 ? 2 : 1);
}

TEST_F(WorldTest, DifferingSeedsFailEverywhere) {
  if (size_ < 2) GTEST_SKIP() << "agreement needs two ranks";
  zfcSeedGroup_t g = nullptr;
  EXPECT_EQ(zfcSeedGroupCreate(comm_, zfcSeedAllSame, 0, -1, rank_ == 1 ? 2 : 1, &g),
            zfcMismatch);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("base_seed differs"), std::string::npos)
      << zfcGetLastError(comm_);
  EXPECT_EQ(g, nullptr);
  EXPECT_EQ(zfcSeedGroupCreate(comm_, zfcSeedExplicit, 0, rank_ == 1 ? -2 : 0, 1, &g),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(comm_)).find("rank 1: explicit_group -2"),
            std::string::npos)
      << zfcGetLastError(comm_);
}

}  // namespace
}  // namespace test
}  // namespace zfc
