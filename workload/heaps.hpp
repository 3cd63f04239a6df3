// Heaps' law measurement: how many distinct words U(N) a sample of N tokens holds, for
// samples drawn the way a training step draws them (windows of consecutive words from random
// places), and the power law U = k * N^beta fitted to those counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zfc {
namespace workload {

struct HeapsPoint {
  size_t tokens = 0;         // N
  double mean_unique = 0;    // U(N) averaged over trials
  double min_unique = 0;
  double max_unique = 0;
  int trials = 0;
};

// N values from n_min to n_max (inclusive), `per_decade` per factor of 10, rounded.
std::vector<size_t> heaps_sizes(size_t n_min, size_t n_max, int per_decade);

// For each N in `sizes` (capped at the corpus size), `trials` samples of N tokens: the
// corpus is cut into consecutive windows of `window_len` ids, and a sample takes windows in
// an order drawn from `seed`, without replacement (the last one cut short to make N), so
// that N = the corpus size counts the whole corpus. Ids must lie in [0, id_bound).
std::vector<HeapsPoint> measure_heaps(const std::vector<int32_t>& tokens, int64_t id_bound,
                                      const std::vector<size_t>& sizes, size_t window_len,
                                      int trials, uint64_t seed);

struct PowerFit {
  double k = 0;               // U = k * N^beta
  double beta = 0;
  double beta_stderr = 0;     // standard error of beta from the least-squares fit
  double r2 = 0;              // of the fit in log-log space
  size_t points = 0;
  size_t n_min = 0, n_max = 0;       // the range fitted
  double local_min = 0, local_max = 0;  // smallest and largest slope between neighbours
};

// Least squares of log U against log N over the points with n_min <= N <= n_max.
// Needs at least two points (else points < 2 and the rest zero).
PowerFit fit_power_law(const std::vector<HeapsPoint>& points, size_t n_min, size_t n_max);

}  // namespace workload
}  // namespace zfc
