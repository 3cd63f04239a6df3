#include "trainer.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "checkpoint.hpp"
#include "recurrent_state.hpp"
#include "stopwatch.hpp"

namespace lm {
namespace {

uint64_t bytes_moved(zfcComm_t comm) {
  zfcStats_t s = ZFC_STATS_INITIALIZER;
  zfcCommGetStats(comm, &s);
  return s.total.bytes_sent + s.total.bytes_received;
}

// Dependent rounds of the library's calls so far (zfcOpStats_t.rounds, summed).
int64_t rounds_taken(zfcComm_t comm) {
  zfcStats_t s = ZFC_STATS_INITIALIZER;
  zfcCommGetStats(comm, &s);
  return s.total.rounds;
}

}  // namespace

// What the progress line reports: sums since the last line.
struct Trainer::Interval {
  double loss = 0;        // global summed loss
  double tokens = 0;      // global tokens
  double compute_s = 0;   // this rank's forward, backward and update
  double comm_s = 0;      // this rank's time in the library
  double dense_s = 0;     // of which: the dense weights' allreduce,
  double in_s = 0;        // the input embedding's plan,
  double out_s = 0;       // the output embedding's plan (or allreduce)
  double ug_ratio = 0;    // summed U_g / (G K) of the input embedding (sharded: U_i / K)
  int64_t steps = 0;
  int64_t skipped = 0;    // steps dropped for a compressed-wire overflow
  uint64_t bytes = 0;     // this rank's bytes sent + received at the interval's start
  int64_t rounds = 0;     // and the library's dependent rounds
  Clock::time_point start = Clock::now();
};

Trainer::Trainer(const Options& o, zfcComm_t comm, Corpus corpus)
    : o_(o), comm_(comm), corpus_(std::move(corpus)) {
  zfcCommRank(comm, &rank_);
  zfcCommCount(comm, &size_);
  ModelShape shape{corpus_.vocab.size(), o.dim, o.hidden, o.layers, o.projection};
  const bool sharded = o.tables == TableLayout::kSharded;
  model_ = Model(shape, o.seed, o.init_scale, !sharded);
  if (sharded) make_sharded_tables();
  opt_ = std::make_unique<Optimizer>(o.optimizer, model_);
  state_ = model_.zero_state(o.batch);
  sync_ = std::make_unique<GradientSync>(comm, o, shape, tables_.get());
  if (!o.load.empty()) {
    Checkpoint c = load_checkpoint(o.load);
    if (c.vocab.words != corpus_.vocab.words) {
      throw std::runtime_error(o.load + " was trained with another vocabulary (use the "
                               "same corpus and --vocab)");
    }
    if (c.optimizer != o.optimizer) {  // lstm_lm.cpp takes the checkpoint's when not given
      throw std::runtime_error(o.load + " was trained with " + optimizer_name(c.optimizer) +
                               ", not " + optimizer_name(o.optimizer));
    }
    model_ = std::move(c.model);
    opt_->acc_dense = std::move(c.acc_dense);
    opt_->acc_in = std::move(c.acc_in);
    opt_->acc_out = std::move(c.acc_out);
    if (tables_) {  // this rank keeps its rows of the checkpoint's tables
      tables_->cut_from(model_, *opt_);
      tables_->drop_whole(&model_, opt_.get());
    }
    resume_from(std::move(c.progress));
  }
  if (o.softmax == SoftmaxKind::kSampled &&
      zfcSeedGroupCreate(comm, o.seed_policy, o.seed_alpha, -1, o.seed, &group_) != zfcSuccess) {
    throw std::runtime_error(std::string("zfcSeedGroupCreate: ") + zfcGetLastError(comm));
  }
  // Only rank 0 writes it, so a file it cannot open is said, not thrown: the other ranks
  // would wait for it in the next collective.
  if (rank_ == 0 && !o.log_json.empty() && !json_.open(o.log_json)) {
    std::fprintf(stderr, "lstm_lm: cannot write %s: no JSON log\n", o.log_json.c_str());
  }
  report_tables();
}

// The embedding tables' memory on this rank (rows and Adagrad's accumulators), and whole.
void Trainer::report_tables() const {
  const size_t copies = o_.optimizer == OptimizerKind::kAdagrad ? 2 : 1;
  // What this rank holds whole (all of it with replicated tables; a full softmax's output
  // table with sharded ones), then the shards.
  const size_t replicated =
      sizeof(float) * copies * (model_.emb_in.size() + model_.emb_out.size());
  const size_t whole = tables_ ? replicated + tables_->whole_bytes() : replicated;
  const size_t here = tables_ ? replicated + tables_->bytes() : replicated;
  const char* layout = tables_ ? "sharded" : "replicated";
  if (rank_ == 0) {
    std::printf("embedding tables (%s): %.2f MB of rows%s on this rank, %.2f MB whole\n",
                layout, here / 1e6, copies == 2 ? " and accumulators" : "", whole / 1e6);
  }
  log_json(zfc::tools::JsonObject()
               .text("event", "tables")
               .text("layout", layout)
               .integer("bytes_here", static_cast<long long>(here))
               .integer("bytes_whole", static_cast<long long>(whole)));
}

Trainer::~Trainer() {
  sync_.reset();
  zfcSeedGroupDestroy(group_);
}

void Trainer::log_json(const zfc::tools::JsonObject& event) const { json_.write(event); }

// The step, epoch and data position of a checkpoint, and this rank's recurrent state. The
// position and state are those of G ranks of B streams of T tokens: with another G, B or T
// the streams split the text elsewhere, so training restarts at the saved epoch's start
// with a zero state (and says so).
void Trainer::resume_from(Progress p) {
  step_ = p.step;
  saved_step_ = p.step;  // saving untrained to the same file must not rewrite its position
  saved_path_ = o_.load;
  epoch_ = p.epoch;
  position_ = p.position;
  const std::vector<float> mine = flatten_state(state_);
  const bool same_streams = p.ranks == size_ && p.batch == o_.batch && p.bptt == o_.bptt;
  if (same_streams && p.states.size() == mine.size() * static_cast<size_t>(size_) &&
      restore_state(p.states.data() + mine.size() * static_cast<size_t>(rank_), mine.size(),
                    &state_)) {
    return;
  }
  if (position_ > 0 && rank_ == 0) {  // a checkpoint of the first format has no position
    std::printf("note: %s was saved by %d ranks with --batch %d --bptt %d; epoch %d restarts "
                "at its first batch with a zero recurrent state\n", o_.load.c_str(), p.ranks,
                p.batch, p.bptt, epoch_ + 1);
  }
  position_ = 0;
}

// Says which algorithm each plan ran (at step step_ + 1, not yet counted), at the first step
// and whenever auto's choice changes.
void Trainer::note_algorithms() {
  if (synced_.in_algorithm == in_algorithm_ && synced_.out_algorithm == out_algorithm_) return;
  in_algorithm_ = synced_.in_algorithm;
  out_algorithm_ = synced_.out_algorithm;
  const char* in = zfcGetAlgorithmName(in_algorithm_);
  const char* out = out_algorithm_ < 0 ? "dense allreduce" : zfcGetAlgorithmName(out_algorithm_);
  if (rank_ == 0) {
    std::printf("step %lld: the input embedding's plan runs %s, the output embedding's %s "
                "(--sync %s)\n", static_cast<long long>(step_ + 1), in, out,
                zfcGetAlgorithmName(o_.sync));
  }
  log_json(zfc::tools::JsonObject()
               .text("event", "algorithms")
               .integer("step", static_cast<long long>(step_ + 1))
               .text("input_plan", in)
               .text("output_plan", out));
}

float Trainer::learning_rate(int epoch) const {
  if (epoch < o_.decay_after) return o_.lr;
  return o_.lr * std::pow(o_.lr_decay, static_cast<float>(epoch - o_.decay_after + 1));
}

OutputSpec Trainer::output_for(int64_t step, const std::vector<int32_t>& targets) const {
  OutputSpec spec;
  spec.full = o_.softmax == SoftmaxKind::kFull;
  if (spec.full) return spec;
  const size_t S = static_cast<size_t>(std::min<int64_t>(o_.samples, corpus_.vocab.size()));
  const std::vector<int64_t> t64(targets.begin(), targets.end());
  spec.samples.resize(S);
  spec.sample_expected.resize(S);
  spec.target_expected.resize(targets.size());
  // The rank's seed group draws the same candidates on all its members this step.
  uint64_t seed = 0;
  zfcSeedGroupStepSeed(group_, static_cast<uint64_t>(step), &seed);
  zfcSampleLogUniform(seed,
                      corpus_.vocab.size(), S, 1, spec.samples.data(),
                      spec.sample_expected.data(), t64.data(), t64.size(),
                      spec.target_expected.data(), nullptr);
  return spec;
}

void Trainer::log_progress(int64_t step, Interval* iv, double elapsed) {
  const double dt = seconds_since(iv->start);
  const uint64_t now_bytes = bytes_moved(comm_);
  const double steps = static_cast<double>(std::max<int64_t>(iv->steps, 1));
  const double loss = iv->tokens > 0 ? iv->loss / iv->tokens : 0;
  const double tps = iv->tokens / dt;
  const double bytes = static_cast<double>(now_bytes - iv->bytes) / steps;
  const double ug = iv->ug_ratio / steps;
  const int64_t now_rounds = rounds_taken(comm_);
  const double rounds = static_cast<double>(now_rounds - iv->rounds) / steps;
  if (rank_ == 0) {
    // A sampled-softmax loss is not a perplexity: only the full softmax's is shown as one.
    char what[64];
    if (o_.softmax == SoftmaxKind::kFull) {
      std::snprintf(what, sizeof what, "loss %.4f (ppl %.2f)", loss, std::exp(loss));
    } else {
      std::snprintf(what, sizeof what, "sampled loss %.4f", loss);
    }
    std::printf("step %6lld  %s  %8.0f tok/s (%6.0f /rank)  %s %.3f  "
                "%.2f MB/step  compute %.0f%%  ms/step %s %.1f in %.1f out %.1f  "
                "skipped %lld  %.0f s\n",
                static_cast<long long>(step), what, tps, tps / size_,
                tables_ ? "U_i/K" : "U_g/GK", ug,
                bytes / 1e6, 100 * iv->compute_s / std::max(iv->compute_s + iv->comm_s, 1e-9),
                o_.group ? "group" : "dense", 1e3 * iv->dense_s / steps, 1e3 * iv->in_s / steps,
                1e3 * iv->out_s / steps,
                static_cast<long long>(iv->skipped), elapsed);
    std::fflush(stdout);
  }
  log_json(zfc::tools::JsonObject()
               .text("event", "progress")
               .integer("step", static_cast<long long>(step))
               .number("loss", loss, "%.6f")
               .number("tokens_per_s", tps, "%.1f")
               .number(tables_ ? "ui_ratio" : "ug_ratio", ug, "%.5f")
               .number("bytes_per_step", bytes, "%.0f")
               .number("rounds_per_step", rounds, "%.2f")
               .number("compute_s", iv->compute_s, "%.4f")
               .number("comm_s", iv->comm_s, "%.4f")
               .boolean("grouped", o_.group)
               .number("dense_allreduce_s", iv->dense_s, "%.4f")
               .number("input_plan_s", iv->in_s, "%.4f")
               .number("output_plan_s", iv->out_s, "%.4f")
               .text("input_plan", zfcGetAlgorithmName(in_algorithm_))
               .text("output_plan", out_algorithm_ < 0 ? "dense allreduce"
                                                       : zfcGetAlgorithmName(out_algorithm_))
               .integer("steps", static_cast<long long>(iv->steps))
               .integer("skipped", static_cast<long long>(iv->skipped))
               .number("elapsed", elapsed, "%.2f"));
  *iv = Interval{};
  iv->bytes = now_bytes;
  iv->rounds = now_rounds;
}

// One step: forward and backward on this rank's batch, the gradients summed through the
// library, the same update on every rank. Returns false after printing the library's error.
// This rank's batch k: forward and backward (on fetched rows, with sharded tables) into
// grads_. Returns false after printing the library's error.
bool Trainer::compute_gradients(const Streams& streams, int64_t k, State* state, Interval* iv,
                                double* loss) {
  const int B = o_.batch, T = o_.bptt;
  const float grad_scale = 1.0f / (static_cast<float>(size_) * B * T);
  auto t0 = Clock::now();
  streams.batch(k, T, &inputs_, &targets_);
  OutputSpec spec = output_for(step_, targets_);
  Embeddings emb = model_.tables();
  const std::vector<int32_t>* model_inputs = &inputs_;
  const std::vector<int32_t>* model_targets = &targets_;
  if (tables_) {
    iv->compute_s += seconds_since(t0);
    t0 = Clock::now();
    if (!fetch_batch_rows(&spec, &emb)) return false;
    iv->comm_s += seconds_since(t0);
    t0 = Clock::now();
    model_inputs = &fetched_.in_places;
    if (tables_->out_sharded()) model_targets = &target_places_;
  }
  *loss = model_.train_batch(emb, state, *model_inputs, *model_targets, B, T, spec, grad_scale,
                             &grads_);
  // The owners of sharded output rows take words.
  if (tables_ && tables_->out_sharded()) grads_.out_indices = out_ids_;
  if (o_.inject_inf > 0 && step_ + 1 == o_.inject_inf && rank_ == size_ - 1) {
    grads_.in_rows[0] = std::numeric_limits<float>::infinity();
  }
  iv->compute_s += seconds_since(t0);
  return true;
}

// The update of what the sync left to this rank: everything with replicated tables, the
// dense weights (and a whole output table) with sharded ones, whose owners updated their rows.
void Trainer::apply_update(float lr) {
  float scale = 1.0f;
  if (o_.clip > 0) {
    const double norm = Optimizer::grad_norm(grads_.dense, synced_.in, o_.dim, synced_.out,
                                             synced_.out_dense, o_.dim + 1);
    if (norm > o_.clip) scale = static_cast<float>(o_.clip / norm);
  }
  opt_->step(&model_, lr, scale, grads_.dense, synced_.in, synced_.out, synced_.out_dense);
}

// One step: the batch's gradients, summed through the library, the same update on every
// rank. Returns false after printing the library's error.
bool Trainer::step(const Streams& streams, int64_t k, int epoch, State* state,
                   double elapsed, Interval* iv, bool* stop) {
  double loss = 0;
  if (!compute_gradients(streams, k, state, iv, &loss)) return false;
  auto t0 = Clock::now();
  // The loss, the tokens and rank 0's verdict on the time budget, summed over ranks with
  // the gradients.
  const int tokens = o_.batch * o_.bptt;
  float shared[3] = {static_cast<float>(loss), static_cast<float>(tokens), 0.0f};
  if (rank_ == 0 && o_.time_budget > 0 && elapsed >= o_.time_budget) shared[2] = 1.0f;
  std::string why;
  // With sharded tables their owners apply this (unclipped: --clip is 0 there).
  zfcRowUpdate_t update = ZFC_ROW_UPDATE_INITIALIZER;
  update.kind = o_.optimizer == OptimizerKind::kSgd ? zfcUpdateSgd : zfcUpdateAdagrad;
  update.alpha = learning_rate(epoch);
  update.epsilon = kAdagradEpsilon;
  if (sync_->sync(inputs_, &grads_, shared, 3, update, &synced_, &why) != zfcSuccess) {
    std::fprintf(stderr, "rank %d: gradient sync failed: %s\n", rank_, why.c_str());
    return false;
  }
  iv->comm_s += seconds_since(t0);
  iv->dense_s += synced_.dense_s;
  iv->in_s += synced_.in_s;
  iv->out_s += synced_.out_s;
  note_algorithms();
  t0 = Clock::now();
  if (synced_.overflowed) {
    ++iv->skipped;  // every rank skips the same step (and sharded rows were left alone)
  } else {
    apply_update(update.alpha);
  }
  iv->compute_s += seconds_since(t0);
  iv->loss += shared[0];
  iv->tokens += shared[1];
  // Sharded, no rank learns U_g: this rank's U_i / K instead.
  iv->ug_ratio += tables_ ? static_cast<double>(fetched_.in_unique) / inputs_.size()
                          : static_cast<double>(synced_.in.count) / synced_.in_tokens_global;
  ++iv->steps;
  ++step_;
  *stop = shared[2] > 0 || (o_.max_steps >= 0 && step_ >= o_.max_steps);
  return true;
}

void Trainer::validate(int epoch, double elapsed) {
  const double ppl = validation_perplexity();
  report_validation(epoch, ppl);
  log_json(zfc::tools::JsonObject()
               .text("event", "valid")
               .integer("step", static_cast<long long>(step_))
               .integer("epoch", epoch)
               .number("ppl", ppl, "%.4f")
               .number("elapsed", elapsed, "%.2f"));
}

int Trainer::train() {
  const Streams streams(corpus_.train, size_ * o_.batch, rank_ * o_.batch, o_.batch);
  const int64_t per_epoch = streams.steps_per_epoch(o_.bptt);
  if (per_epoch == 0) throw std::runtime_error("corpus too short for the streams and --bptt");
  if (position_ >= per_epoch) {  // saved with the same streams, so only a changed corpus
    throw std::runtime_error("the checkpoint's data position " + std::to_string(position_) +
                             " is past the epoch's " + std::to_string(per_epoch) + " batches");
  }
  const auto start = Clock::now();
  Interval iv;
  iv.bytes = bytes_moved(comm_);
  iv.rounds = rounds_taken(comm_);
  // --steps counts from the start of training: a loaded checkpoint at or past it trains none.
  bool stop = o_.max_steps >= 0 && step_ >= o_.max_steps;
  if (stop || epoch_ >= o_.epochs) {
    if (rank_ == 0) {
      std::printf("step %lld, epoch %d: nothing to train (--steps %lld, --epochs %d)\n",
                  static_cast<long long>(step_), epoch_ + 1,
                  static_cast<long long>(o_.max_steps), o_.epochs);
    }
    validate(-1, 0);
    return 0;
  }
  while (epoch_ < o_.epochs && !stop) {
    const int epoch = epoch_;
    if (position_ == 0) state_ = model_.zero_state(o_.batch);
    for (int64_t k = position_; k < per_epoch && !stop; ++k) {
      if (!step(streams, k, epoch, &state_, seconds_since(start), &iv, &stop)) return 1;
      position_ = k + 1;
      if (position_ == per_epoch) {
        ++epoch_;
        position_ = 0;
      }
      if (step_ % o_.log_every == 0 || stop) log_progress(step_, &iv, seconds_since(start));
      if (o_.save_every > 0 && step_ % o_.save_every == 0 && !save(o_.save)) {
        if (rank_ == 0) std::fprintf(stderr, "lstm_lm: could not write %s\n", o_.save.c_str());
        return 1;
      }
      if (o_.eval_every > 0 && step_ % o_.eval_every == 0 && !stop) {
        validate(-1, seconds_since(start));
      }
    }
    if (o_.eval_every == 0 || stop) validate(epoch + 1, seconds_since(start));
  }
  return 0;
}

void Trainer::report_validation(int epoch, double ppl) const {
  if (rank_ != 0) return;
  if (epoch > 0) std::printf("epoch %d  ", epoch);
  std::printf("step %lld  validation perplexity %.2f", static_cast<long long>(step_), ppl);
  if (corpus_.vocab.bytes) std::printf(" (%.3f bits per character)", std::log2(ppl));
  std::printf("\n");
  std::fflush(stdout);
}

double Trainer::validation_perplexity() {
  const int B = o_.batch, T = o_.bptt;
  const Streams streams(corpus_.valid, size_ * B, rank_ * B, B);
  int64_t steps = streams.steps_per_epoch(T);
  if (o_.valid_tokens > 0) {
    steps = std::min<int64_t>(steps, std::max<int64_t>(1, o_.valid_tokens / (size_ * B * T)));
  }
  // A full softmax reads every output row: sharded tables are gathered whole for it.
  WholeModel whole;
  if (!whole_model(true, false, &whole)) return NAN;
  const Model* m = whole.model;
  State state = m->zero_state(B);
  std::vector<int32_t> inputs, targets;
  double loss = 0;
  for (int64_t k = 0; k < steps; ++k) {
    streams.batch(k, T, &inputs, &targets);
    loss += m->eval_batch(m->tables(), &state, inputs, targets, B, T);
  }
  // Summed in two fp32 parts, so the total keeps its precision.
  const float hi = static_cast<float>(loss);
  float shared[3] = {hi, static_cast<float>(loss - hi), static_cast<float>(steps * B * T)};
  if (sync_->sum(shared, 3) != zfcSuccess || shared[2] == 0) return NAN;
  return std::exp((static_cast<double>(shared[0]) + shared[1]) / shared[2]);
}

double Trainer::unigram_perplexity() const {
  std::vector<double> counts(static_cast<size_t>(corpus_.vocab.size()), 0.0);
  for (int32_t t : corpus_.train) counts[static_cast<size_t>(t)] += 1;
  const double total = static_cast<double>(corpus_.train.size());
  double nll = 0;
  size_t n = 0;
  for (int32_t t : corpus_.valid) {
    const double c = counts[static_cast<size_t>(t)];
    if (c == 0) continue;  // a byte never seen in training (char mode) has no estimate
    nll -= std::log(c / total);
    ++n;
  }
  return n > 0 ? std::exp(nll / static_cast<double>(n)) : NAN;
}

void Trainer::generate(int n) {
  if (n <= 0) return;
  WholeModel whole;
  if (!whole_model(rank_ == 0, false, &whole) || rank_ != 0) return;
  const Model* m = whole.model;
  State state = m->zero_state(1);
  uint64_t rng = o_.seed * 0x9e3779b97f4a7c15ull + 7;
  int32_t token = corpus_.vocab.bytes ? '\n' : corpus_.vocab.eos;
  std::string text;
  for (int i = 0; i < n; ++i) {
    const std::vector<float> p = m->next_distribution(&state, token);
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    const double u = static_cast<double>(rng >> 11) / 9007199254740992.0;
    double acc = 0;
    token = static_cast<int32_t>(p.size()) - 1;
    for (size_t k = 0; k < p.size(); ++k) {
      if ((acc += p[k]) > u) { token = static_cast<int32_t>(k); break; }
    }
    const std::string w = corpus_.vocab.spell(token);
    text += corpus_.vocab.bytes || w == "\n" || text.empty() || text.back() == '\n' ? w : " " + w;
  }
  std::printf("---- %d sampled %s ----\n%s\n----\n", n, corpus_.vocab.bytes ? "bytes" : "words",
              text.c_str());
}

bool Trainer::save(const std::string& path) {
  if (saved_step_ == step_ && saved_path_ == path) return true;
  Progress p;
  p.step = step_;
  p.epoch = epoch_;
  p.position = position_;
  p.ranks = size_;
  p.batch = o_.batch;
  p.bptt = o_.bptt;
  if (gather_states(sync_.get(), flatten_state(state_), rank_, size_, &p.states) !=
      zfcSuccess) {
    std::fprintf(stderr, "rank %d: gathering the recurrent state failed: %s\n", rank_,
                 zfcGetLastError(comm_));
    return false;
  }
  // Rank 0 writes, whole tables (gathered, when sharded); every rank learns whether it could.
  WholeModel whole;
  if (!whole_model(rank_ == 0, true, &whole)) return false;
  float failed = rank_ == 0 && !save_checkpoint(path, *whole.model, corpus_.vocab,
                                                o_.optimizer, *whole.opt, p) ? 1.0f : 0.0f;
  if (sync_->sum(&failed, 1) != zfcSuccess || failed != 0) return false;
  saved_step_ = step_;
  saved_path_ = path;
  return true;
}

}  // namespace lm
