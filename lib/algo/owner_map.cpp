#include "algo/owner_map.hpp"

#include <algorithm>
#include <climits>

namespace zfc {
namespace {

// Carves 8-byte aligned arrays out of one workspace slot.
class Carver {
 public:
  explicit Carver(char* base) : at_(base) {}
  template <class T>
  T* take(size_t n) {
    T* p = reinterpret_cast<T*>(at_);
    at_ += (n * sizeof(T) + 7) / 8 * 8;
    return p;
  }
  static size_t bytes(size_t n, size_t size) { return (n * size + 7) / 8 * 8; }

 private:
  char* at_;
};

// The least loaded of n ranks (the lower rank on ties) under point updates, in O(log n): a
// tournament tree whose leaves are the ranks.
class LeastLoaded {
 public:
  LeastLoaded(const int64_t* load, int n, int32_t* tree) : load_(load), tree_(tree) {
    leaves_ = 1;
    while (leaves_ < n) leaves_ *= 2;
    for (int i = 0; i < leaves_; ++i) tree_[leaves_ + i] = i < n ? i : -1;
    for (int i = leaves_ - 1; i >= 1; --i) tree_[i] = better(tree_[2 * i], tree_[2 * i + 1]);
  }
  static size_t tree_size(int n) {
    size_t leaves = 1;
    while (leaves < static_cast<size_t>(n)) leaves *= 2;
    return 2 * leaves;
  }
  int best() const { return tree_[1]; }
  void changed(int r) {
    for (int i = (leaves_ + r) / 2; i >= 1; i /= 2) {
      tree_[i] = better(tree_[2 * i], tree_[2 * i + 1]);
    }
  }

 private:
  int32_t better(int32_t a, int32_t b) const {
    if (a < 0) return b;
    if (b < 0) return a;
    return load_[b] < load_[a] ? b : a;  // a < b: the lower rank wins ties
  }
  const int64_t* load_;
  int leaves_;
  int32_t* tree_;
};

// holder_displs and holders: the ranks holding each position, in rank order.
// `cursor` is ug entries of scratch.
void list_holders(const RankPositions& at, size_t ug, int parts, int32_t* displs,
                  int32_t* holders, int32_t* cursor) {
  std::fill(displs, displs + ug + 1, 0);
  for (int r = 0; r < parts; ++r) {
    for (size_t i = 0; i < at.counts[r]; ++i) ++displs[at.of(r)[i] + 1];
  }
  for (size_t p = 0; p < ug; ++p) displs[p + 1] += displs[p];
  std::copy(displs, displs + ug, cursor);
  for (int r = 0; r < parts; ++r) {
    for (size_t i = 0; i < at.counts[r]; ++i) holders[cursor[at.of(r)[i]]++] = r;
  }
}

// Positions heaviest first: a counting sort by holder count, descending, positions
// ascending within. by_count is parts + 2 entries of scratch.
void heaviest_first(const int32_t* holder_displs, size_t ug, size_t parts, size_t* by_count,
                    int32_t* order) {
  std::fill(by_count, by_count + parts + 2, 0);
  for (size_t p = 0; p < ug; ++p) {
    ++by_count[parts - (holder_displs[p + 1] - holder_displs[p]) + 1];
  }
  for (size_t h = 1; h < parts + 2; ++h) by_count[h] += by_count[h - 1];
  for (size_t p = 0; p < ug; ++p) {
    order[by_count[parts - (holder_displs[p + 1] - holder_displs[p])]++] =
        static_cast<int32_t>(p);
  }
}

}  // namespace

OwnerMap balanced_owners(const RankPositions& at, size_t ug, int parts, Workspace& ws) {
  const size_t held = at.displs[parts - 1] + at.counts[parts - 1];
  const size_t P = static_cast<size_t>(parts);
  const size_t tree = LeastLoaded::tree_size(parts);
  const size_t bytes = Carver::bytes(ug, 4) * 3 + Carver::bytes(ug + 1, 4) +
                       Carver::bytes(held, 4) + Carver::bytes(P, 8) * 4 +
                       Carver::bytes(P + 2, 8) + Carver::bytes(tree, 4);
  Carver c(ws.get<char>(Slot::kOwnerMap, bytes));
  int32_t* owner = c.take<int32_t>(ug);
  int32_t* owned = c.take<int32_t>(ug);
  int32_t* order = c.take<int32_t>(ug);
  int32_t* holder_displs = c.take<int32_t>(ug + 1);
  int32_t* holders = c.take<int32_t>(held);
  size_t* owned_count = c.take<size_t>(P);
  size_t* owned_displs = c.take<size_t>(P);
  uint64_t* received = c.take<uint64_t>(P);
  int64_t* load = c.take<int64_t>(P);
  size_t* by_count = c.take<size_t>(P + 2);
  int32_t* tree_nodes = c.take<int32_t>(tree);

  list_holders(at, ug, parts, holder_displs, holders, owned);  // owned is filled last
  heaviest_first(holder_displs, ug, P, by_count, order);

  std::fill(load, load + P, 0);
  std::fill(owned_count, owned_count + P, 0);
  std::fill(received, received + P, 0);
  LeastLoaded least(load, parts, tree_nodes);
  for (size_t i = 0; i < ug; ++i) {
    const int32_t p = order[i];
    const int32_t* hs = holders + holder_displs[p];
    const int64_t h = holder_displs[p + 1] - holder_displs[p];
    int best = hs[0];
    for (int64_t k = 1; k < h; ++k) {
      if (load[hs[k]] < load[best]) best = hs[k];
    }
    int64_t cost = h - 2;  // a holder: the others' contributions, no result to receive
    const int other = least.best();
    if (h > 1 && load[best] > load[other] + 1) {
      best = other;
      cost = h - 1;
    }
    owner[p] = best;
    load[best] += cost;
    received[best] += static_cast<uint64_t>(cost == h - 2 ? h - 1 : h);
    ++owned_count[best];
    least.changed(best);
  }
  pack_displacements(owned_count, owned_displs, parts);
  std::fill(by_count, by_count + P, 0);  // a cursor per owner
  for (size_t p = 0; p < ug; ++p) {
    const int j = owner[p];
    owned[owned_displs[j] + by_count[j]++] = static_cast<int32_t>(p);
  }
  OwnerMap m;
  m.parts = parts;
  m.owner = owner;
  m.owned = owned;
  m.owned_count = owned_count;
  m.owned_displs = owned_displs;
  m.holder_displs = holder_displs;
  m.holders = holders;
  m.received_rows = received;
  return m;
}

namespace {

// The loads of the ranks while the node owners are placed, and one position's holders
// counted by node (per_node and mark are cleared again after each position).
struct NodeLoads {
  const NodeMap& nodes;
  int64_t* load;            // by rank
  int32_t* per_node;        // N entries: h_np of the current position
  int32_t* touched;         // the nodes holding it
  unsigned char* mark;      // by rank: holds it
  int held_by = 0;          // H_p

  // j minimising the largest load plus cost over the holding nodes; then those costs paid.
  int place_local(int locals) {
    int best = 0;
    int64_t best_score = 0;
    for (int j = 0; j < locals; ++j) {
      int64_t score = INT64_MIN;
      for (int t = 0; t < held_by; ++t) {
        const int r = nodes.members(touched[t])[static_cast<size_t>(j)];
        score = std::max(score, load[r] + per_node[touched[t]] - mark[r]);
      }
      if (j == 0 || score < best_score) {
        best = j;
        best_score = score;
      }
    }
    for (int t = 0; t < held_by; ++t) {
      const int r = nodes.members(touched[t])[static_cast<size_t>(best)];
      load[r] += per_node[touched[t]] - mark[r];
    }
    return best;
  }
  // k minimising load plus cost among the members of local index j; then its cost paid.
  int place_node(int j) {
    int best = 0;
    int64_t best_score = 0;
    for (int k = 0; k < nodes.node_count(); ++k) {
      const int r = nodes.members(k)[static_cast<size_t>(j)];
      const int64_t score = load[r] + held_by - (per_node[k] > 0 ? 1 : 0) - 1;
      if (k == 0 || score < best_score) {
        best = k;
        best_score = score;
      }
    }
    load[nodes.members(best)[static_cast<size_t>(j)]] +=
        held_by - (per_node[best] > 0 ? 1 : 0) - 1;
    return best;
  }
};

}  // namespace

NodeOwnerMap balanced_node_owners(const RankPositions& at, size_t ug, const NodeMap& nodes,
                                  Workspace& ws) {
  const int G = nodes.size(), N = nodes.node_count(), L = G / N;
  const size_t held = at.displs[G - 1] + at.counts[G - 1];
  const size_t P = static_cast<size_t>(G);
  const size_t bytes = Carver::bytes(ug, 4) * 4 + Carver::bytes(ug + 1, 4) +
                       Carver::bytes(held, 4) + Carver::bytes(P + 1, 8) +
                       Carver::bytes(P, 8) * 2 + Carver::bytes(P + 2, 8) +
                       Carver::bytes(static_cast<size_t>(N), 4) * 2 + Carver::bytes(P, 1);
  Carver c(ws.get<char>(Slot::kOwnerMap, bytes));
  int32_t* local = c.take<int32_t>(ug);
  int32_t* node = c.take<int32_t>(ug);
  int32_t* order = c.take<int32_t>(ug);
  int32_t* heavy = c.take<int32_t>(ug);
  int32_t* holder_displs = c.take<int32_t>(ug + 1);
  int32_t* holders = c.take<int32_t>(held);
  size_t* group_displs = c.take<size_t>(P + 1);
  uint64_t* received = c.take<uint64_t>(P);
  int64_t* load = c.take<int64_t>(P);
  size_t* by_count = c.take<size_t>(P + 2);
  NodeLoads loads{nodes, load, c.take<int32_t>(static_cast<size_t>(N)),
                  c.take<int32_t>(static_cast<size_t>(N)), c.take<unsigned char>(P)};

  list_holders(at, ug, G, holder_displs, holders, order);  // order is filled last
  heaviest_first(holder_displs, ug, P, by_count, heavy);
  std::fill(load, load + P, 0);
  std::fill(loads.per_node, loads.per_node + N, 0);
  std::fill(loads.mark, loads.mark + P, 0);
  for (size_t i = 0; i < ug; ++i) {
    const int32_t p = heavy[i];
    const int32_t *first = holders + holder_displs[p], *last = holders + holder_displs[p + 1];
    loads.held_by = 0;
    for (const int32_t* r = first; r != last; ++r) {
      const int n = nodes.node_of(*r);
      if (loads.per_node[n]++ == 0) loads.touched[loads.held_by++] = n;
      loads.mark[*r] = 1;
    }
    local[p] = loads.place_local(L);
    node[p] = loads.place_node(local[p]);
    for (int t = 0; t < loads.held_by; ++t) loads.per_node[loads.touched[t]] = 0;
    for (const int32_t* r = first; r != last; ++r) loads.mark[*r] = 0;
  }
  // The groups (j, k), positions ascending in each.
  std::fill(group_displs, group_displs + P + 1, 0);
  for (size_t p = 0; p < ug; ++p) ++group_displs[local[p] * N + node[p] + 1];
  for (size_t g = 0; g < P; ++g) group_displs[g + 1] += group_displs[g];
  std::copy(group_displs, group_displs + P, by_count);  // a cursor per group
  for (size_t p = 0; p < ug; ++p) {
    order[by_count[local[p] * N + node[p]]++] = static_cast<int32_t>(p);
  }
  for (size_t r = 0; r < P; ++r) received[r] = static_cast<uint64_t>(
      static_cast<int64_t>(ug) + load[r]);
  NodeOwnerMap m;
  m.locals = L;
  m.nodes = N;
  m.local = local;
  m.order = order;
  m.group_displs = group_displs;
  m.holder_displs = holder_displs;
  m.holders = holders;
  m.received_rows = received;
  return m;
}

}  // namespace zfc
