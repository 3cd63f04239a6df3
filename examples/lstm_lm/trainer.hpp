// The training loop: data-parallel steps over each rank's streams, progress lines and JSON
// records, validation perplexity, checkpoints and text generation.
#pragma once

#include <cstdio>
#include <memory>

#include "gradient_sync.hpp"
#include "model.hpp"
#include "optimizer.hpp"
#include "options.hpp"
#include "text_data.hpp"
#include "zipfcoll/zipfcoll.h"

namespace lm {

class Trainer {
 public:
  // Collective over comm. The model and optimizer are fresh from o.seed, or the checkpoint's.
  Trainer(const Options& o, zfcComm_t comm, Corpus corpus);
  ~Trainer();

  // Collective: trains until the epochs, the step limit or the time budget end. Returns 0, or
  // 1 after printing the library's error.
  int train();
  // Collective: the held-out perplexity with full softmax (all of it, or --valid-tokens).
  double validation_perplexity();
  // Rank 0 prints n sampled tokens.
  void generate(int n);
  // The unigram perplexity of the held-out split under the training counts.
  double unigram_perplexity() const;
  bool save(const std::string& path) const;

 private:
  struct Interval;
  OutputSpec output_for(int64_t step, const std::vector<int32_t>& targets) const;
  void log_progress(int64_t step, Interval* iv, double elapsed);
  void log_json(const char* fmt, ...) const;
  float learning_rate(int epoch) const;
  bool step(const Streams& streams, int64_t k, int epoch, State* state, double elapsed,
            Interval* iv, bool* stop);
  void validate(int epoch, double elapsed);             // epoch <= 0: mid-epoch
  void report_validation(int epoch, double ppl) const;

  Options o_;
  zfcComm_t comm_;
  int rank_ = 0;
  int size_ = 1;
  Corpus corpus_;
  Model model_;
  std::unique_ptr<Optimizer> opt_;
  std::unique_ptr<GradientSync> sync_;
  zfcSeedGroup_t group_ = nullptr;
  int64_t step_ = 0;
  std::vector<int32_t> inputs_, targets_;  // this step's batch
  Gradients grads_;
  SyncedGradients synced_;
  FILE* json_ = nullptr;
};

}  // namespace lm
