#include "kernels/merge_runs.hpp"

#include <utility>

namespace zfc {
namespace kernels {
namespace {

// A run's head as the tournament compares it: the key inline, so that a comparison reads no
// run; a spent run loses to every live one; equal keys go to the lower run first.
template <class K>
struct Head {
  K key;
  int32_t run;
  int32_t spent;  // 0 or 1
};

template <class K>
inline bool before(const Head<K>& a, const Head<K>& b) {
  if (a.spent != b.spent) return b.spent != 0;
  if (a.key != b.key) return a.key < b.key;
  return a.run < b.run;
}

size_t leaves_for(int n_runs) {
  size_t p = 1;
  while (p < static_cast<size_t>(n_runs)) p *= 2;
  return p;
}

}  // namespace

template <class K>
size_t merge_scratch_bytes(int n_runs) {
  // The losers at the tree's inner nodes 1..P-1, the winners while it is built, and each
  // run's cursor.
  const size_t p = leaves_for(n_runs);
  return 2 * p * sizeof(Head<K>) + static_cast<size_t>(n_runs) * sizeof(size_t);
}

template <class K>
size_t merge_sorted_runs(const K* const* runs, const size_t* counts, int n_runs, K* out,
                         int32_t* const* positions, void* scratch) {
  if (n_runs <= 0) return 0;
  const size_t p = leaves_for(n_runs);
  Head<K>* loser = static_cast<Head<K>*>(scratch);
  size_t* at = reinterpret_cast<size_t*>(loser + 2 * p);
  auto head_of = [&](size_t r) {
    if (r >= static_cast<size_t>(n_runs) || at[r] == counts[r]) {
      return Head<K>{K{0}, static_cast<int32_t>(r), 1};
    }
    return Head<K>{runs[r][at[r]], static_cast<int32_t>(r), 0};
  };
  for (int r = 0; r < n_runs; ++r) at[r] = 0;
  // Build: every match played bottom-up, node i's loser kept at loser[i] and its winner at
  // won[i] for the match above (leaf p + r is run r's head).
  Head<K>* won = loser + p;
  auto entrant = [&](size_t node) { return node >= p ? head_of(node - p) : won[node]; };
  for (size_t i = p - 1; i >= 1; --i) {
    Head<K> a = entrant(2 * i), b = entrant(2 * i + 1);
    if (before(b, a)) std::swap(a, b);
    loser[i] = b;
    won[i] = a;
  }
  Head<K> winner = p > 1 ? won[1] : head_of(0);
  size_t n = 0;
  while (winner.spent == 0) {
    const size_t r = static_cast<size_t>(winner.run);
    if (n == 0 || out[n - 1] != winner.key) out[n++] = winner.key;
    if (positions[r] != nullptr) positions[r][at[r]] = static_cast<int32_t>(n - 1);
    ++at[r];
    Head<K> h = head_of(r);
    for (size_t node = (p + r) / 2; node >= 1; node /= 2) {
      if (before(loser[node], h)) std::swap(loser[node], h);
    }
    winner = h;
  }
  return n;
}

#define ZFC_INSTANTIATE_MERGE(K)                                                        \
  template size_t merge_scratch_bytes<K>(int);                                          \
  template size_t merge_sorted_runs<K>(const K* const*, const size_t*, int, K*,         \
                                       int32_t* const*, void*);
ZFC_INSTANTIATE_MERGE(uint32_t)
ZFC_INSTANTIATE_MERGE(uint64_t)
#undef ZFC_INSTANTIATE_MERGE

}  // namespace kernels
}  // namespace zfc
