// The training loop: data-parallel steps over each rank's streams, progress lines and JSON
// records, validation perplexity, checkpoints and text generation.
#pragma once

#include <cstdio>
#include <memory>

#include "checkpoint.hpp"
#include "gradient_sync.hpp"
#include "model.hpp"
#include "optimizer.hpp"
#include "options.hpp"
#include "sharded_tables.hpp"
#include "text_data.hpp"
#include "tools/json_writer.hpp"
#include "zipfcoll/zipfcoll.h"

namespace lm {

class Trainer {
 public:
  struct WholeModel {
    const Model* model = nullptr;  // NULL on a rank that did not want it (sharded)
    const Optimizer* opt = nullptr;
    Model copy;                    // sharded: model_ with the gathered tables
    std::unique_ptr<Optimizer> opt_copy;
  };

  // Collective over comm. The model and optimizer are fresh from o.seed, or the checkpoint's.
  Trainer(const Options& o, zfcComm_t comm, Corpus corpus);
  ~Trainer();

  // Collective: trains from where the model stands (a loaded checkpoint's step, epoch, data
  // position and recurrent state) until the epochs, the step limit or the time budget end,
  // writing a checkpoint every --save-every steps. Returns 0, or 1 after printing the error.
  int train();
  // Collective: the held-out perplexity with full softmax (all of it, or --valid-tokens).
  double validation_perplexity();
  // Rank 0 prints n sampled tokens.
  void generate(int n);
  // The unigram perplexity of the held-out split under the training counts.
  double unigram_perplexity() const;
  // Collective: writes the checkpoint (rank 0, atomically) unless `path` holds this step's
  // already (written by --save-every, or the file loaded); the same answer on every rank.
  bool save(const std::string& path);

 private:
  struct Interval;
  OutputSpec output_for(int64_t step, const std::vector<int32_t>& targets) const;
  void log_progress(int64_t step, Interval* iv, double elapsed);
  // Rank 0 writes one JSON line per event to -J, --output_file.
  void log_json(const zfc::tools::JsonObject& event) const;
  float learning_rate(int epoch) const;
  bool step(const Streams& streams, int64_t k, int epoch, State* state, double elapsed,
            Interval* iv, bool* stop);
  bool compute_gradients(const Streams& streams, int64_t k, State* state, Interval* iv,
                         double* loss);
  void apply_update(float lr);
  void validate(int epoch, double elapsed);             // epoch <= 0: mid-epoch
  void report_validation(int epoch, double ppl) const;
  void resume_from(Progress progress);
  void note_algorithms();
  void report_tables() const;
  // trainer_tables.cpp:
  void make_sharded_tables();
  // Collective, sharded tables: this step's rows (fetched_), the batch's ids made places
  // among them (inputs_, targets_, the candidates in *spec; out_ids_ keeps the words).
  bool fetch_batch_rows(OutputSpec* spec, Embeddings* emb);
  // Collective: the model with whole tables (and, with_state, the optimizer with whole
  // accumulators) on ranks with `want`: model_ and *opt_ themselves when the tables are
  // replicated, copies with the shards gathered in when they are sharded (then only on
  // those ranks). Returns false after printing the library's error.
  bool whole_model(bool want, bool with_state, WholeModel* w);

  Options o_;
  zfcComm_t comm_;
  int rank_ = 0;
  int size_ = 1;
  Corpus corpus_;
  Model model_;
  std::unique_ptr<Optimizer> opt_;
  std::unique_ptr<ShardedTables> tables_;  // --tables sharded (declared before sync_, which
  std::unique_ptr<GradientSync> sync_;      // refers to it)
  zfcSeedGroup_t group_ = nullptr;
  int64_t step_ = 0;
  int epoch_ = 0;                // the epoch the next step is in
  int64_t position_ = 0;         // the next step's batch within it
  State state_;                  // the recurrent state carried into that batch
  int64_t saved_step_ = -1;      // the step of the checkpoint in saved_path_ (loaded or
  std::string saved_path_;       // written), which need not be written again
  int in_algorithm_ = -2, out_algorithm_ = -2;  // what the plans ran last (-2: nothing yet)
  std::vector<int32_t> inputs_, targets_;  // this step's batch
  std::vector<int32_t> out_ids_;           // sharded: its output words (targets, candidates)
  FetchedRows fetched_;                    // sharded: its rows
  std::vector<int32_t> target_places_;     // sharded output table: the targets' places
  Gradients grads_;
  SyncedGradients synced_;
  mutable zfc::tools::JsonLines json_;  // written from const reports
};

}  // namespace lm
