// The operations: collectives on host buffers; the local ones on host or device buffers.
#include "algo/allreduce_call.hpp"
#include "algo/call_group.hpp"
#include "algo/collectives.hpp"
#include "api/api_guard.hpp"
#include "exec/memory_space.hpp"
#include "exec/local_ops.hpp"
#include "kernels/row_update.hpp"

using zfc::error;
using zfc::Status;

namespace {

// What zfcApplyRows and zfcApplyUpdate check before any row is read: the index type and
// vocabulary, and, when there are rows, that the buffers are there. Indices are checked even
// when dim is 0 and nothing would be written: a bad index is a bug in the caller either way.
Status check_row_targets(const float* table, int64_t vocab_size, size_t dim,
                         const void* indices, zfcDataType_t index_type, const float* rows,
                         size_t num_rows) {
  ZFC_RETURN_IF_ERROR(zfc::check_index_space(index_type, vocab_size));
  if (num_rows == 0) return Status::Ok();
  if (indices == nullptr) return zfc::null_handle("indices");
  if (dim > 0 && table == nullptr) return zfc::null_handle("table");
  if (dim > 0 && rows == nullptr) return zfc::null_handle("rows");
  return Status::Ok();
}

}  // namespace

extern "C" {

zfcResult_t zfcUniqueMerge(zfcComm_t comm, const void* indices, zfcDataType_t index_type,
                           size_t count, int64_t vocab_size, void* unique_out,
                           size_t unique_capacity, size_t* num_unique, int32_t* positions,
                           void* stream) {
  return zfc::guarded(comm, [&] {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (comm->group_depth > 0) return zfc::refuse_in_group(*comm, "zfcUniqueMerge");
    return zfc::unique_merge(*comm, indices, index_type, count, vocab_size, unique_out,
                             unique_capacity, num_unique, positions, stream);
  });
}

zfcResult_t zfcAllReduce(zfcComm_t comm, const void* send, void* recv, size_t count,
                         zfcDataType_t type, const zfcCompression_t* how, int* overflowed,
                         void* stream) {
  return zfc::guarded(comm, [&] {
    if (comm == nullptr) return zfc::null_handle("comm");
    return zfc::allreduce(*comm, send, recv, count, type, how, overflowed, stream);
  });
}

zfcResult_t zfcAllReduceWithResidual(zfcComm_t comm, const void* send, void* recv,
                                     size_t count, zfcDataType_t type,
                                     const zfcCompression_t* how, float* residual,
                                     int* overflowed, void* stream) {
  return zfc::guarded(comm, [&] {
    if (comm == nullptr) return zfc::null_handle("comm");
    return zfc::allreduce(*comm, send, recv, count, type, how, overflowed, stream, residual);
  });
}

zfcResult_t zfcScatterToDense(const void* rows, zfcDataType_t row_type,
                              const int32_t* positions, size_t count, size_t dim, float* dense,
                              size_t num_unique, void* stream) {
  return zfc::guarded(nullptr, [&]() -> Status {
    zfc::MemorySpace space = zfc::MemorySpace::kHost;
    ZFC_RETURN_IF_ERROR(zfc::resolve_memory_space(
        {{"rows", rows}, {"positions", positions}, {"dense", dense}}, stream, &space));
    if (row_type != zfcFloat32 && row_type != zfcFloat16 && row_type != zfcBFloat16) {
      return error(zfcInvalidArgument,
                   "row_type %d must be zfcFloat32, zfcFloat16 or zfcBFloat16",
                   static_cast<int>(row_type));
    }
    const bool has_rows = count > 0 && dim > 0;
    if (has_rows && rows == nullptr) {
      return error(zfcInvalidArgument, "rows is NULL with count %zu and dim %zu", count, dim);
    }
    if (count > 0 && positions == nullptr) {
      return error(zfcInvalidArgument, "positions is NULL with count %zu", count);
    }
    if (num_unique > 0 && dim > 0 && dense == nullptr) {
      return error(zfcInvalidArgument, "dense is NULL with num_unique %zu and dim %zu",
                   num_unique, dim);
    }
    return zfc::exec::scatter_to_dense(space, rows, row_type, positions, count, dim, dense,
                                       num_unique, stream);
  });
}

zfcResult_t zfcApplyRows(float* table, int64_t vocab_size, size_t dim, const void* indices,
                         zfcDataType_t index_type, const float* rows, size_t num_rows,
                         float alpha, void* stream) {
  return zfc::guarded(nullptr, [&]() -> Status {
    zfc::MemorySpace space = zfc::MemorySpace::kHost;
    ZFC_RETURN_IF_ERROR(zfc::resolve_memory_space(
        {{"table", table}, {"indices", indices}, {"rows", rows}}, stream, &space));
    ZFC_RETURN_IF_ERROR(check_row_targets(table, vocab_size, dim, indices, index_type, rows,
                                          num_rows));
    if (num_rows == 0) return Status::Ok();
    return zfc::exec::apply_rows(space, table, vocab_size, dim, indices, index_type, rows,
                                 num_rows, alpha, stream);
  });
}

zfcResult_t zfcApplyUpdate(float* table, float* state, int64_t vocab_size, size_t dim,
                           const void* indices, zfcDataType_t index_type, const float* rows,
                           size_t num_rows, const zfcRowUpdate_t* update, void* stream) {
  return zfc::guarded(nullptr, [&]() -> Status {
    zfc::kernels::RowUpdate u;
    ZFC_RETURN_IF_ERROR(zfc::kernels::parse_row_update(update, &u));
    const bool with_state = zfc::kernels::update_has_state(u);
    zfc::MemorySpace space = zfc::MemorySpace::kHost;
    ZFC_RETURN_IF_ERROR(zfc::resolve_memory_space(
        {{"table", table}, {"state", with_state ? state : nullptr}, {"indices", indices},
         {"rows", rows}}, stream, &space));
    ZFC_RETURN_IF_ERROR(check_row_targets(table, vocab_size, dim, indices, index_type, rows,
                                          num_rows));
    if (num_rows == 0) return Status::Ok();
    if (dim > 0 && with_state && state == nullptr) {
      return error(zfcInvalidArgument, "state is NULL, but an Adagrad update needs the "
                   "accumulator rows");
    }
    return zfc::exec::apply_update(space, table, state, dim, vocab_size, indices, index_type,
                                   rows, num_rows, u, stream);
  });
}

}  // extern "C"
