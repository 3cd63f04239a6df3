// The first exchange of a group of n calls, and its verdict. Every rank sends one block,
//   [group header][n call headers][n payload sizes, uint64 each][the n payloads]
// in one Transport::allgather_blocks (one round, whatever the sizes), so a group costs one
// agreement however many calls it holds. A rank's local failure, in a call or in recording
// one, is its group header's (the first call that failed, named by its place), so whether
// the failure texts' allgather follows is decided from the first 96 bytes of every block,
// as for a single operation, whatever each rank recorded.
#pragma once

#include <vector>

#include "algo/agreement.hpp"

namespace zfc {

// `s`, named as the failure of call i of the group.
Status in_group(size_t i, const Status& s);

// This rank's part: the group's header (op kGroup, count n, the rank's first local failure)
// and each call's.
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
  std::vector<std::string> group_messages;  // the ranks' failure texts, when some failed
  std::vector<Agreed> calls;                // call i of every rank (no texts)
};

// Numbers the group and its calls with the transport's next sequence number and exchanges
// the blocks. A rank whose block does not parse (a different number of calls, a short
// block) leaves a group header that agree_group() names.
Status exchange_group(Transport& t, Workspace& ws, const GroupSide& mine, GroupAgreed* out);

// The verdict every rank computes identically: the group headers' (ranks out of step, a
// rank's local failure, a different number of calls), then call by call, in order, the
// verdict of agree() on that call's headers (what differs between ranks), named by its place
// in the group.
Status agree_group(const GroupAgreed& agreed, int size);

}  // namespace zfc
