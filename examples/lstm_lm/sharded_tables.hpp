// The embedding tables split by rows across the ranks (--tables sharded). Each rank stores
// the rows it owns (zfcShardRows, zfcShardLocate) and, with Adagrad, their accumulators:
// V x D / G values per table instead of V x D. A step fetches the rows of its batch's
// distinct words (GradientSync::fetch_rows, zfcShardedGather) and sends their summed
// gradients to the owners, which update their rows (zfcShardedReduceApply in the step's
// group). The input table is always sharded; the output table only with sampled softmax,
// since a full softmax reads every row of it at every step.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model.hpp"
#include "optimizer.hpp"
#include "zipfcoll/zipfcoll.h"

namespace lm {

// This rank's rows of one table: shard_rows x width, and the Adagrad accumulators beside
// them (empty with SGD).
struct TableShard {
  size_t width = 0;
  size_t shard_rows = 0;
  std::vector<float> rows, state;
  float* state_or_null() { return state.empty() ? nullptr : state.data(); }
};

class ShardedTables {
 public:
  // Local: the layout of this rank's shards over comm; the rows are zero until filled.
  ShardedTables(zfcComm_t comm, const ModelShape& shape, bool out_sharded, bool adagrad);

  // Local: the rows this rank owns as Model(shape, seed, init_scale) would start them.
  void fill_fresh(uint64_t seed, float init_scale);
  // Local: this rank's rows (and accumulators) of whole tables, a loaded checkpoint's.
  void cut_from(const Model& whole, const Optimizer& opt);
  // Collective: on ranks with `want`, the whole sharded tables are written into m's (and,
  // with_state, their accumulators into opt's), resized; other ranks receive nothing (m and
  // opt may be NULL there). with_state must be alike on every rank. Rows travel
  // uncompressed, so they are the shards' bits. Returns the library's code; *error gets its
  // message.
  zfcResult_t assemble(bool want, bool with_state, Model* m, Optimizer* opt,
                       std::string* error) const;
  // Local: empties m's and opt's copies of the sharded tables (the shards hold them).
  void drop_whole(Model* m, Optimizer* opt) const;
  // Bytes of the sharded tables' rows and accumulators: this rank's, and whole.
  size_t bytes() const;
  size_t whole_bytes() const;

  bool out_sharded() const { return out_sharded_; }

  TableShard in, out;  // out is empty unless out_sharded()

 private:
  zfcComm_t comm_;
  ModelShape shape_;
  bool out_sharded_;
  int rank_ = 0, size_ = 1;
};

}  // namespace lm
