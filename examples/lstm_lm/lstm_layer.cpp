#include "lstm_layer.hpp"

#include <algorithm>
#include <cmath>

#include "blas.hpp"

namespace lm {
namespace {

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// Activations of one step from the pre-activations z (B x 4H), in place.
void activate(float* z, int batch, int hidden) {
  for (int b = 0; b < batch; ++b) {
    float* row = z + static_cast<size_t>(b) * 4 * hidden;
    for (int j = 0; j < hidden; ++j) {
      row[j] = sigmoid(row[j]);                            // i
      row[hidden + j] = sigmoid(row[hidden + j]);          // f
      row[2 * hidden + j] = std::tanh(row[2 * hidden + j]);  // g
      row[3 * hidden + j] = sigmoid(row[3 * hidden + j]);  // o
    }
  }
}

}  // namespace

void lstm_forward(const LstmShape& s, const float* params, int batch,
                  const std::vector<std::vector<float>>& x, std::vector<float>* h,
                  std::vector<float>* c, LstmTape* tape, std::vector<std::vector<float>>* out) {
  const int H = s.hidden, in = s.in, width = in + H, steps = static_cast<int>(x.size());
  const float* W = params;
  const float* bias = params + s.weights();
  std::vector<float> xh(static_cast<size_t>(batch) * width);
  std::vector<float> z(static_cast<size_t>(batch) * 4 * H);
  out->assign(static_cast<size_t>(steps), {});
  if (tape != nullptr) *tape = LstmTape{};
  for (int t = 0; t < steps; ++t) {
    for (int b = 0; b < batch; ++b) {
      float* row = xh.data() + static_cast<size_t>(b) * width;
      std::copy_n(x[t].data() + static_cast<size_t>(b) * in, in, row);
      std::copy_n(h->data() + static_cast<size_t>(b) * H, H, row + in);
      std::copy_n(bias, 4 * H, z.data() + static_cast<size_t>(b) * 4 * H);
    }
    gemm(false, true, batch, 4 * H, width, 1.0f, xh.data(), width, W, width, 1.0f, z.data(),
         4 * H);
    activate(z.data(), batch, H);
    std::vector<float> c_prev = *c, tanh_c(static_cast<size_t>(batch) * H);
    for (int b = 0; b < batch; ++b) {
      const float* g4 = z.data() + static_cast<size_t>(b) * 4 * H;
      for (int j = 0; j < H; ++j) {
        const size_t k = static_cast<size_t>(b) * H + j;
        (*c)[k] = g4[H + j] * c_prev[k] + g4[j] * g4[2 * H + j];
        tanh_c[k] = std::tanh((*c)[k]);
        (*h)[k] = g4[3 * H + j] * tanh_c[k];
      }
    }
    (*out)[static_cast<size_t>(t)] = *h;
    if (tape != nullptr) {
      tape->xh.push_back(xh);
      tape->gates.push_back(z);
      tape->c_prev.push_back(std::move(c_prev));
      tape->c.push_back(*c);
      tape->tanh_c.push_back(std::move(tanh_c));
      tape->h.push_back(*h);
    }
  }
}

void lstm_backward(const LstmShape& s, const float* params, int batch, const LstmTape& tape,
                   const std::vector<std::vector<float>>& dh, float* grad,
                   std::vector<std::vector<float>>* dx) {
  const int H = s.hidden, in = s.in, width = in + H;
  const int steps = static_cast<int>(tape.xh.size());
  const float* W = params;
  float* dW = grad;
  float* db = grad + s.weights();
  std::vector<float> dh_next(static_cast<size_t>(batch) * H, 0.0f);
  std::vector<float> dc_next(dh_next.size(), 0.0f);
  std::vector<float> dz(static_cast<size_t>(batch) * 4 * H);
  std::vector<float> dxh(static_cast<size_t>(batch) * width);
  dx->assign(static_cast<size_t>(steps), {});
  for (int t = steps - 1; t >= 0; --t) {
    const std::vector<float>& g4 = tape.gates[t];
    for (int b = 0; b < batch; ++b) {
      for (int j = 0; j < H; ++j) {
        const size_t k = static_cast<size_t>(b) * H + j;
        const float* g = g4.data() + static_cast<size_t>(b) * 4 * H;
        const float i = g[j], f = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];
        const float dhk = dh[t][k] + dh_next[k];
        const float tc = tape.tanh_c[t][k];
        const float dc = dhk * o * (1.0f - tc * tc) + dc_next[k];
        float* d = dz.data() + static_cast<size_t>(b) * 4 * H;
        d[j] = dc * gg * i * (1.0f - i);
        d[H + j] = dc * tape.c_prev[t][k] * f * (1.0f - f);
        d[2 * H + j] = dc * i * (1.0f - gg * gg);
        d[3 * H + j] = dhk * tc * o * (1.0f - o);
        dc_next[k] = dc * f;
      }
    }
    // dW += dz^T [x, h_prev]; db += column sums of dz; d[x, h_prev] = dz W.
    gemm(true, false, 4 * H, width, batch, 1.0f, dz.data(), 4 * H, tape.xh[t].data(), width,
         1.0f, dW, width);
    for (int b = 0; b < batch; ++b) {
      const float* d = dz.data() + static_cast<size_t>(b) * 4 * H;
      for (int j = 0; j < 4 * H; ++j) db[j] += d[j];
    }
    gemm(false, false, batch, width, 4 * H, 1.0f, dz.data(), 4 * H, W, width, 0.0f, dxh.data(),
         width);
    std::vector<float>& dxt = (*dx)[static_cast<size_t>(t)];
    dxt.resize(static_cast<size_t>(batch) * in);
    for (int b = 0; b < batch; ++b) {
      const float* row = dxh.data() + static_cast<size_t>(b) * width;
      std::copy_n(row, in, dxt.data() + static_cast<size_t>(b) * in);
      std::copy_n(row + in, H, dh_next.data() + static_cast<size_t>(b) * H);
    }
  }
}

}  // namespace lm
