// A checkpoint: the model's shape, vocabulary, parameters, the optimizer's state and the
// step, in one binary file (little-endian, as written).
#pragma once

#include <cstdint>
#include <string>

#include "model.hpp"
#include "optimizer.hpp"
#include "text_data.hpp"

namespace lm {

struct Checkpoint {
  ModelShape shape;
  Vocabulary vocab;
  Model model;
  std::vector<float> acc_dense, acc_in, acc_out;
  int64_t step = 0;
};

bool save_checkpoint(const std::string& path, const Model& model, const Vocabulary& vocab,
                     const Optimizer& opt, int64_t step);
// Throws std::runtime_error naming the file when it is not a checkpoint.
Checkpoint load_checkpoint(const std::string& path);

// Prints, per tensor, the largest |a - b| over the largest |a|; returns the largest ratio.
double compare_checkpoints(const std::string& a, const std::string& b);

}  // namespace lm
