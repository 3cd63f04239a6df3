#include "zipf.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "random.hpp"

namespace zfc {
namespace workload {

ZipfDistribution::ZipfDistribution(double s, int64_t vocab) {
  if (vocab <= 0 || vocab > INT32_MAX) throw std::invalid_argument("zipf vocabulary size");
  cdf_.resize(static_cast<size_t>(vocab));
  double sum = 0.0;
  for (int64_t k = 0; k < vocab; ++k) {
    sum += 1.0 / std::pow(static_cast<double>(k + 1), s);
    cdf_[static_cast<size_t>(k)] = sum;
  }
  for (double& c : cdf_) c /= sum;
  cdf_.back() = 1.0;
}

std::vector<int32_t> ZipfDistribution::draw(size_t n, uint64_t seed) const {
  SplitMix64 rng(seed);
  std::vector<int32_t> ids(n);
  for (size_t i = 0; i < n; ++i) {
    const double u = rng.uniform();
    ids[i] = static_cast<int32_t>(std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }
  return ids;
}

}  // namespace workload
}  // namespace zfc
