// A small seeded generator (splitmix64) whose streams are the same on every platform, so
// that every rank can regenerate every other rank's workload.
#pragma once

#include <cstdint>

namespace zfc {
namespace workload {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n), n > 0.
  uint64_t below(uint64_t n) { return static_cast<uint64_t>(uniform() * static_cast<double>(n)); }

 private:
  uint64_t state_;
};

// A seed for (base, a, b): independent streams per rank and step.
inline uint64_t mix_seed(uint64_t base, uint64_t a, uint64_t b) {
  SplitMix64 g(base ^ (a * 0x100000001b3ull) ^ (b * 0xcbf29ce484222325ull));
  g.next();
  return g.next();
}

}  // namespace workload
}  // namespace zfc
