// SGD or Adagrad on the dense parameters and on the embedding rows a step touched, with the
// gradient scaled down to a global norm bound first. Every rank holds the same synced
// gradients, so every rank computes the same norm and makes the same update.
#pragma once

#include <cstdint>
#include <vector>

#include "model.hpp"
#include "options.hpp"

namespace lm {

// Adagrad's epsilon: w -= lr * (g / (sqrt(s) + epsilon)).
constexpr float kAdagradEpsilon = 1e-8f;

// Rows of one embedding table to update: U distinct indices and their U x width gradients.
struct RowGrad {
  const int32_t* indices = nullptr;
  const float* rows = nullptr;
  size_t count = 0;
};

class Optimizer {
 public:
  Optimizer(OptimizerKind kind, const Model& model);
  // Global norm over dense, in and out (out_dense when non-null, else out_rows).
  static double grad_norm(const std::vector<float>& dense, const RowGrad& in, int in_width,
                          const RowGrad& out, const std::vector<float>* out_dense,
                          int out_width);
  void step(Model* m, float lr, float scale, const std::vector<float>& dense, const RowGrad& in,
            const RowGrad& out, const std::vector<float>* out_dense);

  // Adagrad's running sums of squares, in the layouts of the parameters (empty for SGD).
  std::vector<float> acc_dense, acc_in, acc_out;

 private:
  void update(float* p, float* acc, const float* g, size_t n, float lr, float scale);
  OptimizerKind kind_;
};

}  // namespace lm
