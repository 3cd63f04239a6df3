#include "model.hpp"

#include <algorithm>
#include <cmath>

#include "blas.hpp"
#include "softmax.hpp"

namespace lm {
namespace {

// splitmix64: a small, portable generator, so every rank draws the same initial weights.
class InitRandom {
 public:
  explicit InitRandom(uint64_t seed) : s_(seed) {}
  float uniform(float scale) {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float u = static_cast<float>(z >> 40) / static_cast<float>(1u << 24);  // [0, 1)
    return (2.0f * u - 1.0f) * scale;
  }

 private:
  uint64_t s_;
};

}  // namespace

Model::Model(const ModelShape& shape, uint64_t seed, float init_scale) : shape_(shape) {
  const int D = shape.dim, H = shape.hidden;
  size_t at = 0;
  for (int l = 0; l < shape.layers; ++l) {
    layers_.push_back(LstmShape{l == 0 ? D : H, H});
    layer_offset_.push_back(at);
    at += layers_.back().params();
  }
  proj_offset_ = at;
  if (shape.projection) at += static_cast<size_t>(D) * H;
  InitRandom rng(seed);
  emb_in.resize(static_cast<size_t>(shape.vocab) * D);
  for (float& v : emb_in) v = rng.uniform(init_scale);
  emb_out.resize(static_cast<size_t>(shape.vocab) * (D + 1));
  for (size_t i = 0; i < emb_out.size(); ++i) {
    emb_out[i] = i % (D + 1) == static_cast<size_t>(D) ? 0.0f : rng.uniform(init_scale);
  }
  dense.resize(at);
  for (float& v : dense) v = rng.uniform(init_scale);
  for (int l = 0; l < shape.layers; ++l) {
    float* bias = dense.data() + layer_offset_[l] + layers_[l].weights();
    for (int j = 0; j < 4 * H; ++j) bias[j] = j >= H && j < 2 * H ? 1.0f : 0.0f;
  }
}

State Model::zero_state(int batch) const {
  State s;
  const size_t n = static_cast<size_t>(batch) * shape_.hidden;
  s.h.assign(static_cast<size_t>(shape_.layers), std::vector<float>(n, 0.0f));
  s.c = s.h;
  return s;
}

void Model::forward(State* state, const std::vector<int32_t>& inputs, int batch, int bptt,
                    std::vector<LstmTape>* tapes, std::vector<std::vector<float>>* top,
                    std::vector<float>* out) const {
  const int D = shape_.dim, H = shape_.hidden;
  std::vector<std::vector<float>> x(static_cast<size_t>(bptt),
                                    std::vector<float>(static_cast<size_t>(batch) * D));
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < bptt; ++t) {
      const int32_t w = inputs[static_cast<size_t>(b) * bptt + t];
      std::copy_n(emb_in.data() + static_cast<size_t>(w) * D, D,
                  x[t].data() + static_cast<size_t>(b) * D);
    }
  }
  if (tapes != nullptr) tapes->assign(layers_.size(), LstmTape{});
  for (size_t l = 0; l < layers_.size(); ++l) {
    std::vector<std::vector<float>> y;
    lstm_forward(layers_[l], dense.data() + layer_offset_[l], batch, x, &state->h[l],
                 &state->c[l], tapes != nullptr ? &(*tapes)[l] : nullptr, &y);
    x = std::move(y);
  }
  *top = x;  // B x H per step
  out->resize(static_cast<size_t>(batch) * bptt * D);
  for (int t = 0; t < bptt; ++t) {
    for (int b = 0; b < batch; ++b) {
      float* o = out->data() + (static_cast<size_t>(b) * bptt + t) * D;
      const float* h = x[t].data() + static_cast<size_t>(b) * H;
      if (shape_.projection) {
        gemm(false, true, 1, D, H, 1.0f, h, H, dense.data() + proj_offset_, H, 0.0f, o, D);
      } else {
        std::copy_n(h, D, o);
      }
    }
  }
}

void Model::backward(const std::vector<LstmTape>& tapes,
                     const std::vector<std::vector<float>>& top, const std::vector<float>& d_out,
                     int batch, int bptt, Gradients* g) const {
  const int D = shape_.dim, H = shape_.hidden;
  std::vector<std::vector<float>> dh(static_cast<size_t>(bptt),
                                     std::vector<float>(static_cast<size_t>(batch) * H));
  for (int t = 0; t < bptt; ++t) {
    for (int b = 0; b < batch; ++b) {
      const float* d = d_out.data() + (static_cast<size_t>(b) * bptt + t) * D;
      float* dht = dh[t].data() + static_cast<size_t>(b) * H;
      if (shape_.projection) {
        // dP += d^T h; dh = d P
        gemm(true, false, D, H, 1, 1.0f, d, D, top[t].data() + static_cast<size_t>(b) * H, H,
             1.0f, g->dense.data() + proj_offset_, H);
        gemm(false, false, 1, H, D, 1.0f, d, D, dense.data() + proj_offset_, H, 0.0f, dht, H);
      } else {
        std::copy_n(d, D, dht);
      }
    }
  }
  for (size_t l = layers_.size(); l-- > 0;) {
    std::vector<std::vector<float>> dx;
    lstm_backward(layers_[l], dense.data() + layer_offset_[l], batch, tapes[l], dh,
                  g->dense.data() + layer_offset_[l], &dx);
    dh = std::move(dx);
  }
  g->in_rows.resize(static_cast<size_t>(batch) * bptt * D);
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < bptt; ++t) {
      std::copy_n(dh[t].data() + static_cast<size_t>(b) * D, D,
                  g->in_rows.data() + (static_cast<size_t>(b) * bptt + t) * D);
    }
  }
}

double Model::train_batch(State* state, const std::vector<int32_t>& inputs,
                          const std::vector<int32_t>& targets, int batch, int bptt,
                          const OutputSpec& output, float grad_scale, Gradients* g) const {
  const int D = shape_.dim, n = batch * bptt;
  std::vector<LstmTape> tapes;
  std::vector<std::vector<float>> top;
  std::vector<float> out, d_out(static_cast<size_t>(n) * D);
  forward(state, inputs, batch, bptt, &tapes, &top, &out);
  g->dense.assign(dense.size(), 0.0f);
  double loss = 0;
  if (output.full) {
    g->out_dense.assign(emb_out.size(), 0.0f);
    loss = full_softmax(out.data(), n, D, emb_out.data(), shape_.vocab, targets.data(),
                        grad_scale, d_out.data(), g->out_dense.data());
  } else {
    const size_t S = output.samples.size();
    g->out_indices.assign(targets.begin(), targets.end());
    for (int64_t s : output.samples) g->out_indices.push_back(static_cast<int32_t>(s));
    g->out_rows.resize((static_cast<size_t>(n) + S) * (D + 1));
    loss = sampled_softmax(out.data(), n, D, emb_out.data(), targets.data(),
                           output.target_expected.data(), output.samples,
                           output.sample_expected.data(), grad_scale, d_out.data(),
                           g->out_rows.data(),
                           g->out_rows.data() + static_cast<size_t>(n) * (D + 1));
  }
  backward(tapes, top, d_out, batch, bptt, g);
  return loss;
}

double Model::eval_batch(State* state, const std::vector<int32_t>& inputs,
                         const std::vector<int32_t>& targets, int batch, int bptt) const {
  std::vector<std::vector<float>> top;
  std::vector<float> out;
  forward(state, inputs, batch, bptt, nullptr, &top, &out);
  return full_softmax(out.data(), batch * bptt, shape_.dim, emb_out.data(), shape_.vocab,
                      targets.data(), 1.0f, nullptr, nullptr);
}

std::vector<float> Model::next_distribution(State* state, int32_t token) const {
  std::vector<std::vector<float>> top;
  std::vector<float> out;
  forward(state, {token}, 1, 1, nullptr, &top, &out);
  const int D = shape_.dim, V = static_cast<int>(shape_.vocab);
  const std::vector<float> aug = with_bias_column(out.data(), 1, D);
  std::vector<float> p(static_cast<size_t>(V));
  gemm(false, true, 1, V, D + 1, 1.0f, aug.data(), D + 1, emb_out.data(), D + 1, 0.0f,
       p.data(), V);
  float mx = p[0];
  for (float v : p) mx = std::max(mx, v);
  double sum = 0;
  for (float& v : p) sum += (v = std::exp(v - mx));
  for (float& v : p) v = static_cast<float>(v / sum);
  return p;
}

}  // namespace lm
