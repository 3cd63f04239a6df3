// Sharded embedding tables: the layout and the two collectives (their update's replicated
// twin, zfcApplyUpdate, is with zfcApplyRows in ops_api.cpp).
#include "algo/shard_layout.hpp"
#include "algo/sharded_table.hpp"
#include "api/api_guard.hpp"
#include "kernels/row_update.hpp"

using zfc::error;
using zfc::Status;

namespace {

Status check_layout(int64_t vocab_size, int ranks) {
  if (vocab_size <= 0) {
    return error(zfcInvalidArgument, "vocab_size %lld must be > 0",
                 static_cast<long long>(vocab_size));
  }
  if (ranks <= 0) return error(zfcInvalidArgument, "ranks %d must be > 0", ranks);
  return Status::Ok();
}

}  // namespace

extern "C" {

zfcResult_t zfcShardRows(int64_t vocab_size, int ranks, int rank, size_t* shard_rows) {
  return zfc::guarded(nullptr, [&]() -> Status {
    ZFC_RETURN_IF_ERROR(check_layout(vocab_size, ranks));
    if (rank < 0 || rank >= ranks) {
      return error(zfcInvalidArgument, "rank %d is outside [0, %d)", rank, ranks);
    }
    if (shard_rows == nullptr) return zfc::null_handle("shard_rows");
    *shard_rows = static_cast<size_t>(zfc::shard_row_count(vocab_size, ranks, rank));
    return Status::Ok();
  });
}

zfcResult_t zfcShardLocate(int64_t vocab_size, int ranks, int64_t index, int* owner,
                           size_t* row) {
  return zfc::guarded(nullptr, [&]() -> Status {
    ZFC_RETURN_IF_ERROR(check_layout(vocab_size, ranks));
    if (index < 0 || index >= vocab_size) {
      return error(zfcInvalidArgument, "index %lld is outside [0, %lld)",
                   static_cast<long long>(index), static_cast<long long>(vocab_size));
    }
    const uint64_t key = static_cast<uint64_t>(index);
    if (owner != nullptr) *owner = zfc::key_owner(key, ranks);
    if (row != nullptr) *row = static_cast<size_t>(zfc::shard_local_row(key, ranks));
    return Status::Ok();
  });
}

zfcResult_t zfcShardedGather(zfcSparsePlan_t plan, const float* shard, size_t shard_rows,
                             const void* indices, size_t count, zfcSparseResult_t* out,
                             int32_t* positions, void* stream) {
  zfcComm* comm = plan != nullptr ? plan->comm : nullptr;
  return zfc::guarded(comm, [&]() -> Status {
    if (plan == nullptr) return zfc::null_handle("plan");
    const Status check = zfc::check_result_struct(out);
    const zfc::ShardBuffers buffers{const_cast<float*>(shard), nullptr, shard_rows};
    return zfc::sharded_gather(*plan, buffers, indices, count, check, out, positions, stream);
  });
}

zfcResult_t zfcShardedReduceApply(zfcSparsePlan_t plan, const void* indices, size_t count,
                                  const void* rows, const zfcRowUpdate_t* update, float* shard,
                                  float* state, size_t shard_rows, int* overflowed,
                                  void* stream) {
  zfcComm* comm = plan != nullptr ? plan->comm : nullptr;
  return zfc::guarded(comm, [&]() -> Status {
    if (plan == nullptr) return zfc::null_handle("plan");
    zfc::kernels::RowUpdate u;
    const Status check = zfc::kernels::parse_row_update(update, &u);
    const zfc::ShardBuffers buffers{shard, state, shard_rows};
    return zfc::sharded_reduce_apply(*plan, indices, count, rows, u, buffers, check,
                                     overflowed, stream);
  });
}

}  // extern "C"
