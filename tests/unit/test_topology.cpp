// The machine topology and a rank's share of it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topo/topology.hpp"

namespace zfc {
namespace {

TEST(Topology, CoresAreSharedEvenlyOrRoundRobin) {
  EXPECT_EQ(share_cores(8, 0, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(share_cores(8, 1, 3), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(share_cores(8, 2, 3), (std::vector<int>{6, 7}));
  EXPECT_EQ(share_cores(4, 0, 1), (std::vector<int>{0, 1, 2, 3}));
  // More ranks than cores: one shared core each.
  EXPECT_EQ(share_cores(2, 0, 3), (std::vector<int>{0}));
  EXPECT_EQ(share_cores(2, 1, 3), (std::vector<int>{1}));
  EXPECT_EQ(share_cores(2, 2, 3), (std::vector<int>{0}));
  EXPECT_TRUE(share_cores(0, 0, 1).empty());
  EXPECT_TRUE(share_cores(4, 3, 3).empty());
  // Every core is given out exactly once when ranks <= cores.
  for (int cores = 1; cores <= 17; ++cores) {
    for (int ranks = 1; ranks <= cores; ++ranks) {
      std::vector<int> all;
      for (int r = 0; r < ranks; ++r) {
        const std::vector<int> mine = share_cores(cores, r, ranks);
        EXPECT_FALSE(mine.empty());
        all.insert(all.end(), mine.begin(), mine.end());
      }
      ASSERT_EQ(all.size(), static_cast<size_t>(cores));
      for (int c = 0; c < cores; ++c) ASSERT_EQ(all[static_cast<size_t>(c)], c);
    }
  }
}

TEST(Topology, ThisMachineIsDescribed) {
  EXPECT_EQ(host_id(), host_id());
  const Topology t = discover_topology(1, 4, false);
  EXPECT_GE(t.cores, 1);
  EXPECT_GE(t.hardware_threads, t.cores);
  EXPECT_GE(t.numa_nodes, 1);
  EXPECT_EQ(t.rank_cores, share_cores(t.cores, 1, 4));
  EXPECT_FALSE(t.rank_numa.empty());
  EXPECT_FALSE(t.bound);
  EXPECT_NE(t.summary.find("local rank 1 of 4"), std::string::npos) << t.summary;
  EXPECT_NE(t.summary.find(hwloc_available() ? "(hwloc)" : "no hwloc"), std::string::npos);
}

}  // namespace
}  // namespace zfc
