// The language model: input embedding (V x D), L LSTM layers, an optional projection of the
// top layer to D, and the output embedding with biases (V x (D+1)). The dense parameters
// (LSTM weights and biases, projection) live in one flat vector so one allreduce syncs them.
#pragma once

#include <cstdint>
#include <vector>

#include "lstm_layer.hpp"

namespace lm {

struct ModelShape {
  int64_t vocab = 0;
  int dim = 0;
  int hidden = 0;
  int layers = 1;
  bool projection = false;
};

// The hidden state carried from one batch to the next, per layer (B x H each).
struct State {
  std::vector<std::vector<float>> h, c;
};

// One batch's gradients, each already multiplied by the loss scale.
struct Gradients {
  std::vector<float> dense;           // the layout of Model::dense
  std::vector<float> in_rows;         // one row (D) per input token, in token order
  std::vector<int32_t> out_indices;   // sampled: the N targets, then the S candidates
  std::vector<float> out_rows;        // sampled: (N + S) x (D + 1)
  std::vector<float> out_dense;       // full softmax: V x (D + 1)
};

// The output layer of a training step: full softmax, or sampled with these candidates and
// the expected counts of each candidate and of each target among the draws.
struct OutputSpec {
  bool full = true;
  std::vector<int64_t> samples;
  std::vector<float> sample_expected;
  std::vector<float> target_expected;
};

// The embedding rows a batch reads: the whole tables, where ids are words, or only the
// batch's own rows fetched from sharded tables, where ids are places among them.
struct Embeddings {
  const float* in = nullptr;   // rows of D
  const float* out = nullptr;  // rows of D + 1
};

// The initial value of one embedding row: the value Model's constructor gives it, so a rank
// can fill the rows it owns without building the whole table.
void initial_row_in(const ModelShape& shape, uint64_t seed, float init_scale, int64_t word,
                    float* row);
void initial_row_out(const ModelShape& shape, uint64_t seed, float init_scale, int64_t word,
                     float* row);

class Model {
 public:
  Model() = default;
  // Uniform in [-init_scale, init_scale] from `seed` (the same on every rank), biases 0
  // except the forget gates' (1). Without tables, emb_in and emb_out stay empty (the rows
  // live in shards) and the dense parameters have the same values as with them.
  Model(const ModelShape& shape, uint64_t seed, float init_scale, bool with_tables = true);

  const ModelShape& shape() const { return shape_; }
  State zero_state(int batch) const;
  Embeddings tables() const { return {emb_in.data(), emb_out.data()}; }

  // Inputs and targets are B x T, stream-major, and index `emb`. Returns the summed loss
  // (nats); fills g.
  double train_batch(const Embeddings& emb, State* state, const std::vector<int32_t>& inputs,
                     const std::vector<int32_t>& targets, int batch, int bptt,
                     const OutputSpec& output, float grad_scale, Gradients* g) const;
  // The summed full-softmax loss, advancing the state; emb.out holds every word's row.
  double eval_batch(const Embeddings& emb, State* state, const std::vector<int32_t>& inputs,
                    const std::vector<int32_t>& targets, int batch, int bptt) const;
  // Probabilities of the next token after `token` (batch of one), advancing the state.
  std::vector<float> next_distribution(State* state, int32_t token) const;

  std::vector<float> emb_in;
  std::vector<float> emb_out;
  std::vector<float> dense;

 private:
  // Embedding lookup, the LSTM stack and the projection: out (N x D, stream-major).
  void forward(const float* emb_in_rows, State* state, const std::vector<int32_t>& inputs,
               int batch, int bptt,
               std::vector<LstmTape>* tapes, std::vector<std::vector<float>>* top,
               std::vector<float>* out) const;
  void backward(const std::vector<LstmTape>& tapes, const std::vector<std::vector<float>>& top,
                const std::vector<float>& d_out, int batch, int bptt, Gradients* g) const;

  ModelShape shape_;
  std::vector<LstmShape> layers_;
  std::vector<size_t> layer_offset_;
  size_t proj_offset_ = 0;
};

}  // namespace lm
