// The log-uniform (Zipfian) candidate sampler of sampled softmax: P(k) = log((k+2)/(k+1)) /
// log(V+1) over [0, V), drawn by inverting its CDF, k = floor((V+1)^u) - 1, with u from
// Philox keyed by the step's seed (draw i uses counter i), and the expected count of an id in
// the draws, which the logits are corrected by.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zfc {
namespace kernels {

// P(k) for k in [0, vocab).
double log_uniform_probability(int64_t k, int64_t vocab);

// Draw i (counter i) of the stream keyed by `seed`.
int64_t log_uniform_draw(uint64_t seed, uint64_t i, int64_t vocab);

// `count` samples into out. With `unique`, draws continue until `count` distinct ids are
// found (count must be <= vocab) and *draws says how many draws that took; without, exactly
// `count` draws (*draws = count). `seen` is scratch of `vocab` bytes for unique sampling.
void log_uniform_sample(uint64_t seed, int64_t vocab, size_t count, bool unique, int64_t* out,
                        uint64_t* draws, uint8_t* seen);

// Expected number of times id k appears: draws * P(k) with replacement; for unique sampling
// the probability that k was drawn at least once in `draws` draws, 1 - (1 - P(k))^draws.
double log_uniform_expected_count(int64_t k, int64_t vocab, uint64_t draws, bool unique);

}  // namespace kernels
}  // namespace zfc
