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

GradientSync::GradientSync(zfcComm_t comm, const Options& o, const ModelShape& shape)
    : comm_(comm), compression_(o.compression) {
  zfcCommCount(comm, &ranks_);
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

zfcResult_t GradientSync::sync(const std::vector<int32_t>& inputs, Gradients* g,
                               SyncedGradients* out, std::string* error) {
  auto failed = [&](zfcResult_t r) {
    *error = zfcGetLastError(comm_);
    return r;
  };
  int over = 0, any_over = 0;
  auto t = Clock::now();
  zfcResult_t r = zfcAllReduce(comm_, g->dense.data(), g->dense.data(), g->dense.size(),
                               zfcFloat32, &compression_, &over, nullptr);
  if (r != zfcSuccess) return failed(r);
  out->dense_s = seconds_since(t);
  any_over |= over;
  t = Clock::now();
  zfcSparseResult_t in = ZFC_SPARSE_RESULT_INITIALIZER;
  r = zfcSparseReduce(in_plan_, inputs.data(), inputs.size(), g->in_rows.data(), &in, nullptr);
  if (r != zfcSuccess) return failed(r);
  out->in_s = seconds_since(t);
  any_over |= in.overflowed;
  out->in = RowGrad{static_cast<const int32_t*>(in.indices), in.rows, in.num_unique};
  out->in_algorithm = in.algorithm;
  out->in_tokens_global = inputs.size() * static_cast<size_t>(ranks_);
  t = Clock::now();
  if (out_plan_ != nullptr) {
    zfcSparseResult_t o = ZFC_SPARSE_RESULT_INITIALIZER;
    r = zfcSparseReduce(out_plan_, g->out_indices.data(), g->out_indices.size(),
                        g->out_rows.data(), &o, nullptr);
    if (r != zfcSuccess) return failed(r);
    any_over |= o.overflowed;
    out->out = RowGrad{static_cast<const int32_t*>(o.indices), o.rows, o.num_unique};
    out->out_algorithm = o.algorithm;
    out->out_dense = nullptr;
  } else {
    r = zfcAllReduce(comm_, g->out_dense.data(), g->out_dense.data(), g->out_dense.size(),
                     zfcFloat32, &compression_, &over, nullptr);
    if (r != zfcSuccess) return failed(r);
    any_over |= over;
    out->out = RowGrad{};
    out->out_algorithm = -1;
    out->out_dense = &g->out_dense;
  }
  out->out_s = seconds_since(t);
  // Every rank sees every overflow flag (the library reports them on every rank).
  out->overflowed = any_over != 0;
  return zfcSuccess;
}

}  // namespace lm
