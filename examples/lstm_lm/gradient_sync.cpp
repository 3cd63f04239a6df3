#include "gradient_sync.hpp"

#include <stdexcept>

#include "stopwatch.hpp"

namespace lm {
namespace {

zfcSparsePlan_t make_plan(zfcComm_t comm, const Options& o, int64_t vocab, size_t dim) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = dim;
  cfg.vocab_size = vocab;
  cfg.index_type = zfcInt32;
  cfg.algorithm = o.sync;
  cfg.compression = o.compression.kind;
  cfg.compress_scale = o.compression.scale;
  zfcSparsePlan_t plan = nullptr;
  if (zfcSparsePlanCreate(comm, &cfg, &plan) != zfcSuccess) {
    throw std::runtime_error(std::string("zfcSparsePlanCreate: ") + zfcGetLastError(comm));
  }
  return plan;
}

}  // namespace

float* GradientSync::residual_for(std::vector<float>* residual, size_t n) {
  if (!error_feedback_) return nullptr;
  if (residual->size() != n) residual->assign(n, 0.0f);
  return residual->data();
}

GradientSync::GradientSync(zfcComm_t comm, const Options& o, const ModelShape& shape,
                           ShardedTables* tables)
    : comm_(comm), compression_(o.compression), grouped_(o.group), tables_(tables) {
  zfcCommCount(comm, &ranks_);
  error_feedback_ = o.error_feedback;
  in_plan_ = make_plan(comm, o, shape.vocab, static_cast<size_t>(shape.dim));
  if (o.softmax == SoftmaxKind::kSampled) {
    out_plan_ = make_plan(comm, o, shape.vocab, static_cast<size_t>(shape.dim) + 1);
  }
}

GradientSync::~GradientSync() {
  zfcSparsePlanDestroy(out_plan_);
  zfcSparsePlanDestroy(in_plan_);
}

zfcResult_t GradientSync::sum(float* v, size_t n) {
  return zfcAllReduce(comm_, v, v, n, zfcFloat32, nullptr, nullptr, nullptr);
}

zfcResult_t GradientSync::fetch_rows(const std::vector<int32_t>& inputs,
                                     const std::vector<int32_t>& out_ids, FetchedRows* f,
                                     std::string* error) {
  const bool with_out = tables_->out_sharded();
  zfcSparseResult_t in = ZFC_SPARSE_RESULT_INITIALIZER, o = ZFC_SPARSE_RESULT_INITIALIZER;
  f->in_places.resize(inputs.size());
  f->out_places.resize(with_out ? out_ids.size() : 0);
  zfcResult_t r = zfcGroupStart(comm_);
  if (r == zfcSuccess) {
    r = zfcShardedGather(in_plan_, tables_->in.rows.data(), tables_->in.shard_rows,
                         inputs.data(), inputs.size(), &in, f->in_places.data(), nullptr);
    if (r == zfcSuccess && with_out) {
      r = zfcShardedGather(out_plan_, tables_->out.rows.data(), tables_->out.shard_rows,
                           out_ids.data(), out_ids.size(), &o, f->out_places.data(), nullptr);
    }
    const zfcResult_t end = zfcGroupEnd(comm_);  // closes the group even after a failure
    if (r == zfcSuccess) r = end;
  }
  if (r != zfcSuccess) {
    *error = zfcGetLastError(comm_);
    return r;
  }
  f->in = in.rows;
  f->in_unique = in.num_unique;
  f->out = with_out ? o.rows : nullptr;
  f->algorithm = in.algorithm;
  return zfcSuccess;
}

// The input embedding's part of a sync: reduced rows into *res, or, sharded, the owners'
// update of their rows (*over: whether it was left out for an overflow).
zfcResult_t GradientSync::sync_input(const std::vector<int32_t>& inputs, const Gradients& g,
                                     const zfcRowUpdate_t& update, zfcSparseResult_t* res,
                                     int* over) {
  if (tables_ == nullptr) {
    return zfcSparseReduce(in_plan_, inputs.data(), inputs.size(), g.in_rows.data(), res,
                           nullptr);
  }
  res->algorithm = zfcAlgoKeyRouted;
  TableShard& t = tables_->in;
  return zfcShardedReduceApply(in_plan_, inputs.data(), inputs.size(), g.in_rows.data(),
                               &update, t.rows.data(), t.state_or_null(), t.shard_rows, over,
                               nullptr);
}

// The output embedding's part: as sync_input with a sampled softmax, else the dense table's
// allreduce in place.
zfcResult_t GradientSync::sync_output(Gradients* g, const zfcRowUpdate_t& update,
                                      zfcSparseResult_t* res, int* over) {
  if (out_plan_ == nullptr) {
    return zfcAllReduceWithResidual(comm_, g->out_dense.data(), g->out_dense.data(),
                                    g->out_dense.size(), zfcFloat32, &compression_,
                                    residual_for(&out_residual_, g->out_dense.size()), over,
                                    nullptr);
  }
  if (tables_ == nullptr || !tables_->out_sharded()) {
    return zfcSparseReduce(out_plan_, g->out_indices.data(), g->out_indices.size(),
                           g->out_rows.data(), res, nullptr);
  }
  res->algorithm = zfcAlgoKeyRouted;
  TableShard& t = tables_->out;
  return zfcShardedReduceApply(out_plan_, g->out_indices.data(), g->out_indices.size(),
                               g->out_rows.data(), &update, t.rows.data(), t.state_or_null(),
                               t.shard_rows, over, nullptr);
}

zfcResult_t GradientSync::sync(const std::vector<int32_t>& inputs, Gradients* g,
                               float* scalars, size_t n, const zfcRowUpdate_t& update,
                               SyncedGradients* out, std::string* error) {
  auto failed = [&](zfcResult_t r) {
    *error = zfcGetLastError(comm_);
    if (grouped_) zfcGroupEnd(comm_);  // closes the group; the calls are dropped with it
    return r;
  };
  const auto start = Clock::now();
  // Grouped, the calls below only record, and their outputs are written by zfcGroupEnd.
  if (grouped_) {
    const zfcResult_t r = zfcGroupStart(comm_);
    if (r != zfcSuccess) {
      *error = zfcGetLastError(comm_);
      return r;
    }
  }
  int dense_over = 0, in_over = 0, out_over = 0, scalars_over = 0;
  zfcSparseResult_t in = ZFC_SPARSE_RESULT_INITIALIZER, o = ZFC_SPARSE_RESULT_INITIALIZER;
  auto t = Clock::now();
  zfcResult_t r = zfcAllReduceWithResidual(comm_, g->dense.data(), g->dense.data(),
                                           g->dense.size(), zfcFloat32, &compression_,
                                           residual_for(&dense_residual_, g->dense.size()),
                                           &dense_over, nullptr);
  if (r != zfcSuccess) return failed(r);
  out->dense_s = seconds_since(t);
  t = Clock::now();
  if ((r = sync_input(inputs, *g, update, &in, &in_over)) != zfcSuccess) return failed(r);
  out->in_s = seconds_since(t);
  t = Clock::now();
  if ((r = sync_output(g, update, &o, &out_over)) != zfcSuccess) return failed(r);
  out->out_s = seconds_since(t);
  // A loss that is not finite skips the step too (grouped, the library then leaves sharded
  // tables as they were), whatever the tables' layout.
  r = zfcAllReduce(comm_, scalars, scalars, n, zfcFloat32, nullptr, &scalars_over, nullptr);
  if (r != zfcSuccess) return failed(r);
  if (grouped_) {
    r = zfcGroupEnd(comm_);
    if (r != zfcSuccess) {
      *error = zfcGetLastError(comm_);
      return r;
    }
    out->dense_s = seconds_since(start);  // the whole group: its calls are not timed apart
    out->in_s = out->out_s = 0;
  }
  // Rows of sharded tables stay with their owners: none to hand on (in.rows is NULL).
  out->in = RowGrad{static_cast<const int32_t*>(in.indices), in.rows, in.num_unique};
  out->in_algorithm = in.algorithm;
  out->in_tokens_global = inputs.size() * static_cast<size_t>(ranks_);
  if (out_plan_ != nullptr) {
    out->out = RowGrad{static_cast<const int32_t*>(o.indices), o.rows, o.num_unique};
    out->out_algorithm = o.algorithm;
    out->out_dense = nullptr;
  } else {
    out->out = RowGrad{};
    out->out_algorithm = -1;
    out->out_dense = &g->out_dense;
  }
  // Every rank sees every overflow flag (the library reports them on every rank).
  out->overflowed = dense_over != 0 || in.overflowed != 0 || o.overflowed != 0 ||
                    in_over != 0 || out_over != 0 || scalars_over != 0;
  return zfcSuccess;
}

}  // namespace lm
