// Seeded Zipf(s) token streams over a vocabulary of V ids: P(id = k) is proportional to
// 1 / (k + 1)^s, so id 0 is the most frequent word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zfc {
namespace workload {

class ZipfDistribution {
 public:
  ZipfDistribution(double s, int64_t vocab);
  // Draws `n` ids with the given seed.
  std::vector<int32_t> draw(size_t n, uint64_t seed) const;
  int64_t vocab() const { return static_cast<int64_t>(cdf_.size()); }

 private:
  std::vector<double> cdf_;
};

}  // namespace workload
}  // namespace zfc
