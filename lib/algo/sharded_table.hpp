// The collectives of a sharded embedding table (zfcShardedGather, zfcShardedReduceApply):
// rows live on their owners (algo/shard_layout.hpp), and each rank exchanges only the rows of
// its own distinct ids with them, O(U_i * dim) bytes each way whatever the rank count.
#pragma once

#include "algo/sparse_reduce.hpp"
#include "kernels/row_update.hpp"

namespace zfc {

// A shard as the caller passes it: `rows` x dim fp32 (and, for Adagrad, the state beside it).
struct ShardBuffers {
  float* table = nullptr;
  float* state = nullptr;
  size_t rows = 0;
};

// Collective, or recorded when a group is open on the plan's communicator. `caller_check`
// is what the entry point found wrong with its own arguments (agreed like every other check).
// On success *out points into the plan's workspace and positions (when not NULL) holds each
// token's place among this rank's distinct ids.
Status sharded_gather(zfcSparsePlan& plan, const ShardBuffers& shard, const void* indices,
                      size_t count, const Status& caller_check, zfcSparseResult_t* out,
                      int32_t* positions, const void* stream);

// Collective, or recorded. `update` is already parsed (or caller_check says why not). On
// success the shard is updated unless some owner's sum is not finite; *overflowed (may be
// NULL) says which.
Status sharded_reduce_apply(zfcSparsePlan& plan, const void* indices, size_t count,
                            const void* rows, const kernels::RowUpdate& update,
                            const ShardBuffers& shard, const Status& caller_check,
                            int* overflowed, const void* stream);

}  // namespace zfc
