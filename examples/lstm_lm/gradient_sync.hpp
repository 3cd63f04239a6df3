// Every gradient goes through zipfcoll: the dense LSTM weights by zfcAllReduce, the input
// embedding and (with sampled softmax) the output embedding by a sparse plan each, and a
// dense output embedding (full softmax) by zfcAllReduce; the step's scalars (loss, tokens)
// by a small zfcAllReduce. With --group on (the default) all of them are one grouped call
// (zfcGroupStart/zfcGroupEnd): one agreement, and the scalars ride in its first exchange.
// The library's results are the same bits on every rank, and grouped or not, so every
// rank's update is the same. With sharded tables (sharded_tables.hpp) the embeddings' plans
// instead fetch the batch's rows before the step and, in the group, send the gradients to
// the rows' owners, which update them there.
#pragma once

#include <string>
#include <vector>

#include "model.hpp"
#include "optimizer.hpp"
#include "options.hpp"
#include "sharded_tables.hpp"
#include "zipfcoll/zipfcoll.h"

namespace lm {

struct SyncedGradients {
  RowGrad in;                                  // the input embedding's distinct rows
  RowGrad out;                                 // sampled: the output embedding's
  const std::vector<float>* out_dense = nullptr;  // full: the synced V x (D+1) table
  bool overflowed = false;                     // compressed wire overflowed on some rank
  size_t in_tokens_global = 0;                 // G * K, for U_g / (G K)
  int in_algorithm = -1;                       // the zfcAlgorithm_t each plan ran (auto's
  int out_algorithm = -1;                      // choice; -1: a dense allreduce)
  double dense_s = 0;                          // this rank's seconds in each collective:
  double in_s = 0;                             // the dense weights' allreduce, the input
  double out_s = 0;                            // plan, the output plan (or allreduce); a
                                               // group's are all in dense_s
};

// A batch's rows of sharded tables: each id of the batch became its place among the rows.
struct FetchedRows {
  const float* in = nullptr;          // the distinct input words' rows (U_i x D)
  const float* out = nullptr;         // the distinct output ids' rows (x (D+1)), or NULL
  std::vector<int32_t> in_places;     // per input token
  std::vector<int32_t> out_places;    // per output id (targets, then candidates)
  size_t in_unique = 0;               // U_i of the input words
  int algorithm = -1;                 // what the lookups ran
};

class GradientSync {
 public:
  // Collective over comm (creates the plans). With `tables`, the embeddings are sharded
  // there (it outlives this).
  GradientSync(zfcComm_t comm, const Options& o, const ModelShape& shape,
               ShardedTables* tables = nullptr);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Collective, sharded tables only: the current rows of the batch's input words and (with
  // a sharded output table) of out_ids, in one group. The rows are owned by the plans until
  // their next call. Returns the library's code; *error gets its message.
  zfcResult_t fetch_rows(const std::vector<int32_t>& inputs, const std::vector<int32_t>& out_ids,
                         FetchedRows* f, std::string* error);
  // Collective. Sums g over ranks (dense parts in place) and the n scalars in place (fp32,
  // no compression); inputs are the batch's input ids. Result rows are owned by the plans
  // until the next call. With sharded tables their rows get `update` on their owners
  // instead (g->out_indices must then hold words), unless something overflowed, and
  // `out` holds no rows of them. Returns the library's code; *error gets its message.
  zfcResult_t sync(const std::vector<int32_t>& inputs, Gradients* g, float* scalars, size_t n,
                   const zfcRowUpdate_t& update, SyncedGradients* out, std::string* error);
  // Collective: sums n floats in place (fp32, no compression).
  zfcResult_t sum(float* v, size_t n);

 private:
  zfcResult_t sync_input(const std::vector<int32_t>& inputs, const Gradients& g,
                         const zfcRowUpdate_t& update, zfcSparseResult_t* res, int* over);
  zfcResult_t sync_output(Gradients* g, const zfcRowUpdate_t& update, zfcSparseResult_t* res,
                          int* over);
  // With --error-feedback, the residual of an allreduce of n values (zeros at first); NULL
  // without.
  float* residual_for(std::vector<float>* residual, size_t n);

  zfcComm_t comm_;
  zfcCompression_t compression_;
  bool grouped_ = true;
  // --error-feedback: the residuals of the dense weights' allreduce and of a dense output
  // table's (zfcAllReduceWithResidual), 4 bytes per weight, made at the first step.
  bool error_feedback_ = false;
  std::vector<float> dense_residual_, out_residual_;
  zfcSparsePlan_t in_plan_ = nullptr;
  zfcSparsePlan_t out_plan_ = nullptr;
  ShardedTables* tables_ = nullptr;
  int ranks_ = 1;
};

}  // namespace lm
