// Command line of lstm_lm.
#pragma once

#include <cstdint>
#include <string>

#include "zipfcoll/zipfcoll.h"

namespace lm {

enum class Mode { kWord, kChar };
enum class SoftmaxKind { kSampled, kFull };
enum class OptimizerKind { kSgd, kAdagrad };
// Where the embedding tables live: whole on every rank, or split by rows across the ranks
// (zfcShardedGather and zfcShardedReduceApply; the output table only with sampled softmax).
enum class TableLayout { kReplicated, kSharded };

struct Options {
  Mode mode = Mode::kWord;
  std::string corpus;          // a .txt file or a directory of them
  int64_t vocab = 10000;       // word mode: the top vocab-2 words, <unk> and <eos>
  int dim = 256;               // embedding width D
  int hidden = 256;            // LSTM width H
  int layers = 1;
  bool projection = false;     // top layer's H projected to D (needed when H != D)
  int bptt = 20;               // T: steps of truncated backpropagation
  int batch = 16;              // B: streams per rank
  SoftmaxKind softmax = SoftmaxKind::kSampled;
  int samples = 1024;          // sampled-softmax candidates per rank and step
  OptimizerKind optimizer = OptimizerKind::kAdagrad;
  bool optimizer_given = false;  // --optimizer on the command line (else a checkpoint's)
  float lr = 0.2f;
  float lr_decay = 1.0f;       // per epoch, from decay_after on
  int decay_after = 1;
  float clip = 1.0f;           // global gradient norm bound (0: none)
  bool clip_given = false;     // --clip on the command line
  TableLayout tables = TableLayout::kReplicated;
  float init_scale = 0.1f;
  uint64_t seed = 1;
  int64_t max_steps = -1;      // -1: until epochs or the time budget end
  int epochs = 1;
  double time_budget = 0;      // seconds of training (0: no bound)
  int log_every = 50;
  int64_t eval_every = 0;      // steps between validations (0: at each epoch's end)
  int64_t valid_tokens = 0;    // 0: the whole held-out split
  zfcAlgorithm_t sync = zfcAlgoAuto;
  zfcCompression_t compression{zfcCompressNone, 1.0f};
  bool error_feedback = false;  // the dense allreduces keep a residual (--error-feedback)
  bool group = true;           // a step's collectives in one zfcGroupStart/zfcGroupEnd
  zfcSeedPolicy_t seed_policy = zfcSeedPower;
  double seed_alpha = 0.64;
  std::string log_json;        // -J, --output_file: JSON lines of progress and validation
  std::string save;
  int64_t save_every = 0;      // steps between checkpoints to `save` (0: only at the end)
  std::string load;
  int generate = 0;            // words (or characters) to sample at the end
  std::string compare_a, compare_b;  // --compare A B: checkpoint difference, then exit
  double tolerance = 0;
  int64_t inject_inf = 0;      // at this step (1-based) the last rank's gradient gets an inf
  bool help = false;           // --help: the usage was printed, nothing else to do
};

// Parses argv (CLI11; the names shared by every program: common/tools/tool_options.hpp). On a
// bad or missing value prints why, naming the option and the value, and returns false (exit
// status 2). For --help prints the usage, sets out->help and returns true.
bool parse_options(int argc, char** argv, Options* out);

std::string describe(const Options& o);

}  // namespace lm
