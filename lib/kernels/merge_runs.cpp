#include "kernels/merge_runs.hpp"

#include <algorithm>
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

size_t bitmap_words(uint64_t bound) {
  return static_cast<size_t>(bound / 64 + (bound % 64 != 0));
}

// The losers at the tree's inner nodes 1..P-1, the winners while it is built, and each
// run's cursor.
template <class K>
size_t tournament_bytes(int n_runs) {
  return 2 * leaves_for(n_runs) * sizeof(Head<K>) +
         static_cast<size_t>(n_runs) * sizeof(size_t);
}

// The bits of the range, then each word's first place (the keys in the words before it).
size_t bitmap_bytes(uint64_t bound) {
  const size_t words = bitmap_words(bound);
  return words * sizeof(uint64_t) + (words * sizeof(uint32_t) + 7) / 8 * 8;
}

template <class K>
size_t merge_by_bitmap(const K* const* runs, const size_t* counts, int n_runs, uint64_t bound,
                       K* out, int32_t* const* positions, void* scratch) {
  const size_t words = bitmap_words(bound);
  uint64_t* bits = static_cast<uint64_t*>(scratch);
  uint32_t* first = reinterpret_cast<uint32_t*>(bits + words);
  std::fill(bits, bits + words, uint64_t{0});
  for (int r = 0; r < n_runs; ++r) {
    for (size_t i = 0; i < counts[r]; ++i) {
      bits[runs[r][i] >> 6] |= uint64_t{1} << (runs[r][i] & 63);
    }
  }
  size_t n = 0;
  for (size_t w = 0; w < words; ++w) {
    first[w] = static_cast<uint32_t>(n);
    for (uint64_t b = bits[w]; b != 0; b &= b - 1) {
      out[n++] = static_cast<K>(w * 64 + static_cast<size_t>(__builtin_ctzll(b)));
    }
  }
  for (int r = 0; r < n_runs; ++r) {
    if (positions[r] == nullptr) continue;
    for (size_t i = 0; i < counts[r]; ++i) {
      const K k = runs[r][i];
      const size_t w = static_cast<size_t>(k >> 6);
      const uint64_t below = (uint64_t{1} << (k & 63)) - 1;
      const uint32_t before = static_cast<uint32_t>(__builtin_popcountll(bits[w] & below));
      positions[r][i] = static_cast<int32_t>(first[w] + before);
    }
  }
  return n;
}

template <class K>
size_t merge_by_tournament(const K* const* runs, const size_t* counts, int n_runs, K* out,
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

}  // namespace

RunMerge run_merge_method(uint64_t bound, size_t total) {
  // A word of the bitmap costs about what a key's comparisons do at a few runs.
  return bitmap_words(bound) <= 4 * total + 64 ? RunMerge::kBitmap : RunMerge::kTournament;
}

template <class K>
size_t merge_scratch_bytes(RunMerge m, int n_runs, uint64_t bound) {
  return m == RunMerge::kBitmap ? bitmap_bytes(bound) : tournament_bytes<K>(n_runs);
}

template <class K>
size_t merge_sorted_runs(RunMerge m, const K* const* runs, const size_t* counts, int n_runs,
                         uint64_t bound, K* out, int32_t* const* positions, void* scratch) {
  if (m == RunMerge::kBitmap) {
    return merge_by_bitmap(runs, counts, n_runs, bound, out, positions, scratch);
  }
  return merge_by_tournament(runs, counts, n_runs, out, positions, scratch);
}

#define ZFC_INSTANTIATE_MERGE(K)                                                  \
  template size_t merge_scratch_bytes<K>(RunMerge, int, uint64_t);                \
  template size_t merge_sorted_runs<K>(RunMerge, const K* const*, const size_t*, int, \
                                       uint64_t, K*, int32_t* const*, void*);
ZFC_INSTANTIATE_MERGE(uint32_t)
ZFC_INSTANTIATE_MERGE(uint64_t)
#undef ZFC_INSTANTIATE_MERGE

}  // namespace kernels
}  // namespace zfc
