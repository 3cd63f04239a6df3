#include "heaps.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "random.hpp"

namespace zfc {
namespace workload {

std::vector<size_t> heaps_sizes(size_t n_min, size_t n_max, int per_decade) {
  std::vector<size_t> out;
  if (n_min == 0 || n_max < n_min || per_decade <= 0) return out;
  const double step = std::pow(10.0, 1.0 / per_decade);
  for (double x = static_cast<double>(n_min); x < static_cast<double>(n_max) * (1 - 1e-9);
       x *= step) {
    const size_t n = static_cast<size_t>(std::llround(x));
    if (out.empty() || n > out.back()) out.push_back(n);
  }
  if (out.empty() || out.back() != n_max) out.push_back(n_max);
  return out;
}

std::vector<HeapsPoint> measure_heaps(const std::vector<int32_t>& tokens, int64_t id_bound,
                                      const std::vector<size_t>& sizes, size_t window_len,
                                      int trials, uint64_t seed) {
  if (window_len == 0 || tokens.empty() || trials <= 0 || id_bound <= 0) {
    throw std::invalid_argument("heaps: need trials > 0, a window length and a corpus");
  }
  // seen[id] == stamp marks an id already counted in the current sample: no clearing.
  std::vector<uint32_t> seen(static_cast<size_t>(id_bound), 0);
  uint32_t stamp = 0;
  // The corpus cut into consecutive windows (the last one may be short); a sample takes
  // windows without replacement, so at N = the corpus size it is the whole corpus.
  const size_t windows = (tokens.size() + window_len - 1) / window_len;
  std::vector<uint32_t> order(windows);
  std::vector<HeapsPoint> out;
  for (size_t si = 0; si < sizes.size(); ++si) {
    HeapsPoint p;
    p.tokens = std::min(sizes[si], tokens.size());
    p.trials = trials;
    p.min_unique = INFINITY;
    double sum = 0;
    for (int t = 0; t < trials; ++t) {
      SplitMix64 rng(mix_seed(seed, si, static_cast<uint64_t>(t)));
      for (size_t w = 0; w < windows; ++w) order[w] = static_cast<uint32_t>(w);
      ++stamp;
      size_t unique = 0, taken = 0;
      for (size_t drawn = 0; taken < p.tokens; ++drawn) {
        // One step of a Fisher-Yates shuffle: a window not drawn yet, uniformly.
        const size_t pick = drawn + static_cast<size_t>(rng.below(windows - drawn));
        std::swap(order[drawn], order[pick]);
        const size_t at = static_cast<size_t>(order[drawn]) * window_len;
        const size_t len = std::min({window_len, tokens.size() - at, p.tokens - taken});
        for (size_t i = at; i < at + len; ++i) {
          const int32_t id = tokens[i];
          if (id < 0 || id >= id_bound) throw std::out_of_range("heaps: id out of range");
          if (seen[static_cast<size_t>(id)] != stamp) {
            seen[static_cast<size_t>(id)] = stamp;
            ++unique;
          }
        }
        taken += len;
      }
      sum += static_cast<double>(unique);
      p.min_unique = std::min(p.min_unique, static_cast<double>(unique));
      p.max_unique = std::max(p.max_unique, static_cast<double>(unique));
    }
    p.mean_unique = sum / trials;
    out.push_back(p);
  }
  return out;
}

PowerFit fit_power_law(const std::vector<HeapsPoint>& points, size_t n_min, size_t n_max) {
  PowerFit f;
  std::vector<double> x, y;
  for (const HeapsPoint& p : points) {
    if (p.tokens < n_min || p.tokens > n_max || p.mean_unique <= 0) continue;
    x.push_back(std::log(static_cast<double>(p.tokens)));
    y.push_back(std::log(p.mean_unique));
    if (f.n_min == 0) f.n_min = p.tokens;
    f.n_max = p.tokens;
  }
  f.points = x.size();
  if (x.size() < 2) return PowerFit{0, 0, 0, 0, x.size(), 0, 0, 0, 0};
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  f.beta = sxy / sxx;
  f.k = std::exp(my - f.beta * mx);
  double sse = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double r = y[i] - (my + f.beta * (x[i] - mx));
    sse += r * r;
  }
  f.r2 = syy > 0 ? 1.0 - sse / syy : 1.0;
  f.beta_stderr = x.size() > 2 ? std::sqrt(sse / (n - 2) / sxx) : 0.0;
  f.local_min = INFINITY;
  f.local_max = -INFINITY;
  for (size_t i = 1; i < x.size(); ++i) {
    const double s = (y[i] - y[i - 1]) / (x[i] - x[i - 1]);
    f.local_min = std::min(f.local_min, s);
    f.local_max = std::max(f.local_max, s);
  }
  return f;
}

}  // namespace workload
}  // namespace zfc
