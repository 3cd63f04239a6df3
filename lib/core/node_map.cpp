#include "core/node_map.hpp"

#include <unordered_map>

namespace zfc {

NodeMap NodeMap::from_ids(const std::vector<uint64_t>& id_of_rank) {
  NodeMap m;
  std::unordered_map<uint64_t, int> number;
  for (size_t r = 0; r < id_of_rank.size(); ++r) {
    auto it = number.find(id_of_rank[r]);
    if (it == number.end()) {
      it = number.emplace(id_of_rank[r], static_cast<int>(m.members_.size())).first;
      m.members_.emplace_back();
    }
    std::vector<int>& mine = m.members_[static_cast<size_t>(it->second)];
    m.node_of_rank_.push_back(it->second);
    m.local_index_.push_back(static_cast<int>(mine.size()));
    mine.push_back(static_cast<int>(r));
  }
  return m;
}

NodeMap NodeMap::single(int size) {
  return from_ids(std::vector<uint64_t>(static_cast<size_t>(size), 0));
}

NodeMap NodeMap::blocks(int size, int ranks_per_node) {
  std::vector<uint64_t> ids;
  for (int r = 0; r < size; ++r) ids.push_back(static_cast<uint64_t>(r / ranks_per_node));
  return from_ids(ids);
}

bool NodeMap::uniform() const {
  for (const std::vector<int>& m : members_) {
    if (m.size() != members_[0].size()) return false;
  }
  return true;
}

}  // namespace zfc
