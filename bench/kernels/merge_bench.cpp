// The merge of G sorted runs (kernels/merge_runs.hpp), by its tournament (bitmap:0) and by
// its bitmap (bitmap:1), against what the routed exchanges did before it in the same run: the runs copied side by side, sorted without repeats, and each
// run located in the result. Synthetic runs, no ranks: U = 65536 distinct keys below 2^20,
// dealt to G runs as a key-owner function would (disjoint: what every rank receives from
// the owners), G = 2 to 1024. Counters: ns per key, and ns per key and log2 G, which the
// tournament should keep flat (Google Benchmark prints these inverted rates with an "s";
// the figures are nanoseconds).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/merge_runs.hpp"
#include "kernels/unique.hpp"
#include "workload/random.hpp"

namespace {

constexpr size_t kKeys = 65536;
constexpr uint64_t kBound = uint64_t{1} << 20;

struct Runs {
  std::vector<std::vector<uint32_t>> keys;
  std::vector<const uint32_t*> heads;
  std::vector<size_t> counts;
  std::vector<std::vector<int32_t>> places;
  std::vector<int32_t*> place_heads;
};

Runs make_runs(int g) {
  zfc::workload::SplitMix64 rng(7);
  std::vector<uint32_t> all;
  while (all.size() < kKeys * 2) all.push_back(static_cast<uint32_t>(rng.below(kBound)));
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  all.resize(kKeys);
  Runs r;
  r.keys.resize(static_cast<size_t>(g));
  for (uint32_t k : all) {
    r.keys[(k * 2654435761u >> 7) % static_cast<uint32_t>(g)].push_back(k);
  }
  for (auto& run : r.keys) {
    r.heads.push_back(run.data());
    r.counts.push_back(run.size());
    r.places.emplace_back(run.size());
    r.place_heads.push_back(r.places.back().data());
  }
  return r;
}

void report(benchmark::State& state, int g) {
  const double keys = static_cast<double>(kKeys);
  state.counters["ns_per_key"] = benchmark::Counter(
      keys * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["ns_per_key_log2G"] = benchmark::Counter(
      keys * std::log2(static_cast<double>(g)) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_MergeRuns(benchmark::State& state) {
  const int g = static_cast<int>(state.range(0));
  Runs r = make_runs(g);
  std::vector<uint32_t> out(kKeys);
  const auto m = static_cast<zfc::kernels::RunMerge>(state.range(1));
  std::vector<uint64_t> scratch(zfc::kernels::merge_scratch_bytes<uint32_t>(m, g, kBound) / 8 +
                                1);
  for (auto _ : state) {
    const size_t n = zfc::kernels::merge_sorted_runs(m, r.heads.data(), r.counts.data(), g,
                                                     kBound, out.data(), r.place_heads.data(),
                                                     scratch.data());
    benchmark::DoNotOptimize(n);
  }
  report(state, g);
}

// The routed exchanges' way before the merge: concatenate, sorted unique, locate each run.
void BM_SortThenLocateRuns(benchmark::State& state) {
  const int g = static_cast<int>(state.range(0));
  Runs r = make_runs(g);
  std::vector<uint32_t> gathered(kKeys), out(kKeys);
  std::vector<char> scratch(zfc::kernels::unique_scratch_bytes<uint32_t>(kKeys, kBound, false));
  for (auto _ : state) {
    size_t at = 0;
    for (const auto& run : r.keys) {
      std::copy(run.begin(), run.end(), gathered.begin() + static_cast<long>(at));
      at += run.size();
    }
    const size_t n = zfc::kernels::sorted_unique(gathered.data(), at, kBound, out.data(),
                                                 scratch.data());
    for (size_t j = 0; j < r.keys.size(); ++j) {
      zfc::kernels::locate_sorted(r.heads[j], r.counts[j], out.data(), n, r.place_heads[j]);
    }
    benchmark::DoNotOptimize(n);
  }
  report(state, g);
}

}  // namespace

BENCHMARK(BM_MergeRuns)
    ->ArgsProduct({benchmark::CreateRange(2, 1024, 2), {0, 1}})
    ->ArgNames({"G", "bitmap"});
BENCHMARK(BM_SortThenLocateRuns)->RangeMultiplier(2)->Range(2, 1024)->ArgName("G");
