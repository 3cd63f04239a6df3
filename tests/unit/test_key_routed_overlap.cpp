// The key-routed step merges the owners' keys without reading the count back
// (IndexSet::merge_disjoint_runs); a device reads it with the step's last read
// (SparseCall::unread), the host at once. Owners whose keys overlap -- a peer that summed
// keys it does not own -- must still fail the call, naming both counts, with every located
// key inside the set: peers that mirror this rank own what it owns.
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "algo/index_set.hpp"
#include "core/comm.hpp"
#include "unit/mirror_transport.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace {

using test::MirrorTransport;

// Two runs that overlap, as owners that both summed keys 3 and 9 would send: merged by the
// host's one merge and by the default every other backend runs (copy, sort, locate), the same
// set, places and count, with no read; the set's tail holds the largest key.
TEST(KeyRoutedOverlap, RepeatedKeysLeaveTheLargestKeyInTheSetsTail) {
  for (bool host_merge : {true, false}) {
    Workspace ws;
    HostStepKernels<uint32_t> k(ws);
    IndexSet<uint32_t> set(ws, 50);
    const std::vector<std::vector<uint32_t>> blocks = {{3, 9}, {3, 9, 41}};
    const uint32_t* keys[] = {blocks[0].data(), blocks[1].data()};
    size_t counts[] = {2, 3};
    std::vector<int32_t> places(5, -1);
    int32_t* at[] = {places.data(), places.data() + 2};
    const KeyRuns<uint32_t> runs{keys, counts, at, 2};
    uint64_t* count = nullptr;
    if (host_merge) {
      ASSERT_TRUE(set.merge_disjoint_runs(k, runs, 5, &count).ok());
    } else {
      uint64_t words[2] = {};
      std::vector<uint32_t> global(5);
      ASSERT_TRUE(k.StepKernels<uint32_t>::merge_disjoint_runs(runs, 50, global.data(), 5, words)
                      .ok());
      EXPECT_EQ(global, (std::vector<uint32_t>{3, 9, 41, std::numeric_limits<uint32_t>::max(),
                                               std::numeric_limits<uint32_t>::max()}));
      EXPECT_EQ(words[0], 3u);
      EXPECT_EQ(places, (std::vector<int32_t>{0, 1, 0, 1, 2}));
      continue;
    }
    EXPECT_EQ(k.fetches(), 0u);
    EXPECT_EQ(set.global_count(), 5u);
    EXPECT_EQ(count[0], 3u);
    const uint32_t big = std::numeric_limits<uint32_t>::max();
    EXPECT_EQ(std::vector<uint32_t>(set.global(), set.global() + 5),
              (std::vector<uint32_t>{3, 9, 41, big, big}));
    EXPECT_EQ(places, (std::vector<int32_t>{0, 1, 0, 1, 2}));
  }
}

// An owner's merge of its senders' runs: the host's and the default give the same set and
// places, and the host learns the size by one read in both.
TEST(KeyRoutedOverlap, AnOwnersMergeIsTheDefaultsBitForBit) {
  const std::vector<std::vector<uint32_t>> blocks = {{1, 4, 7, 30}, {}, {0, 4, 30, 31}, {7}};
  for (bool host_merge : {true, false}) {
    Workspace ws;
    HostStepKernels<uint32_t> k(ws);
    const uint32_t* keys[4];
    size_t counts[4];
    std::vector<int32_t> places(9, -1);
    int32_t* at[4];
    size_t off = 0;
    for (size_t r = 0; r < 4; ++r) {
      keys[r] = blocks[r].data();
      counts[r] = blocks[r].size();
      at[r] = places.data() + off;
      off += blocks[r].size();
    }
    const KeyRuns<uint32_t> runs{keys, counts, at, 4};
    std::vector<uint32_t> uniq(9);
    size_t u = 0;
    const Status s = host_merge ? k.merge_runs(runs, 32, uniq.data(), &u)
                                : k.StepKernels<uint32_t>::merge_runs(runs, 32, uniq.data(), &u);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(k.fetches(), 1u);
    ASSERT_EQ(u, 6u);
    uniq.resize(u);
    EXPECT_EQ(uniq, (std::vector<uint32_t>{0, 1, 4, 7, 30, 31}));
    EXPECT_EQ(places, (std::vector<int32_t>{1, 2, 3, 4, 0, 2, 4, 5, 3}));
  }
}

TEST(KeyRoutedOverlap, MirroredOwnersFailTheCall) {
  for (int ranks : {1, 3}) {
    std::unique_ptr<zfcComm> comm = comm_wrap(std::make_unique<MirrorTransport>(ranks), Config{});
    const size_t dim = 4;
    zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
    cfg.dim = dim;
    cfg.vocab_size = 64;
    cfg.index_type = zfcInt32;
    cfg.algorithm = zfcAlgoKeyRouted;
    zfcSparsePlan_t plan = nullptr;
    ASSERT_EQ(zfcSparsePlanCreate(comm.get(), &cfg, &plan), zfcSuccess);
    // Every key of 0..63 that appears, so that this rank (owner 0 of any count) owns some.
    std::vector<int32_t> ids;
    for (int32_t v = 0; v < 64; v += 2) ids.insert(ids.end(), {v, v});
    std::vector<float> rows(ids.size() * dim);
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.25f * static_cast<float>(i % 7);
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    const zfcResult_t r = zfcSparseReduce(plan, ids.data(), ids.size(), rows.data(), &out,
                                          nullptr);
    if (ranks == 1) {
      // One rank owns every key: no overlap, and the call succeeds.
      EXPECT_EQ(r, zfcSuccess) << zfcGetLastError(comm.get());
      EXPECT_EQ(out.num_unique, 32u);
    } else {
      // Each mirrored owner reports this rank's own keys: U distinct keys of ranks * U.
      EXPECT_EQ(r, zfcTransportError);
      const std::string said = zfcGetLastError(comm.get());
      EXPECT_NE(said.find("the owners' summed keys overlap"), std::string::npos) << said;
      EXPECT_NE(said.find(" distinct of "), std::string::npos) << said;
    }
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  }
}

}  // namespace
}  // namespace zfc
