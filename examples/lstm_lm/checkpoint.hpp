// A checkpoint: the model's shape, vocabulary, parameters, the optimizer and its state, and
// where training stands (step, epoch, data position, every rank's recurrent state), in one
// binary file (little-endian, as written). Loading it resumes training exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"
#include "optimizer.hpp"
#include "options.hpp"
#include "text_data.hpp"

namespace lm {

// Where training stands. The data position and the recurrent state mean something only for
// the same ranks, streams per rank and BPTT length.
struct Progress {
  int64_t step = 0;       // steps trained
  int32_t epoch = 0;      // the epoch the next step is in
  int64_t position = 0;   // the next step's batch within that epoch
  int32_t ranks = 0;      // G, --batch and --bptt of the run that saved it (0: unknown)
  int32_t batch = 0;
  int32_t bptt = 0;
  std::vector<float> states;  // every rank's recurrent state, rank after rank (may be empty)
};

struct Checkpoint {
  ModelShape shape;
  Vocabulary vocab;
  Model model;
  OptimizerKind optimizer = OptimizerKind::kAdagrad;
  std::vector<float> acc_dense, acc_in, acc_out;
  Progress progress;
};

// Writes to a temporary file beside `path`, then renames it over `path`: a reader never sees
// a partial checkpoint, and a failed write leaves the previous one in place.
bool save_checkpoint(const std::string& path, const Model& model, const Vocabulary& vocab,
                     OptimizerKind optimizer, const Optimizer& opt, const Progress& progress);
// Throws std::runtime_error naming the file when it is not a checkpoint. Checkpoints of the
// first format (no optimizer or position) load with the optimizer their state implies.
Checkpoint load_checkpoint(const std::string& path);

// Prints, per tensor (parameters and optimizer state), the largest |a - b| over the largest
// |a| and how many values differ in their bits; returns the largest ratio.
double compare_checkpoints(const std::string& a, const std::string& b);

const char* optimizer_name(OptimizerKind kind);

}  // namespace lm
