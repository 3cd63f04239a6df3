// Google Benchmark microbenchmarks of the host kernels, on the sizes one training step has:
// N tokens from 1e3 to 4e6 for the index kernels, and N rows of D = 512 for the row kernels.
// Every benchmark reports bytes/s and `x_memcpy`, its bandwidth as a fraction of memcpy's
// when memcpy reads and writes as many bytes (measured in the same process).
//
//   zfc_kernel_bench --benchmark_repetitions=5 --benchmark_out=kernels.json
//       --benchmark_out_format=json
// On a shared machine the fastest repetition is the steadiest estimate of what a kernel can
// do; bench/plot_results.py reports that one.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cast.hpp"
#include "kernels/rows.hpp"
#include "kernels/wire_format.hpp"
#include "kernels/unique.hpp"
#include "memcpy_baseline.hpp"
#include "workload/random.hpp"
#include "workload/zipf.hpp"

namespace {

constexpr size_t kDim = 512;

// Sets bytes/s and the fraction of memcpy's bandwidth for `moved` bytes per iteration.
void report_bytes(benchmark::State& state, size_t moved) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(moved));
  state.counters["x_memcpy"] = benchmark::Counter(
      static_cast<double>(moved) / zfc_bench::memcpy_bytes_per_second(moved),
      benchmark::Counter::kIsIterationInvariantRate);
}

// Word ids of a Zipf(1.1) stream, as unsigned keys below `vocab`.
std::vector<uint32_t> zipf_keys(size_t n, int64_t vocab, uint64_t seed) {
  static std::vector<std::pair<int64_t, zfc::workload::ZipfDistribution>> tables;
  auto it = std::find_if(tables.begin(), tables.end(),
                         [&](const auto& t) { return t.first == vocab; });
  if (it == tables.end()) {
    tables.emplace_back(vocab, zfc::workload::ZipfDistribution(1.1, vocab));
    it = tables.end() - 1;
  }
  const std::vector<int32_t> ids = it->second.draw(n, seed);
  return std::vector<uint32_t>(ids.begin(), ids.end());
}

std::vector<float> random_floats(size_t n, uint64_t seed) {
  zfc::workload::SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  return v;
}

// ---- index kernels --------------------------------------------------------------------

// The local unique of one rank's tokens: sorted distinct keys and every token's position.
// Args: N, V, and the method (0: the automatic choice, 1: bitmap, 2: hash, 3: sort).
void BM_LocalUnique(benchmark::State& state) {
  using zfc::kernels::UniqueMethod;
  const size_t n = static_cast<size_t>(state.range(0));
  const uint64_t vocab = static_cast<uint64_t>(state.range(1));
  const UniqueMethod m = state.range(2) == 0 ? zfc::kernels::unique_method(n, vocab)
                                             : static_cast<UniqueMethod>(state.range(2) - 1);
  const std::vector<uint32_t> keys = zipf_keys(n, static_cast<int64_t>(vocab), 1);
  std::vector<uint32_t> uniq(n);
  std::vector<int32_t> inverse(n);
  std::vector<char> scratch(zfc::kernels::unique_scratch_bytes_for<uint32_t>(m, n, vocab, true));
  size_t u = 0;
  for (auto _ : state) {
    u = zfc::kernels::unique_with_inverse_using(m, keys.data(), n, vocab, uniq.data(),
                                                inverse.data(), scratch.data());
    benchmark::DoNotOptimize(u);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  report_bytes(state, n * (sizeof(uint32_t) + sizeof(int32_t)) + u * sizeof(uint32_t));
  state.counters["unique"] = static_cast<double>(u);
  state.SetLabel(std::string(state.range(2) == 0 ? "auto:" : "") +
                 zfc::kernels::unique_method_name(m));
}

// The same result from std::sort of (key, position) pairs, for comparison.
void BM_StdSortUnique(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<uint32_t> keys = zipf_keys(n, 100000, 1);
  std::vector<std::pair<uint32_t, uint32_t>> pairs(n);
  std::vector<uint32_t> uniq(n);
  std::vector<int32_t> inverse(n);
  for (auto _ : state) {
    for (size_t i = 0; i < n; ++i) pairs[i] = {keys[i], static_cast<uint32_t>(i)};
    std::sort(pairs.begin(), pairs.end());
    size_t u = 0;
    for (size_t j = 0; j < n; ++j) {
      if (j == 0 || pairs[j].first != pairs[j - 1].first) uniq[u++] = pairs[j].first;
      inverse[pairs[j].second] = static_cast<int32_t>(u - 1);
    }
    benchmark::DoNotOptimize(u);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

// Positions: where each of a rank's tokens sits in the global set (8 ranks' tokens), from
// its local inverse and the local set located inside the global one.
void BM_Positions(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const uint64_t vocab = 100000;
  const std::vector<uint32_t> keys = zipf_keys(n, vocab, 1);
  std::vector<uint32_t> all = zipf_keys(8 * n, vocab, 2);
  all.insert(all.end(), keys.begin(), keys.end());
  std::vector<uint32_t> local(n), global(all.size());
  std::vector<int32_t> inverse(n), pos(n), located(n);
  std::vector<char> scratch(zfc::kernels::unique_scratch_bytes<uint32_t>(all.size(), vocab, true));
  const size_t u = zfc::kernels::unique_with_inverse(keys.data(), n, vocab, local.data(),
                                                     inverse.data(), scratch.data());
  const size_t ug = zfc::kernels::sorted_unique(all.data(), all.size(), vocab, global.data(),
                                                scratch.data());
  for (auto _ : state) {
    zfc::kernels::locate_sorted(local.data(), u, global.data(), ug, located.data());
    for (size_t i = 0; i < n; ++i) pos[i] = located[static_cast<size_t>(inverse[i])];
    benchmark::DoNotOptimize(pos.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  report_bytes(state, n * 2 * sizeof(int32_t) + (u + ug) * sizeof(uint32_t));
}

// ---- row kernels (D = 512) ------------------------------------------------------------

// Segment-sum: a rank's N token rows summed into its U_i distinct rows.
void BM_SegmentSum(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<uint32_t> keys = zipf_keys(n, 100000, 1);
  std::vector<uint32_t> uniq(n);
  std::vector<int32_t> inverse(n);
  std::vector<char> scratch(zfc::kernels::unique_scratch_bytes<uint32_t>(n, 100000, true));
  const size_t u = zfc::kernels::unique_with_inverse(keys.data(), n, 100000, uniq.data(),
                                                     inverse.data(), scratch.data());
  const std::vector<float> rows = random_floats(n * kDim, 3);
  std::vector<float> partial(u * kDim);
  for (auto _ : state) {
    zfc::kernels::zero_rows(partial.data(), u, kDim);
    zfc::kernels::scatter_add_rows(rows.data(), zfcFloat32, inverse.data(), n, kDim,
                                   partial.data());
    benchmark::DoNotOptimize(partial.data());
  }
  report_bytes(state, (n + 2 * u) * kDim * sizeof(float));
}

// Scatter: N distinct rows added at their positions in a 4N-row dense matrix.
void BM_Scatter(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<float> rows = random_floats(n * kDim, 4);
  std::vector<int32_t> pos(n);
  for (size_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(4 * i + (i % 3));
  std::vector<float> dense(4 * n * kDim, 0.0f);
  for (auto _ : state) {
    zfc::kernels::scatter_add_rows(rows.data(), zfcFloat32, pos.data(), n, kDim, dense.data());
    benchmark::DoNotOptimize(dense.data());
  }
  report_bytes(state, 3 * n * kDim * sizeof(float));
}

// Apply: N distinct reduced rows added into a 100k x 512 table.
void BM_ApplyRows(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const size_t vocab = 100000;
  std::vector<float> table(vocab * kDim, 0.0f);
  const std::vector<float> rows = random_floats(n * kDim, 5);
  std::vector<int32_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = static_cast<int32_t>((i * 7919) % vocab);
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  for (auto _ : state) {
    zfc::kernels::apply_rows(table.data(), kDim, idx.data(), zfcInt32, rows.data(), idx.size(),
                             -0.1f);
    benchmark::DoNotOptimize(table.data());
  }
  report_bytes(state, 3 * idx.size() * kDim * sizeof(float));
}

// ---- casts ----------------------------------------------------------------------------

template <zfcDataType_t kWire>
void BM_Encode(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0)) * kDim;
  const std::vector<float> src = random_floats(n, 6);
  std::vector<uint16_t> dst(n);
  for (auto _ : state) {
    zfc::kernels::encode(src.data(), n, kWire, 1024.0f, dst.data());
    benchmark::DoNotOptimize(dst.data());
  }
  report_bytes(state, n * (sizeof(float) + sizeof(uint16_t)));
}

template <zfcDataType_t kWire>
void BM_Decode(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0)) * kDim;
  const std::vector<float> src = random_floats(n, 7);
  std::vector<uint16_t> wire(n);
  zfc::kernels::encode(src.data(), n, kWire, 1024.0f, wire.data());
  std::vector<float> dst(n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(zfc::kernels::decode(wire.data(), n, kWire, 1024.0f, dst.data()));
  }
  report_bytes(state, n * (sizeof(float) + sizeof(uint16_t)));
}

// Rows of an eight-bit wire format (kernels/wire_format.hpp): D = 512 values to a byte each
// and the row's scale, rounded to nearest or stochastically; and back.
template <zfcCompressionKind_t kKind, bool kStochastic>
void BM_EncodeRows(benchmark::State& state) {
  const zfc::kernels::WireFormat& f = zfc::kernels::wire_format(kKind);
  const size_t rows = static_cast<size_t>(state.range(0));
  const std::vector<float> src = random_floats(rows * kDim, 6);
  std::vector<char> dst(rows * f.row_bytes(kDim));
  zfc::kernels::Rounding r;
  r.stochastic = kStochastic;
  r.seed = 9;
  for (auto _ : state) {
    f.encode_rows(src.data(), rows, kDim, 1.0f, dst.data(), r);
    benchmark::DoNotOptimize(dst.data());
  }
  report_bytes(state, rows * (kDim * sizeof(float) + f.row_bytes(kDim)));
}

template <zfcCompressionKind_t kKind>
void BM_DecodeRows(benchmark::State& state) {
  const zfc::kernels::WireFormat& f = zfc::kernels::wire_format(kKind);
  const size_t rows = static_cast<size_t>(state.range(0));
  const std::vector<float> src = random_floats(rows * kDim, 7);
  std::vector<char> wire(rows * f.row_bytes(kDim));
  f.encode_rows(src.data(), rows, kDim, 1.0f, wire.data());
  std::vector<float> dst(rows * kDim);
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.decode_rows(wire.data(), rows, kDim, 1.0f, dst.data()));
  }
  report_bytes(state, rows * (kDim * sizeof(float) + f.row_bytes(kDim)));
}

void BM_Memcpy(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0)) * kDim * sizeof(float);
  std::vector<char> src(n, 1), dst(n);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::DoNotOptimize(dst.data());
  }
  report_bytes(state, 2 * n);
}

// Every method on both a word vocabulary (100k) and a large one (10M), then the automatic
// choice.
void token_sizes(benchmark::internal::Benchmark* b) {
  for (int64_t vocab : {100000, 10000000}) {
    for (int64_t n : {1000, 10000, 100000, 1000000, 4000000}) {
      for (int64_t method : {0, 1, 2, 3}) b->Args({n, vocab, method});
    }
  }
}

void row_sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n : {100, 1000, 4000, 16000, 64000}) b->Arg(n);
}

}  // namespace

BENCHMARK(BM_LocalUnique)->Apply(token_sizes)->ArgNames({"N", "V", "method"});
BENCHMARK(BM_StdSortUnique)->RangeMultiplier(10)->Range(1000, 1000000)->ArgName("N");
BENCHMARK(BM_Positions)->RangeMultiplier(10)->Range(1000, 1000000)->Arg(4000000)->ArgName("N");
BENCHMARK(BM_SegmentSum)->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_Scatter)->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_ApplyRows)->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_Encode<zfcFloat16>)->Name("BM_EncodeFp16")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_Decode<zfcFloat16>)->Name("BM_DecodeFp16")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_Encode<zfcBFloat16>)->Name("BM_EncodeBf16")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_Decode<zfcBFloat16>)->Name("BM_DecodeBf16")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_EncodeRows<zfcCompressFp8E4M3, false>)->Name("BM_EncodeFp8E4M3")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_EncodeRows<zfcCompressFp8E5M2, false>)->Name("BM_EncodeFp8E5M2")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_EncodeRows<zfcCompressInt8, false>)->Name("BM_EncodeInt8")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_EncodeRows<zfcCompressFp8E4M3, true>)->Name("BM_EncodeFp8E4M3Stochastic")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_EncodeRows<zfcCompressInt8, true>)->Name("BM_EncodeInt8Stochastic")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_DecodeRows<zfcCompressFp8E4M3>)->Name("BM_DecodeFp8E4M3")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_DecodeRows<zfcCompressFp8E5M2>)->Name("BM_DecodeFp8E5M2")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_DecodeRows<zfcCompressInt8>)->Name("BM_DecodeInt8")->Apply(row_sizes)->ArgName("rows");
BENCHMARK(BM_Memcpy)->Apply(row_sizes)->ArgName("rows");

BENCHMARK_MAIN();
