#include "memcpy_baseline.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace zfc_bench {

double memcpy_bytes_per_second(size_t moved) {
  const size_t half = std::max<size_t>(moved / 2, 64);
  std::vector<char> src(half, 1), dst(half, 0);
  using clock = std::chrono::steady_clock;
  // Repeat until about 5 ms per trial so small copies are timed over many calls.
  size_t reps = 1;
  double best = 0;
  for (int trial = 0; trial < 10; ++trial) {
    const auto t0 = clock::now();
    for (size_t r = 0; r < reps; ++r) {
      std::memcpy(dst.data(), src.data(), half);
      // Keep the copy from being optimised away or merged across repetitions.
      asm volatile("" : : "r"(dst.data()) : "memory");
    }
    const double sec = std::chrono::duration<double>(clock::now() - t0).count();
    if (sec < 0.005 && trial < 5) {
      reps = static_cast<size_t>(static_cast<double>(reps) * 0.005 / std::max(sec, 1e-7)) + 1;
      continue;
    }
    best = std::max(best, 2.0 * static_cast<double>(half) * static_cast<double>(reps) / sec);
  }
  return best;
}

}  // namespace zfc_bench
