// The owners of the owner-partitioned exchange: which rank sums each row of the global set.
//
// Every rank computes the same map from what it already holds after the index exchange (the
// positions of every rank's distinct keys), without a message. A row p held by h_p ranks
// costs its owner h_p - 2 received rows when the owner holds it (h_p - 1 contributions from
// the others, and it need not receive the result) and h_p - 1 otherwise, so rank j
// receives U_g + load_j rows in all, load_j being the sum of its rows' costs. Rows are
// placed heaviest first (h_p descending, then position ascending): on the least loaded of
// their holders, unless the least loaded rank of all is more than one row lighter, and rows
// that only one rank holds stay with it. Integer arithmetic on shared data: every rank builds
// the same map. See docs/algorithms.md for the byte formula.
#pragma once

#include <cstddef>
#include <cstdint>

#include "algo/owner_ranges.hpp"
#include "core/workspace.hpp"

namespace zfc {

struct OwnerMap {
  int parts = 0;
  const int32_t* owner = nullptr;     // U_g entries: the owner of each position
  const int32_t* owned = nullptr;     // positions grouped by owner, ascending in each group
  const size_t* owned_count = nullptr;  // parts entries
  const size_t* owned_displs = nullptr;
  const int32_t* holder_displs = nullptr;  // U_g + 1 entries into holders
  const int32_t* holders = nullptr;        // the ranks holding each position, ascending
  const uint64_t* received_rows = nullptr;  // parts entries: rows each rank receives from
                                            // its peers in the owners' alltoallv

  int32_t holder_count(size_t p) const { return holder_displs[p + 1] - holder_displs[p]; }
  const int32_t* owned_by(int j) const { return owned + owned_displs[j]; }
};

// The balanced, holder-aware map over `parts` ranks of the global set of `ug` positions,
// from every rank's positions (workspace kOwnerMap).
OwnerMap balanced_owners(const RankPositions& at, size_t ug, int parts, Workspace& ws);

}  // namespace zfc
