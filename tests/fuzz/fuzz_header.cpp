// The cross-rank header decode: agree() on 1 to 9 headers as they might arrive from peers,
// valid ones with a few fields changed, or arbitrary bytes. The verdict must be a known code
// with a message, and the same when computed twice (every rank computes it on the same
// bytes and must reach the same decision).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstring>
#include <vector>

#include "algo/agreement.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int ranks = in.ConsumeIntegralInRange<int>(1, 9);
  const auto op = static_cast<zfc::OpKind>(in.ConsumeIntegralInRange<uint32_t>(1, 6));
  std::vector<zfc::OpHeader> all(static_cast<size_t>(ranks), zfc::make_header(op));
  for (auto& h : all) {
    h.sequence = 7;
    if (in.ConsumeBool()) {
      // Overwrite a stretch of the header with arbitrary bytes.
      const size_t at = in.ConsumeIntegralInRange<size_t>(0, sizeof h - 1);
      const std::vector<uint8_t> bytes = in.ConsumeBytes<uint8_t>(
          in.ConsumeIntegralInRange<size_t>(0, sizeof h - at));
      if (!bytes.empty()) {
        std::memcpy(reinterpret_cast<char*>(&h) + at, bytes.data(), bytes.size());
      }
    }
  }
  const zfc::Status first = zfc::agree(all.data(), ranks);
  zfc::fuzz::check_status(first);
  const zfc::Status again = zfc::agree(all.data(), ranks);
  zfc::fuzz::require(first.code() == again.code() && first.message() == again.message(),
                     "the verdict changed between two decodes of the same headers");
  return 0;
}
