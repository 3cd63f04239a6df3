// Local unique, merge and locate kernels against std::set, on every method (bitmap, hash,
// sort) and both key widths.
#include <algorithm>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/merge_runs.hpp"
#include "kernels/radix_sort.hpp"
#include "kernels/unique.hpp"
#include "workload/random.hpp"

namespace zfc {
namespace kernels {
namespace {

template <class K>
std::vector<K> random_keys(size_t n, uint64_t bound, uint64_t seed, bool skewed) {
  workload::SplitMix64 rng(seed);
  std::vector<K> keys(n);
  for (K& k : keys) {
    uint64_t v = rng.below(bound);
    if (skewed) v = v % (1 + rng.below(50));  // many repeats of small keys
    k = static_cast<K>(v);
  }
  return keys;
}

template <class K>
void check_unique_with(UniqueMethod m, const std::vector<K>& keys, uint64_t bound) {
  const size_t n = keys.size();
  const std::set<K> ref(keys.begin(), keys.end());
  std::vector<K> uniq(n + 1);
  std::vector<int32_t> inverse(n);
  std::vector<char> scratch(unique_scratch_bytes_for<K>(m, n, bound, true));
  const size_t u = unique_with_inverse_using(m, keys.data(), n, bound, uniq.data(),
                                             inverse.data(), scratch.data());
  ASSERT_EQ(u, ref.size()) << unique_method_name(m);
  ASSERT_TRUE(std::equal(ref.begin(), ref.end(), uniq.begin())) << unique_method_name(m);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(uniq[static_cast<size_t>(inverse[i])], keys[i]);

  std::vector<K> uniq2(n + 1);
  std::vector<char> scratch2(unique_scratch_bytes_for<K>(m, n, bound, false));
  ASSERT_EQ(sorted_unique_using(m, keys.data(), n, bound, uniq2.data(), scratch2.data()), u);
  ASSERT_TRUE(std::equal(uniq.begin(), uniq.begin() + static_cast<std::ptrdiff_t>(u),
                         uniq2.begin()));
}

// Every method that can run for this bound (a bitmap of a huge range cannot), and the
// automatic choice through the plain entry points.
template <class K>
void check_unique(size_t n, uint64_t bound, uint64_t seed, bool skewed) {
  const std::vector<K> keys = random_keys<K>(n, bound, seed, skewed);
  if (bound <= (uint64_t{1} << 26)) check_unique_with(UniqueMethod::kBitmap, keys, bound);
  check_unique_with(UniqueMethod::kHash, keys, bound);
  check_unique_with(UniqueMethod::kSort, keys, bound);
  check_unique_with(unique_method(n, bound), keys, bound);
  std::vector<K> uniq(n + 1);
  std::vector<int32_t> inverse(n);
  std::vector<char> scratch(unique_scratch_bytes<K>(n, bound, true));
  ASSERT_EQ(unique_with_inverse(keys.data(), n, bound, uniq.data(), inverse.data(),
                                scratch.data()),
            std::set<K>(keys.begin(), keys.end()).size());
}

TEST(Unique, MethodChoice) {
  EXPECT_TRUE(unique_uses_bitmap(640, 100000));
  EXPECT_FALSE(unique_uses_bitmap(640, uint64_t{1} << 30));
  EXPECT_EQ(unique_method(640, uint64_t{1} << 30), UniqueMethod::kHash);
  EXPECT_TRUE(unique_uses_bitmap(0, 1000));
  EXPECT_STREQ(unique_method_name(UniqueMethod::kSort), "sort");
}

TEST(Unique, SmallRangesMatchSet) {
  for (size_t n : {0, 1, 2, 63, 640, 5000, 100000}) {
    check_unique<uint32_t>(n, 100000, n + 1, false);
    check_unique<uint32_t>(n, 100000, n + 2, true);
    check_unique<uint64_t>(n, 3000, n + 3, false);
  }
}

TEST(Unique, LargeRangesMatchSet) {
  for (size_t n : {1, 2, 17, 640, 5000, 200000}) {
    check_unique<uint32_t>(n, uint64_t{1} << 31, n + 4, false);
    check_unique<uint32_t>(n, uint64_t{1} << 32, n + 5, true);
    check_unique<uint64_t>(n, uint64_t{1} << 50, n + 6, false);
    check_unique<uint64_t>(n, ~uint64_t{0}, n + 7, true);
  }
}

TEST(Unique, HashTableGrowsThroughEverySize) {
  // All distinct, then all equal: the table doubles from its first size to its last, and a
  // single key never grows it.
  std::vector<uint32_t> distinct(70000), same(70000, 12345);
  for (size_t i = 0; i < distinct.size(); ++i) {
    distinct[i] = static_cast<uint32_t>((i * 2654435761u) % 1000000007u);
  }
  check_unique_with(UniqueMethod::kHash, distinct, uint64_t{1} << 32);
  check_unique_with(UniqueMethod::kHash, same, uint64_t{1} << 32);
}

TEST(RadixSort, MatchesStableSort) {
  for (int bits : {1, 7, 11, 17, 33, 64}) {
    const uint64_t bound = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits);
    std::vector<uint64_t> keys = random_keys<uint64_t>(10007, bound, bits, false);
    std::vector<uint32_t> vals(keys.size());
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<uint32_t>(i);
    std::vector<std::pair<uint64_t, uint32_t>> ref;
    for (size_t i = 0; i < keys.size(); ++i) ref.push_back({keys[i], vals[i]});
    std::stable_sort(ref.begin(), ref.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<uint64_t> tk(keys.size());
    std::vector<uint32_t> tv(keys.size());
    radix_sort(keys.data(), vals.data(), keys.size(), key_bits_for_bound(bound), tk.data(),
               tv.data());
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_EQ(keys[i], ref[i].first) << bits;
      ASSERT_EQ(vals[i], ref[i].second) << bits;
    }
  }
  EXPECT_EQ(key_bits_for_bound(1), 1);
  EXPECT_EQ(key_bits_for_bound(100000), 17);
  EXPECT_EQ(key_bits_for_bound(uint64_t{1} << 32), 32);
}

TEST(Locate, MergeWalkAndBinarySearchAgree) {
  std::vector<uint32_t> full;
  for (uint32_t k = 0; k < 5000; ++k) full.push_back(3 * k + 1);
  for (size_t every : {1, 2, 40}) {  // dense subsets walk, sparse ones search
    std::vector<uint32_t> sub;
    for (size_t i = 0; i < full.size(); i += every) sub.push_back(full[i]);
    std::vector<int32_t> pos(sub.size());
    locate_sorted(sub.data(), sub.size(), full.data(), full.size(), pos.data());
    for (size_t i = 0; i < sub.size(); ++i) ASSERT_EQ(full[static_cast<size_t>(pos[i])], sub[i]);
  }
}


// The merge of sorted distinct runs gives the sorted union and each run's places in it, by
// the tournament and by the bitmap, for runs that overlap (what an owner receives), disjoint
// runs (what the owners share), empty runs and one run, at 32- and 64-bit keys.
template <class K>
void check_merge(int n_runs, uint64_t bound, bool disjoint, uint64_t seed) {
  std::vector<std::vector<K>> runs(static_cast<size_t>(n_runs));
  for (int r = 0; r < n_runs; ++r) {
    std::set<K> keys;
    const size_t n = r % 5 == 3 ? 0 : random_keys<K>(1, 400, seed + 7 * r, false)[0];
    for (K k : random_keys<K>(n, bound, seed + r, r % 2 == 0)) {
      if (!disjoint || static_cast<int>(k % static_cast<uint64_t>(n_runs)) == r) keys.insert(k);
    }
    runs[static_cast<size_t>(r)].assign(keys.begin(), keys.end());
  }
  std::set<K> all;
  std::vector<const K*> heads;
  std::vector<size_t> counts;
  std::vector<std::vector<int32_t>> pos(runs.size());
  std::vector<int32_t*> pos_heads;
  for (size_t r = 0; r < runs.size(); ++r) {
    all.insert(runs[r].begin(), runs[r].end());
    heads.push_back(runs[r].data());
    counts.push_back(runs[r].size());
    pos[r].assign(runs[r].size(), -1);
    pos_heads.push_back(pos[r].data());
  }
  std::vector<K> out(all.size() + 1);
  for (RunMerge m : {RunMerge::kTournament, RunMerge::kBitmap}) {
    if (m == RunMerge::kBitmap && bound > (uint64_t{1} << 24)) continue;  // its range is bits
    std::vector<uint64_t> scratch(merge_scratch_bytes<K>(m, n_runs, bound) / 8 + 1);
    const size_t n = merge_sorted_runs(m, heads.data(), counts.data(), n_runs, bound, out.data(),
                                       pos_heads.data(), scratch.data());
    ASSERT_EQ(n, all.size());
    ASSERT_TRUE(std::equal(all.begin(), all.end(), out.begin()));
    for (size_t r = 0; r < runs.size(); ++r) {
      for (size_t i = 0; i < runs[r].size(); ++i) {
        ASSERT_EQ(out[static_cast<size_t>(pos[r][i])], runs[r][i]) << "run " << r << " key " << i;
      }
    }
  }
}

TEST(MergeRuns, UnionAndPlacesOfEveryRun) {
  for (int g : {1, 2, 3, 8, 61}) {
    check_merge<uint32_t>(g, 5000, false, 11 + g);
    check_merge<uint32_t>(g, 5000, true, 13 + g);
    check_merge<uint64_t>(g, uint64_t{1} << 40, false, 17 + g);
  }
}

}  // namespace
}  // namespace kernels
}  // namespace zfc
