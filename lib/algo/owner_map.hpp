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
#include "core/node_map.hpp"
#include "exec/workspace.hpp"

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

// The owners of the hierarchical exchange over N nodes of L ranks. Each position p gets a
// local index j(p), the same on every node: member j of each node sums the node's rows of p;
// and a node k(p): rank (k, j), member j of node k, adds the node sums and is the row's
// final owner. With h_np the members of node n holding p and H_p the nodes holding it, p
// costs member j of each holding node n h_np - 1 received rows if it holds p, h_np
// otherwise; and its final owner H_p - 2 if its node holds p, H_p - 1 otherwise (the nodes'
// sums, less the result row it need not receive). Every rank receives U_g + load rows in
// all. Positions are placed heaviest first (total holders descending, then position
// ascending): j minimising the largest load plus cost over the holding nodes (lower j on
// ties), then k minimising load plus cost on that local index (lower k on ties). Integer
// arithmetic on shared data: every rank builds the same map. See docs/algorithms.md.
struct NodeOwnerMap {
  int locals = 0, nodes = 0;           // L, N
  const int32_t* local = nullptr;      // U_g entries: j(p)
  const int32_t* order = nullptr;      // positions sorted by (j, k, p)
  const size_t* group_displs = nullptr;  // L * N + 1 entries: group (j, k) starts at
                                         // order + group_displs[j * N + k]
  const int32_t* holder_displs = nullptr;  // U_g + 1 entries into holders
  const int32_t* holders = nullptr;        // the ranks holding each position, ascending
  const uint64_t* received_rows = nullptr;  // G entries, by rank: rows received in the
                                            // four row steps

  size_t group_begin(int j, int k) const { return group_displs[j * nodes + k]; }
  size_t group_len(int j, int k) const {
    return group_displs[j * nodes + k + 1] - group_displs[j * nodes + k];
  }
};

// The map over `nodes` (hierarchical: N nodes of L ranks) of the global set of `ug`
// positions, from every rank's positions (workspace kOwnerMap).
NodeOwnerMap balanced_node_owners(const RankPositions& at, size_t ug, const NodeMap& nodes,
                                  Workspace& ws);

}  // namespace zfc
