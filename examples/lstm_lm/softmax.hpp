// The output layer: logits = [out, 1] . E^T, where E (V x (D+1)) holds each word's output
// embedding with its bias as the last column, so one table row is everything a word owns.
#pragma once

#include <cstdint>
#include <vector>

namespace lm {

// Full softmax over all V words for N outputs (N x D). Returns the summed loss in nats. With
// d_out and d_emb non-null, writes d_out (N x D) and adds into d_emb (V x (D+1)) the loss's
// gradient times grad_scale.
double full_softmax(const float* out, int n, int dim, const float* emb, int64_t vocab,
                    const int32_t* targets, float grad_scale, float* d_out, float* d_emb);

// Sampled softmax (Jean et al.; "Language Modeling at Scale" sec. II): each output is scored
// against its target and the S shared candidates, with log Q (the expected count of each id
// among the draws) subtracted; a candidate equal to the target is masked. Returns the summed
// loss; writes d_out (N x D), the target rows' gradients d_target_rows (N x (D+1)) and the
// candidates' d_sample_rows (S x (D+1)), all times grad_scale.
double sampled_softmax(const float* out, int n, int dim, const float* emb,
                       const int32_t* targets, const float* target_expected,
                       const std::vector<int64_t>& samples, const float* sample_expected,
                       float grad_scale, float* d_out, float* d_target_rows,
                       float* d_sample_rows);

// [out, 1] rows (N x (D+1)).
std::vector<float> with_bias_column(const float* out, int n, int dim);

}  // namespace lm
