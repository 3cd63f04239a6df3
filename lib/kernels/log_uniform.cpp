#include "kernels/log_uniform.hpp"

#include <cmath>
#include <cstring>

#include "host_device/philox.hpp"

namespace zfc {
namespace kernels {

double log_uniform_probability(int64_t k, int64_t vocab) {
  return std::log1p(1.0 / static_cast<double>(k + 1)) / std::log(static_cast<double>(vocab) + 1);
}

int64_t log_uniform_draw(uint64_t seed, uint64_t i, int64_t vocab) {
  const double u = philox_uniform(seed, i, 0);
  const double x = std::exp(u * std::log(static_cast<double>(vocab) + 1.0));
  int64_t k = static_cast<int64_t>(std::floor(x)) - 1;
  // Rounding at the top end cannot leave the range.
  if (k < 0) k = 0;
  if (k >= vocab) k = vocab - 1;
  return k;
}

void log_uniform_sample(uint64_t seed, int64_t vocab, size_t count, bool unique, int64_t* out,
                        uint64_t* draws, uint8_t* seen) {
  if (!unique) {
    for (size_t i = 0; i < count; ++i) out[i] = log_uniform_draw(seed, i, vocab);
    *draws = count;
    return;
  }
  std::memset(seen, 0, static_cast<size_t>(vocab));
  size_t found = 0;
  uint64_t i = 0;
  while (found < count) {
    const int64_t k = log_uniform_draw(seed, i++, vocab);
    if (!seen[k]) {
      seen[k] = 1;
      out[found++] = k;
    }
  }
  *draws = i;
}

double log_uniform_expected_count(int64_t k, int64_t vocab, uint64_t draws, bool unique) {
  const double p = log_uniform_probability(k, vocab);
  if (!unique) return static_cast<double>(draws) * p;
  return -std::expm1(static_cast<double>(draws) * std::log1p(-p));
}

}  // namespace kernels
}  // namespace zfc
