// The host kernels against naive references: the three unique methods (bitmap, hash,
// sort) on 32- and 64-bit keys against std::set, locate_sorted against binary search, the
// fp16/bf16 encode and decode against the scalar conversions one element at a time, and the
// rank-order block sum against a plain loop.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "fuzz_check.hpp"
#include "kernels/cast.hpp"
#include "host_device/half_bits.hpp"
#include "kernels/unique.hpp"

namespace {

using zfc::fuzz::require;
namespace k = zfc::kernels;

template <class K>
void fuzz_unique(FuzzedDataProvider& in) {
  const uint64_t bound = in.ConsumeIntegralInRange<uint64_t>(1, in.ConsumeBool() ? 300 : 1u << 30);
  const size_t n = in.ConsumeIntegralInRange<size_t>(0, 600);
  std::vector<K> keys(n);
  for (auto& v : keys) v = static_cast<K>(in.ConsumeIntegralInRange<uint64_t>(0, bound - 1));
  const std::set<K> want(keys.begin(), keys.end());
  const std::vector<K> sorted(want.begin(), want.end());
  for (k::UniqueMethod m : {k::UniqueMethod::kBitmap, k::UniqueMethod::kHash,
                            k::UniqueMethod::kSort}) {
    if (m == k::UniqueMethod::kBitmap && bound > (1u << 24)) continue;  // bitmap of the range
    std::vector<uint8_t> scratch(k::unique_scratch_bytes_for<K>(m, n, bound, true) + 1);
    std::vector<K> uniq(n + 1);
    std::vector<int32_t> inverse(n + 1, -1);
    const size_t u = k::unique_with_inverse_using(m, keys.data(), n, bound, uniq.data(),
                                                  inverse.data(), scratch.data());
    require(u == sorted.size(), "unique found the wrong number of keys");
    require(std::equal(sorted.begin(), sorted.end(), uniq.begin()), "unique keys differ");
    for (size_t i = 0; i < n; ++i) {
      require(inverse[i] >= 0 && static_cast<size_t>(inverse[i]) < u &&
                  uniq[static_cast<size_t>(inverse[i])] == keys[i],
              "an inverse position is wrong");
    }
    std::vector<uint8_t> scratch2(k::unique_scratch_bytes_for<K>(m, n, bound, false) + 1);
    std::vector<K> only(n + 1);
    const size_t u2 = k::sorted_unique_using(m, keys.data(), n, bound, only.data(),
                                             scratch2.data());
    require(u2 == u && std::equal(sorted.begin(), sorted.end(), only.begin()),
            "sorted_unique differs from unique_with_inverse");
  }
  // A sub-set of the keys, located in the full set.
  std::vector<K> sub;
  for (K v : sorted) {
    if (in.ConsumeBool()) sub.push_back(v);
  }
  std::vector<int32_t> pos(sub.size() + 1, -1);
  k::locate_sorted(sub.data(), sub.size(), sorted.data(), sorted.size(), pos.data());
  for (size_t i = 0; i < sub.size(); ++i) {
    const auto at = std::lower_bound(sorted.begin(), sorted.end(), sub[i]) - sorted.begin();
    require(pos[i] == at, "locate_sorted differs from binary search");
  }
}

bool same_value(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, 4) == 0;
}

void fuzz_cast(FuzzedDataProvider& in) {
  const size_t n = in.ConsumeIntegralInRange<size_t>(0, 100);
  std::vector<float> src(n);
  for (auto& v : src) {
    const uint32_t bits = in.ConsumeIntegral<uint32_t>();
    std::memcpy(&v, &bits, 4);
  }
  // Powers of two keep scaling exact; other scales too, through a division.
  const float scales[] = {1.0f, 1024.0f, 0.125f, 3.0f};
  const float scale = scales[in.ConsumeIntegralInRange<int>(0, 3)];
  for (zfcDataType_t wire : {zfcFloat16, zfcBFloat16}) {
    std::vector<uint16_t> enc(n + 1);
    k::encode(src.data(), n, wire, scale, enc.data());
    std::vector<float> dec(n + 1);
    const bool finite = k::decode(enc.data(), n, wire, scale, dec.data());
    bool want_finite = true;
    for (size_t i = 0; i < n; ++i) {
      const float scaled = src[i] * scale;
      const uint16_t e = wire == zfcFloat16 ? k::f32_to_f16(scaled) : k::f32_to_bf16(scaled);
      if (std::isnan(scaled)) {
        const bool is_nan = wire == zfcFloat16
                                ? (enc[i] & 0x7c00u) == 0x7c00u && (enc[i] & 0x03ffu) != 0
                                : (enc[i] & 0x7f80u) == 0x7f80u && (enc[i] & 0x007fu) != 0;
        require(is_nan, "a NaN did not encode as a NaN");  // its payload may differ
      } else {
        require(enc[i] == e, "encode differs from the scalar conversion");
      }
      const float up = wire == zfcFloat16 ? k::f16_to_f32(enc[i]) : k::bf16_to_f32(enc[i]);
      require(same_value(dec[i], up / scale), "decode differs from the scalar conversion");
      want_finite = want_finite && std::isfinite(dec[i]);
    }
    require(finite == want_finite, "decode's finite flag is wrong");
  }
}

void fuzz_block_sum(FuzzedDataProvider& in) {
  const int blocks = in.ConsumeIntegralInRange<int>(1, 9);
  const size_t n = in.ConsumeIntegralInRange<size_t>(0, 40);
  std::vector<float> data(static_cast<size_t>(blocks) * n);
  for (auto& v : data) v = in.ConsumeFloatingPointInRange<float>(-1e6f, 1e6f);
  std::vector<float> acc(n + 1, 123.0f);
  k::sum_blocks(data.data(), blocks, n, zfcFloat32, acc.data());
  for (size_t i = 0; i < n; ++i) {
    float s = 0.0f;
    for (int b = 0; b < blocks; ++b) s += data[static_cast<size_t>(b) * n + i];
    require(same_value(acc[i], s), "the block sum differs from rank order");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: fuzz_unique<uint32_t>(in); break;
    case 1: fuzz_unique<uint64_t>(in); break;
    case 2: fuzz_cast(in); break;
    default: fuzz_block_sum(in); break;
  }
  return 0;
}
