// The recurrent state carried between batches, as one vector per rank for a checkpoint, and
// every rank's gathered for rank 0 to write.
#pragma once

#include <vector>

#include "gradient_sync.hpp"
#include "model.hpp"

namespace lm {

// Layer after layer, h then c.
std::vector<float> flatten_state(const State& s);
// The inverse of flatten_state into a state of the right shape; false when sizes differ.
bool restore_state(const float* flat, size_t n, State* s);

// Collective: every rank's `mine` (the same length on every rank), rank after rank, bit for
// bit, on every rank.
zfcResult_t gather_states(GradientSync* sync, const std::vector<float>& mine, int rank,
                          int size, std::vector<float>* all);

}  // namespace lm
