// The trainer's part of sharded tables (--tables sharded, sharded_tables.hpp): making
// them, fetching a batch's rows, and whole tables for validation, sampling and checkpoints.
#include <algorithm>
#include <cstdio>
#include <string>

#include "trainer.hpp"

namespace lm {

// --tables sharded: this rank's rows of the input table, and of the output table with a
// sampled softmax; a full softmax reads all of the output table, which stays whole here.
void Trainer::make_sharded_tables() {
  const ModelShape& shape = model_.shape();
  const bool out_sharded = o_.softmax == SoftmaxKind::kSampled;
  tables_ = std::make_unique<ShardedTables>(comm_, shape, out_sharded,
                                            o_.optimizer == OptimizerKind::kAdagrad);
  tables_->fill_fresh(o_.seed, o_.init_scale);
  if (out_sharded) return;
  const size_t W = static_cast<size_t>(shape.dim) + 1;
  model_.emb_out.resize(static_cast<size_t>(shape.vocab) * W);
  for (int64_t v = 0; v < shape.vocab; ++v) {
    float* row = model_.emb_out.data() + static_cast<size_t>(v) * W;
    initial_row_out(shape, o_.seed, o_.init_scale, v, row);
  }
}

bool Trainer::fetch_batch_rows(OutputSpec* spec, Embeddings* emb) {
  const bool out_sharded = tables_->out_sharded();
  out_ids_.clear();
  if (out_sharded) {
    out_ids_ = targets_;
    for (int64_t s : spec->samples) out_ids_.push_back(static_cast<int32_t>(s));
  }
  std::string why;
  if (sync_->fetch_rows(inputs_, out_ids_, &fetched_, &why) != zfcSuccess) {
    std::fprintf(stderr, "rank %d: fetching the batch's rows failed: %s\n", rank_,
                 why.c_str());
    return false;
  }
  // The model reads rows by place: a bijection of the batch's words, so equal ids (a
  // candidate that is the target) stay equal.
  emb->in = fetched_.in;
  if (out_sharded) {
    emb->out = fetched_.out;
    const size_t n = targets_.size();
    target_places_.assign(fetched_.out_places.begin(), fetched_.out_places.begin() + n);
    for (size_t s = 0; s < spec->samples.size(); ++s) {
      spec->samples[s] = fetched_.out_places[n + s];
    }
  }
  return true;
}

bool Trainer::whole_model(bool want, bool with_state, WholeModel* w) {
  if (!tables_) {
    w->model = &model_;
    w->opt = opt_.get();
    return true;
  }
  if (want) {
    w->copy = model_;
    if (with_state) w->opt_copy = std::make_unique<Optimizer>(*opt_);
  }
  std::string why;
  if (tables_->assemble(want, with_state, &w->copy, w->opt_copy.get(), &why) != zfcSuccess) {
    std::fprintf(stderr, "rank %d: gathering the sharded tables failed: %s\n", rank_,
                 why.c_str());
    return false;
  }
  if (want) {
    w->model = &w->copy;
    w->opt = with_state ? w->opt_copy.get() : opt_.get();
  }
  return true;
}

}  // namespace lm
