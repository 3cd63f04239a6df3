// One LSTM layer over T time steps of a batch of B streams, forward and backward by hand:
// z = [x_t, h_{t-1}] W^T + b, gates i, f, o = sigmoid, g = tanh (in that order in z),
// c_t = f c_{t-1} + i g, h_t = o tanh(c_t). W is 4H x (in + H), row-major.
#pragma once

#include <cstddef>
#include <vector>

namespace lm {

struct LstmShape {
  int in;      // input width
  int hidden;  // H
  size_t weights() const { return static_cast<size_t>(4) * hidden * (in + hidden); }
  size_t params() const { return weights() + static_cast<size_t>(4) * hidden; }
};

// What the backward pass needs of one forward pass (per time step, B rows each).
struct LstmTape {
  std::vector<std::vector<float>> xh;     // [x_t, h_{t-1}]   B x (in + H)
  std::vector<std::vector<float>> gates;  // i, f, g, o after activation  B x 4H
  std::vector<std::vector<float>> c_prev, c, tanh_c;  // B x H
  std::vector<std::vector<float>> h;      // outputs  B x H
};

// Runs T steps from state (h, c) (B x H each, updated to the last step's). x[t] is B x in.
// params: W then b. With tape == nullptr nothing is kept (evaluation).
void lstm_forward(const LstmShape& s, const float* params, int batch,
                  const std::vector<std::vector<float>>& x, std::vector<float>* h,
                  std::vector<float>* c, LstmTape* tape,
                  std::vector<std::vector<float>>* out);

// Backpropagates dh[t] (B x H, the loss's gradient at each output) through the T steps,
// truncated at the first (no gradient flows into the carried state). Adds the parameter
// gradient into grad (W then b) and writes the inputs' gradient to dx[t] (B x in).
void lstm_backward(const LstmShape& s, const float* params, int batch, const LstmTape& tape,
                   const std::vector<std::vector<float>>& dh, float* grad,
                   std::vector<std::vector<float>>* dx);

}  // namespace lm
