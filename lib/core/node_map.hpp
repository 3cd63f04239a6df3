// Which node each rank of a communicator is on. Nodes decide two things: the order in which
// every sum over ranks is formed (rank order inside each node, then the node sums in node
// order), so that every algorithm, the hierarchical one included, gives the same bits; and
// which ranks the hierarchical exchange groups together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zfc {

class NodeMap {
 public:
  // One node holding `size` ranks.
  static NodeMap single(int size);
  // Ranks with equal ids share a node; nodes are numbered in order of their lowest rank.
  static NodeMap from_ids(const std::vector<uint64_t>& id_of_rank);
  // Ranks [0, n), [n, 2n), ... form the nodes.
  static NodeMap blocks(int size, int ranks_per_node);

  int size() const { return static_cast<int>(node_of_rank_.size()); }
  int node_count() const { return static_cast<int>(members_.size()); }
  int node_of(int rank) const { return node_of_rank_[static_cast<size_t>(rank)]; }
  // This rank's index among the ranks of its node.
  int local_index(int rank) const { return local_index_[static_cast<size_t>(rank)]; }
  // The ranks of node n, in increasing order.
  const std::vector<int>& members(int n) const { return members_[static_cast<size_t>(n)]; }
  const std::vector<int>& node_of_rank() const { return node_of_rank_; }

  // Whether every node holds the same number of ranks.
  bool uniform() const;
  // Whether sums over ranks differ from plain rank order: some node holds several ranks and
  // there are several nodes.
  bool grouped() const { return node_count() > 1 && node_count() < size(); }
  // Whether the hierarchical exchange can run: grouped and uniform.
  bool hierarchical() const { return grouped() && uniform(); }

 private:
  std::vector<int> node_of_rank_;
  std::vector<int> local_index_;
  std::vector<std::vector<int>> members_;
};

}  // namespace zfc
