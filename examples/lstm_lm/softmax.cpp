#include "softmax.hpp"

#include <algorithm>
#include <cmath>

#include "blas.hpp"

namespace lm {
namespace {

// Softmax of one row of logits in place (into probabilities); returns log-sum-exp.
double softmax_row(float* row, int64_t n) {
  float mx = row[0];
  for (int64_t j = 1; j < n; ++j) mx = std::max(mx, row[j]);
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - mx);
    sum += row[j];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t j = 0; j < n; ++j) row[j] *= inv;
  return mx + std::log(sum);
}

}  // namespace

std::vector<float> with_bias_column(const float* out, int n, int dim) {
  std::vector<float> aug(static_cast<size_t>(n) * (dim + 1));
  for (int i = 0; i < n; ++i) {
    std::copy_n(out + static_cast<size_t>(i) * dim, dim,
                aug.data() + static_cast<size_t>(i) * (dim + 1));
    aug[static_cast<size_t>(i) * (dim + 1) + dim] = 1.0f;
  }
  return aug;
}

double full_softmax(const float* out, int n, int dim, const float* emb, int64_t vocab,
                    const int32_t* targets, float grad_scale, float* d_out, float* d_emb) {
  const int w = dim + 1, V = static_cast<int>(vocab);
  const std::vector<float> aug = with_bias_column(out, n, dim);
  std::vector<float> logits(static_cast<size_t>(n) * V);
  gemm(false, true, n, V, w, 1.0f, aug.data(), w, emb, w, 0.0f, logits.data(), V);
  double loss = 0;
  for (int i = 0; i < n; ++i) {
    float* row = logits.data() + static_cast<size_t>(i) * V;
    const float target_logit = row[targets[i]];
    loss += softmax_row(row, V) - target_logit;
    // d loss / d logits = p - onehot
    row[targets[i]] -= 1.0f;
    for (int j = 0; j < V; ++j) row[j] *= grad_scale;
  }
  if (d_out == nullptr) return loss;
  std::vector<float> d_aug(static_cast<size_t>(n) * w);
  gemm(false, false, n, w, V, 1.0f, logits.data(), V, emb, w, 0.0f, d_aug.data(), w);
  for (int i = 0; i < n; ++i) {
    std::copy_n(d_aug.data() + static_cast<size_t>(i) * w, dim,
                d_out + static_cast<size_t>(i) * dim);
  }
  gemm(true, false, V, w, n, 1.0f, logits.data(), V, aug.data(), w, 1.0f, d_emb, w);
  return loss;
}

double sampled_softmax(const float* out, int n, int dim, const float* emb,
                       const int32_t* targets, const float* target_expected,
                       const std::vector<int64_t>& samples, const float* sample_expected,
                       float grad_scale, float* d_out, float* d_target_rows,
                       float* d_sample_rows) {
  const int w = dim + 1, S = static_cast<int>(samples.size()), C = S + 1;
  const std::vector<float> aug = with_bias_column(out, n, dim);
  std::vector<float> cand(static_cast<size_t>(S) * w);
  for (int j = 0; j < S; ++j) {
    std::copy_n(emb + static_cast<size_t>(samples[j]) * w, w,
                cand.data() + static_cast<size_t>(j) * w);
  }
  // Column 0: the target; columns 1..S: the candidates.
  std::vector<float> logits(static_cast<size_t>(n) * C);
  std::vector<float> scores(static_cast<size_t>(n) * S);
  gemm(false, true, n, S, w, 1.0f, aug.data(), w, cand.data(), w, 0.0f, scores.data(), S);
  double loss = 0;
  for (int i = 0; i < n; ++i) {
    const float* a = aug.data() + static_cast<size_t>(i) * w;
    const float* e = emb + static_cast<size_t>(targets[i]) * w;
    float t = 0;
    for (int k = 0; k < w; ++k) t += a[k] * e[k];
    float* row = logits.data() + static_cast<size_t>(i) * C;
    row[0] = t - std::log(target_expected[i]);
    for (int j = 0; j < S; ++j) {
      row[1 + j] = samples[j] == targets[i]
                       ? -1e30f
                       : scores[static_cast<size_t>(i) * S + j] - std::log(sample_expected[j]);
    }
    const float target_logit = row[0];
    loss += softmax_row(row, C) - target_logit;
    row[0] -= 1.0f;
    for (int j = 0; j < C; ++j) row[j] *= grad_scale;
  }
  // d[out,1] = g_0 e_target + g_samples . cand; target rows: g_0 [out,1]; sample rows:
  // g_samples^T [out,1].
  std::vector<float> g_s(static_cast<size_t>(n) * S);
  for (int i = 0; i < n; ++i) {
    const float* row = logits.data() + static_cast<size_t>(i) * C;
    std::copy_n(row + 1, S, g_s.data() + static_cast<size_t>(i) * S);
    const float g0 = row[0];
    const float* a = aug.data() + static_cast<size_t>(i) * w;
    float* tr = d_target_rows + static_cast<size_t>(i) * w;
    for (int k = 0; k < w; ++k) tr[k] = g0 * a[k];
  }
  std::vector<float> d_aug(static_cast<size_t>(n) * w);
  gemm(false, false, n, w, S, 1.0f, g_s.data(), S, cand.data(), w, 0.0f, d_aug.data(), w);
  for (int i = 0; i < n; ++i) {
    const float g0 = logits[static_cast<size_t>(i) * C];
    const float* e = emb + static_cast<size_t>(targets[i]) * w;
    float* d = d_out + static_cast<size_t>(i) * dim;
    const float* da = d_aug.data() + static_cast<size_t>(i) * w;
    for (int k = 0; k < dim; ++k) d[k] = da[k] + g0 * e[k];
  }
  gemm(true, false, S, w, n, 1.0f, g_s.data(), S, aug.data(), w, 0.0f, d_sample_rows, w);
  return loss;
}

}  // namespace lm
