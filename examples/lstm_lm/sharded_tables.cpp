#include "sharded_tables.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <stdexcept>

namespace lm {
namespace {

struct PlanDeleter {
  void operator()(zfcSparsePlan_t p) const { zfcSparsePlanDestroy(p); }
};
using PlanHandle = std::unique_ptr<zfcSparsePlan, PlanDeleter>;

// Calls f(word, row) for each word this rank owns and its row in the shard.
template <class F>
void for_owned(int64_t vocab, int size, int rank, F f) {
  for (int64_t v = 0; v < vocab; ++v) {
    int owner = -1;
    size_t row = 0;
    zfcShardLocate(vocab, size, v, &owner, &row);
    if (owner == rank) f(v, row);
  }
}

// Collective: the whole of one sharded table (V x width) into *whole on ranks with `want`.
// Its own plan, uncompressed, so that the rows are exact whatever the training plans send,
// and so that their workspace does not keep a whole table after the call.
zfcResult_t gather_whole(zfcComm_t comm, int64_t vocab, const float* shard, size_t shard_rows,
                         size_t width, const std::vector<int32_t>& words, bool want,
                         std::vector<float>* whole, std::string* error) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = width;
  cfg.vocab_size = vocab;
  cfg.index_type = zfcInt32;
  cfg.compression = zfcCompressNone;
  zfcSparsePlan_t raw = nullptr;
  zfcResult_t r = zfcSparsePlanCreate(comm, &cfg, &raw);
  PlanHandle plan(raw);
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  if (r == zfcSuccess) {
    r = zfcShardedGather(plan.get(), shard, shard_rows, words.data(),
                         want ? words.size() : 0, &out, nullptr, nullptr);
  }
  if (r != zfcSuccess) {
    *error = zfcGetLastError(comm);
    return r;
  }
  // Every word was asked for, so the distinct ones are 0..V-1 in order: the table itself.
  if (want) whole->assign(out.rows, out.rows + static_cast<size_t>(vocab) * width);
  return zfcSuccess;
}

}  // namespace

ShardedTables::ShardedTables(zfcComm_t comm, const ModelShape& shape, bool out_sharded,
                             bool adagrad)
    : comm_(comm), shape_(shape), out_sharded_(out_sharded) {
  zfcCommRank(comm, &rank_);
  zfcCommCount(comm, &size_);
  size_t rows = 0;
  if (zfcShardRows(shape.vocab, size_, rank_, &rows) != zfcSuccess) {
    throw std::runtime_error(std::string("zfcShardRows: ") + zfcGetLastError(nullptr));
  }
  auto shape_shard = [&](TableShard* t, size_t width) {
    t->width = width;
    t->shard_rows = rows;
    t->rows.assign(rows * width, 0.0f);
    if (adagrad) t->state.assign(rows * width, 0.0f);
  };
  const size_t D = static_cast<size_t>(shape.dim);
  shape_shard(&in, D);
  if (out_sharded) shape_shard(&out, D + 1);
}

void ShardedTables::fill_fresh(uint64_t seed, float init_scale) {
  const size_t D = in.width;
  for_owned(shape_.vocab, size_, rank_, [&](int64_t v, size_t row) {
    initial_row_in(shape_, seed, init_scale, v, in.rows.data() + row * D);
    if (out_sharded_) {
      initial_row_out(shape_, seed, init_scale, v, out.rows.data() + row * (D + 1));
    }
  });
}

void ShardedTables::cut_from(const Model& whole, const Optimizer& opt) {
  auto cut = [](const std::vector<float>& src, size_t width, int64_t v, size_t row,
                std::vector<float>* dst) {
    if (dst->empty()) return;
    std::copy_n(src.data() + static_cast<size_t>(v) * width, width, dst->data() + row * width);
  };
  for_owned(shape_.vocab, size_, rank_, [&](int64_t v, size_t row) {
    cut(whole.emb_in, in.width, v, row, &in.rows);
    cut(opt.acc_in, in.width, v, row, &in.state);
    if (!out_sharded_) return;
    cut(whole.emb_out, out.width, v, row, &out.rows);
    cut(opt.acc_out, out.width, v, row, &out.state);
  });
}

zfcResult_t ShardedTables::assemble(bool want, bool with_state, Model* m, Optimizer* opt,
                                    std::string* error) const {
  std::vector<int32_t> words(static_cast<size_t>(shape_.vocab));
  std::iota(words.begin(), words.end(), 0);
  auto whole = [&](const TableShard& t, const std::vector<float>& shard,
                   std::vector<float>* dst) {
    return gather_whole(comm_, shape_.vocab, shard.data(), t.shard_rows, t.width, words, want,
                        dst, error);
  };
  // Every rank makes the same calls; only those that want the tables get them.
  const bool states = with_state && !in.state.empty();
  zfcResult_t r = whole(in, in.rows, want ? &m->emb_in : nullptr);
  if (r == zfcSuccess && states) r = whole(in, in.state, want ? &opt->acc_in : nullptr);
  if (r == zfcSuccess && out_sharded_) r = whole(out, out.rows, want ? &m->emb_out : nullptr);
  if (r == zfcSuccess && out_sharded_ && states) {
    r = whole(out, out.state, want ? &opt->acc_out : nullptr);
  }
  return r;
}

void ShardedTables::drop_whole(Model* m, Optimizer* opt) const {
  std::vector<float>().swap(m->emb_in);
  std::vector<float>().swap(opt->acc_in);
  if (!out_sharded_) return;
  std::vector<float>().swap(m->emb_out);
  std::vector<float>().swap(opt->acc_out);
}

size_t ShardedTables::bytes() const {
  return sizeof(float) * (in.rows.size() + in.state.size() + out.rows.size() + out.state.size());
}

size_t ShardedTables::whole_bytes() const {
  const size_t copies = in.state.empty() ? 1 : 2;  // rows, and accumulators with Adagrad
  const size_t widths = in.width + (out_sharded_ ? out.width : 0);
  return sizeof(float) * copies * static_cast<size_t>(shape_.vocab) * widths;
}

}  // namespace lm
