#include "optimizer.hpp"

#include <cmath>

namespace lm {

Optimizer::Optimizer(OptimizerKind kind, const Model& model) : kind_(kind) {
  if (kind != OptimizerKind::kAdagrad) return;
  acc_dense.assign(model.dense.size(), 0.0f);
  acc_in.assign(model.emb_in.size(), 0.0f);
  acc_out.assign(model.emb_out.size(), 0.0f);
}

double Optimizer::grad_norm(const std::vector<float>& dense, const RowGrad& in, int in_width,
                            const RowGrad& out, const std::vector<float>* out_dense,
                            int out_width) {
  double sum = 0;
  auto add = [&sum](const float* v, size_t n) {
    for (size_t i = 0; i < n; ++i) sum += static_cast<double>(v[i]) * v[i];
  };
  add(dense.data(), dense.size());
  add(in.rows, in.count * static_cast<size_t>(in_width));
  if (out_dense != nullptr) {
    add(out_dense->data(), out_dense->size());
  } else {
    add(out.rows, out.count * static_cast<size_t>(out_width));
  }
  return std::sqrt(sum);
}

void Optimizer::update(float* p, float* acc, const float* g, size_t n, float lr, float scale) {
  if (kind_ == OptimizerKind::kSgd) {
    for (size_t i = 0; i < n; ++i) p[i] -= lr * (scale * g[i]);
    return;
  }
  // Associated as zfcUpdateAdagrad is, so that rows updated by their owners in a sharded
  // table (unclipped) get the bits this gives a replicated one.
  for (size_t i = 0; i < n; ++i) {
    const float gi = scale * g[i];
    acc[i] += gi * gi;
    p[i] -= lr * (gi / (std::sqrt(acc[i]) + kAdagradEpsilon));
  }
}

void Optimizer::step(Model* m, float lr, float scale, const std::vector<float>& dense,
                     const RowGrad& in, const RowGrad& out,
                     const std::vector<float>* out_dense) {
  const bool ada = kind_ == OptimizerKind::kAdagrad;
  update(m->dense.data(), ada ? acc_dense.data() : nullptr, dense.data(), dense.size(), lr,
         scale);
  const size_t D = static_cast<size_t>(m->shape().dim), W = D + 1;
  for (size_t r = 0; r < in.count; ++r) {
    const size_t at = static_cast<size_t>(in.indices[r]) * D;
    update(m->emb_in.data() + at, ada ? acc_in.data() + at : nullptr, in.rows + r * D, D, lr,
           scale);
  }
  if (out_dense != nullptr) {
    update(m->emb_out.data(), ada ? acc_out.data() : nullptr, out_dense->data(),
           out_dense->size(), lr, scale);
    return;
  }
  for (size_t r = 0; r < out.count; ++r) {
    const size_t at = static_cast<size_t>(out.indices[r]) * W;
    update(m->emb_out.data() + at, ada ? acc_out.data() + at : nullptr, out.rows + r * W, W,
           lr, scale);
  }
}

}  // namespace lm
