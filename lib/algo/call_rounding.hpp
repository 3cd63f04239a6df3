// How a call's encodes round (kernels/rounding.hpp): its compression's rounding, seed and
// step (set by the call, core/config.hpp), the encoding rank and the hop.
#pragma once

#include <cstdint>

#include "core/config.hpp"
#include "kernels/rounding.hpp"

namespace zfc {

inline kernels::Rounding call_rounding(const Compression& c, int rank,
                                       uint32_t hop = kernels::kHopSend) {
  kernels::Rounding r;
  r.stochastic = c.stochastic;
  r.seed = c.seed;
  r.step = static_cast<uint32_t>(c.step);
  r.rank = static_cast<uint32_t>(rank);
  r.hop = hop;
  return r;
}

}  // namespace zfc
