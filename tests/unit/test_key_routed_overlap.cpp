// The key-routed step merges the owners' keys without reading the count back
// (IndexSet::merge_disjoint); a device reads it with the step's last read
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

TEST(KeyRoutedOverlap, RepeatedKeysLeaveTheLargestKeyInTheSetsTail) {
  Workspace ws;
  HostStepKernels<uint32_t> k(ws);
  IndexSet<uint32_t> set(ws, 50);
  const std::vector<uint32_t> keys = {9, 3, 9, 41, 3};
  uint64_t* count = nullptr;
  ASSERT_TRUE(set.merge_disjoint(k, keys.data(), keys.size(), &count).ok());
  EXPECT_EQ(k.fetches(), 0u);
  EXPECT_EQ(set.global_count(), keys.size());
  EXPECT_EQ(count[0], 3u);
  const uint32_t big = std::numeric_limits<uint32_t>::max();
  EXPECT_EQ(std::vector<uint32_t>(set.global(), set.global() + keys.size()),
            (std::vector<uint32_t>{3, 9, 41, big, big}));
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
