#include "model.hpp"

#include <algorithm>
#include <cmath>

#include "blas.hpp"
#include "softmax.hpp"

namespace lm {
namespace {

// splitmix64 by position: value n of the stream of `seed`, so every rank draws the same
// initial weights, and a rank can draw any one of them without the ones before it.
float init_value(uint64_t seed, uint64_t n, float scale) {
  uint64_t z = seed + (n + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) / static_cast<float>(1u << 24);  // [0, 1)
  return (2.0f * u - 1.0f) * scale;
}

// The stream's positions: the input table's V x D values, then the output table's V x D
// weights (its bias column draws none), then the dense parameters.
uint64_t first_out_value(const ModelShape& s) {
  return static_cast<uint64_t>(s.vocab) * static_cast<uint64_t>(s.dim);
}

}  // namespace

void initial_row_in(const ModelShape& shape, uint64_t seed, float init_scale, int64_t word,
                    float* row) {
  const uint64_t D = static_cast<uint64_t>(shape.dim), at = static_cast<uint64_t>(word) * D;
  for (uint64_t k = 0; k < D; ++k) row[k] = init_value(seed, at + k, init_scale);
}

void initial_row_out(const ModelShape& shape, uint64_t seed, float init_scale, int64_t word,
                     float* row) {
  const uint64_t D = static_cast<uint64_t>(shape.dim);
  const uint64_t at = first_out_value(shape) + static_cast<uint64_t>(word) * D;
  for (uint64_t k = 0; k < D; ++k) row[k] = init_value(seed, at + k, init_scale);
  row[D] = 0.0f;  // the bias
}

Model::Model(const ModelShape& shape, uint64_t seed, float init_scale, bool with_tables)
    : shape_(shape) {
  const int D = shape.dim, H = shape.hidden;
  size_t at = 0;
  for (int l = 0; l < shape.layers; ++l) {
    layers_.push_back(LstmShape{l == 0 ? D : H, H});
    layer_offset_.push_back(at);
    at += layers_.back().params();
  }
  proj_offset_ = at;
  if (shape.projection) at += static_cast<size_t>(D) * H;
  if (with_tables) {
    const size_t V = static_cast<size_t>(shape.vocab);
    emb_in.resize(V * D);
    emb_out.resize(V * (D + 1));
    for (size_t v = 0; v < V; ++v) {
      initial_row_in(shape, seed, init_scale, static_cast<int64_t>(v), &emb_in[v * D]);
      initial_row_out(shape, seed, init_scale, static_cast<int64_t>(v), &emb_out[v * (D + 1)]);
    }
  }
  dense.resize(at);
  const uint64_t first_dense = 2 * first_out_value(shape);
  for (size_t j = 0; j < dense.size(); ++j) {
    dense[j] = init_value(seed, first_dense + j, init_scale);
  }
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

void Model::forward(const float* emb_in_rows, State* state, const std::vector<int32_t>& inputs,
                    int batch, int bptt,
                    std::vector<LstmTape>* tapes, std::vector<std::vector<float>>* top,
                    std::vector<float>* out) const {
  const int D = shape_.dim, H = shape_.hidden;
  std::vector<std::vector<float>> x(static_cast<size_t>(bptt),
                                    std::vector<float>(static_cast<size_t>(batch) * D));
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < bptt; ++t) {
      const int32_t w = inputs[static_cast<size_t>(b) * bptt + t];
      std::copy_n(emb_in_rows + static_cast<size_t>(w) * D, D,
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

double Model::train_batch(const Embeddings& emb, State* state,
                          const std::vector<int32_t>& inputs,
                          const std::vector<int32_t>& targets, int batch, int bptt,
                          const OutputSpec& output, float grad_scale, Gradients* g) const {
  const int D = shape_.dim, n = batch * bptt;
  std::vector<LstmTape> tapes;
  std::vector<std::vector<float>> top;
  std::vector<float> out, d_out(static_cast<size_t>(n) * D);
  forward(emb.in, state, inputs, batch, bptt, &tapes, &top, &out);
  g->dense.assign(dense.size(), 0.0f);
  double loss = 0;
  if (output.full) {
    g->out_dense.assign(static_cast<size_t>(shape_.vocab) * (D + 1), 0.0f);
    loss = full_softmax(out.data(), n, D, emb.out, shape_.vocab, targets.data(),
                        grad_scale, d_out.data(), g->out_dense.data());
  } else {
    const size_t S = output.samples.size();
    g->out_indices.assign(targets.begin(), targets.end());
    for (int64_t s : output.samples) g->out_indices.push_back(static_cast<int32_t>(s));
    g->out_rows.resize((static_cast<size_t>(n) + S) * (D + 1));
    loss = sampled_softmax(out.data(), n, D, emb.out, targets.data(),
                           output.target_expected.data(), output.samples,
                           output.sample_expected.data(), grad_scale, d_out.data(),
                           g->out_rows.data(),
                           g->out_rows.data() + static_cast<size_t>(n) * (D + 1));
  }
  backward(tapes, top, d_out, batch, bptt, g);
  return loss;
}

double Model::eval_batch(const Embeddings& emb, State* state,
                         const std::vector<int32_t>& inputs,
                         const std::vector<int32_t>& targets, int batch, int bptt) const {
  std::vector<std::vector<float>> top;
  std::vector<float> out;
  forward(emb.in, state, inputs, batch, bptt, nullptr, &top, &out);
  return full_softmax(out.data(), batch * bptt, shape_.dim, emb.out, shape_.vocab,
                      targets.data(), 1.0f, nullptr, nullptr);
}

std::vector<float> Model::next_distribution(State* state, int32_t token) const {
  std::vector<std::vector<float>> top;
  std::vector<float> out;
  forward(emb_in.data(), state, {token}, 1, 1, nullptr, &top, &out);
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
