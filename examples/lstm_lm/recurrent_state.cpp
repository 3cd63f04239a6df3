#include "recurrent_state.hpp"

#include <cstdint>
#include <cstring>

namespace lm {

std::vector<float> flatten_state(const State& s) {
  std::vector<float> flat;
  for (size_t l = 0; l < s.h.size(); ++l) {
    flat.insert(flat.end(), s.h[l].begin(), s.h[l].end());
    flat.insert(flat.end(), s.c[l].begin(), s.c[l].end());
  }
  return flat;
}

bool restore_state(const float* flat, size_t n, State* s) {
  size_t need = 0;
  for (size_t l = 0; l < s->h.size(); ++l) need += s->h[l].size() + s->c[l].size();
  if (n != need) return false;
  for (size_t l = 0; l < s->h.size(); ++l) {
    std::memcpy(s->h[l].data(), flat, s->h[l].size() * sizeof(float));
    flat += s->h[l].size();
    std::memcpy(s->c[l].data(), flat, s->c[l].size() * sizeof(float));
    flat += s->c[l].size();
  }
  return true;
}

// The library sums floats; the trainer has no other collective. Each value travels as its
// two 16-bit halves, whole numbers below 2^16, in a slot only its rank fills: their fp32 sum
// with the other ranks' zeros is exact, so the bits (a -0.0 or a NaN's payload too) arrive
// unchanged.
zfcResult_t gather_states(GradientSync* sync, const std::vector<float>& mine, int rank,
                          int size, std::vector<float>* all) {
  const size_t n = mine.size();
  std::vector<float> halves(2 * n * static_cast<size_t>(size), 0.0f);
  float* slot = halves.data() + 2 * n * static_cast<size_t>(rank);
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &mine[i], sizeof bits);
    slot[2 * i] = static_cast<float>(bits >> 16);
    slot[2 * i + 1] = static_cast<float>(bits & 0xffffu);
  }
  const zfcResult_t r = sync->sum(halves.data(), halves.size());
  if (r != zfcSuccess) return r;
  all->resize(n * static_cast<size_t>(size));
  for (size_t i = 0; i < all->size(); ++i) {
    const uint32_t bits = (static_cast<uint32_t>(halves[2 * i]) << 16) |
                          static_cast<uint32_t>(halves[2 * i + 1]);
    std::memcpy(&(*all)[i], &bits, sizeof bits);
  }
  return zfcSuccess;
}

}  // namespace lm
