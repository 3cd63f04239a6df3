// The first exchange of a group of n calls, and its verdict. Every rank sends one block,
//   [group header][n call headers][n payload sizes, uint64 each][the n payloads]
// in one Transport::allgather_blocks (one round, whatever the sizes), so a group costs one
// agreement however many calls it holds. The failure texts follow in a second allgather only
// when some rank reports a failure: each failing rank sends n + 1 texts (its group's and its
// calls'), each as a uint32 length and its bytes.
#pragma once

#include <vector>

#include "algo/agreement.hpp"

namespace zfc {

// This rank's part: the group's header (op kGroup, count n) and each call's.
struct GroupSide {
  const LocalHeader* group = nullptr;
  std::vector<const LocalHeader*> calls;
  std::vector<const void*> payloads;
  std::vector<size_t> payload_bytes;
};

// Every rank's part, as received. The call views point into ws (kHeaders, kCounts,
// kFirstBlocks) until the next group on ws.
struct GroupAgreed {
  const OpHeader* group_headers = nullptr;  // one per rank
  std::vector<std::string> group_messages;  // the ranks' group-level failure texts
  std::vector<Agreed> calls;                // call i of every rank
};

// Numbers the group and its calls with the transport's next sequence number and exchanges
// the blocks. A rank whose block does not parse (a different number of calls, a short
// block) leaves a group header that agree_group() names.
Status exchange_group(Transport& t, Workspace& ws, const GroupSide& mine, GroupAgreed* out);

// The verdict every rank computes identically: the group headers' (ranks out of step, a
// group-level failure, a different number of calls), then call by call, in order, the
// verdict of agree() on that call's headers, named by its place in the group.
Status agree_group(const GroupAgreed& agreed, int size);

}  // namespace zfc
