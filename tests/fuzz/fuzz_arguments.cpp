// Argument validation of the local C API: zfcScatterToDense, zfcApplyRows and
// zfcSampleLogUniform with arbitrary sizes, types, NULL pointers and out-of-range indices.
// A refused call must leave its outputs untouched; an accepted one must match a naive
// reference computed here.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "fuzz_check.hpp"
#include "host_device/half_bits.hpp"
#include "zipfcoll/zipfcoll.h"

namespace {

using zfc::fuzz::require;

float to_f32(const std::vector<uint8_t>& rows, zfcDataType_t type, size_t i) {
  if (type == zfcFloat32) {
    float v;
    std::memcpy(&v, rows.data() + 4 * i, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, rows.data() + 2 * i, 2);
  return type == zfcFloat16 ? zfc::kernels::f16_to_f32(h) : zfc::kernels::bf16_to_f32(h);
}

// Equal bits, except that any two NaNs match: which NaN payload an addition keeps may
// depend on its operand order, which the compiler is free to choose.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    if (std::memcmp(&a[i], &b[i], 4) != 0) return false;
  }
  return true;
}

void fuzz_scatter(FuzzedDataProvider& in) {
  const size_t count = in.ConsumeIntegralInRange<size_t>(0, 48);
  const size_t dim = in.ConsumeIntegralInRange<size_t>(0, 9);
  const size_t num_unique = in.ConsumeIntegralInRange<size_t>(0, 40);
  const auto type = static_cast<zfcDataType_t>(in.ConsumeIntegralInRange<int>(0, 7));
  const size_t width = type == zfcFloat32 ? 4 : 2;
  std::vector<uint8_t> rows = in.ConsumeBytes<uint8_t>(count * dim * width);
  rows.resize(count * dim * width);
  std::vector<int32_t> pos(count);
  for (auto& p : pos) p = in.ConsumeIntegralInRange<int32_t>(-2, 41);
  std::vector<float> dense(num_unique * dim, -7.0f);
  const std::vector<float> before = dense;
  const bool null_rows = in.ConsumeIntegralInRange<int>(0, 15) == 0;
  const bool null_pos = in.ConsumeIntegralInRange<int>(0, 15) == 0;
  const zfcResult_t r =
      zfcScatterToDense(null_rows ? nullptr : rows.data(), type, null_pos ? nullptr : pos.data(),
                        count, dim, dense.data(), num_unique, nullptr);
  require(r >= zfcSuccess && r < zfcNumResults, "an unknown result code");
  if (r != zfcSuccess) {
    require(same_bits(dense, before), "a refused scatter wrote its output");
    require(std::strlen(zfcGetLastError(nullptr)) > 0, "a refusal without a message");
    return;
  }
  std::vector<float> want(num_unique * dim, 0.0f);
  for (size_t i = 0; i < count; ++i) {
    require(pos[i] >= 0 && static_cast<size_t>(pos[i]) < num_unique,
            "a position outside [0, num_unique) was accepted");
    for (size_t d = 0; d < dim; ++d) want[pos[i] * dim + d] += to_f32(rows, type, i * dim + d);
  }
  require(same_bits(dense, want), "scatter differs from the naive sum");
}

void fuzz_apply(FuzzedDataProvider& in) {
  const int64_t vocab = in.ConsumeIntegralInRange<int64_t>(-3, 40);
  const size_t dim = in.ConsumeIntegralInRange<size_t>(0, 6);
  const size_t n = in.ConsumeIntegralInRange<size_t>(0, 30);
  const auto type = static_cast<zfcDataType_t>(in.ConsumeIntegralInRange<int>(0, 7));
  std::vector<int64_t> idx64(n);
  for (auto& i : idx64) i = in.ConsumeIntegralInRange<int64_t>(-2, 42);
  std::vector<int32_t> idx32(idx64.begin(), idx64.end());
  std::vector<float> rows(n * dim);
  for (auto& v : rows) v = in.ConsumeFloatingPoint<float>();
  const float alpha = in.ConsumeFloatingPoint<float>();
  const size_t cells = vocab > 0 ? static_cast<size_t>(vocab) * dim : 0;
  std::vector<float> table(cells, 1.5f);
  const std::vector<float> before = table;
  const void* idx = type == zfcInt64 ? static_cast<const void*>(idx64.data()) : idx32.data();
  const zfcResult_t r = zfcApplyRows(table.data(), vocab, dim, idx, type, rows.data(), n, alpha,
                                     nullptr);
  require(r >= zfcSuccess && r < zfcNumResults, "an unknown result code");
  if (r != zfcSuccess) {
    require(same_bits(table, before), "a refused update wrote the table");
    return;
  }
  std::vector<float> want = before;
  for (size_t p = 0; p < n; ++p) {
    require(idx64[p] >= 0 && idx64[p] < vocab, "an index outside [0, V) was accepted");
    for (size_t d = 0; d < dim; ++d) want[idx64[p] * dim + d] += alpha * rows[p * dim + d];
  }
  require(same_bits(table, want), "the update differs from the naive one");
}

void fuzz_sampler(FuzzedDataProvider& in) {
  const uint64_t seed = in.ConsumeIntegral<uint64_t>();
  const int64_t vocab = in.ConsumeIntegralInRange<int64_t>(-2, 5000);
  const size_t num = in.ConsumeIntegralInRange<size_t>(0, 300);
  const int unique = in.ConsumeIntegralInRange<int>(-1, 2);
  std::vector<int64_t> samples(num, -9);
  const std::vector<int64_t> before = samples;
  const zfcResult_t r = zfcSampleLogUniform(seed, vocab, num, unique, samples.data(), nullptr,
                                            nullptr, 0, nullptr, nullptr);
  require(r >= zfcSuccess && r < zfcNumResults, "an unknown result code");
  if (r != zfcSuccess) {
    require(samples == before, "a refused draw wrote its output");
    return;
  }
  for (int64_t s : samples) require(s >= 0 && s < vocab, "a sample outside [0, V)");
  if (unique == 1) {
    require(std::set<int64_t>(samples.begin(), samples.end()).size() == num,
            "unique samples repeat");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: fuzz_scatter(in); break;
    case 1: fuzz_apply(in); break;
    default: fuzz_sampler(in); break;
  }
  return 0;
}
