#include "exec/local_ops.hpp"

#include "exec/device_local_ops.hpp"
#include "kernels/index_keys.hpp"
#include "kernels/rows.hpp"

namespace zfc {
namespace exec {
namespace {

// Every index below the vocabulary, checked before a row is written.
Status check_indices(const void* indices, zfcDataType_t index_type, size_t n, int64_t vocab) {
  const kernels::BadIndex bad = kernels::find_bad_index(indices, index_type, n, vocab);
  if (!bad.found) return Status::Ok();
  return error(zfcInvalidArgument, "indices[%zu] = %lld is outside [0, %lld)", bad.position,
               static_cast<long long>(bad.value), static_cast<long long>(vocab));
}

}  // namespace

Status scatter_to_dense(MemorySpace space, const void* rows, zfcDataType_t row_type,
                        const int32_t* positions, size_t count, size_t dim, float* dense,
                        size_t num_unique, void* stream) {
  if (space == MemorySpace::kDevice) {
    return scatter_to_dense_on_device(rows, row_type, positions, count, dim, dense,
                                      num_unique, stream);
  }
  const size_t bad = kernels::find_bad_position(positions, count, num_unique);
  if (bad < count) {
    return error(zfcInvalidArgument, "positions[%zu] = %d is outside [0, %zu)", bad,
                 positions[bad], num_unique);
  }
  if (count > 0 && dim > 0) {
    kernels::scatter_rows_to_zeroed(rows, row_type, positions, count, dim, dense, num_unique);
  } else {
    kernels::zero_rows(dense, num_unique, dim);
  }
  return Status::Ok();
}

Status apply_rows(MemorySpace space, float* table, int64_t vocab_size, size_t dim,
                  const void* indices, zfcDataType_t index_type, const float* rows,
                  size_t num_rows, float alpha, void* stream) {
  if (space == MemorySpace::kDevice) {
    kernels::RowUpdate add;
    add.alpha = alpha;
    return update_rows_on_device(table, nullptr, vocab_size, dim, indices, index_type, rows,
                                 num_rows, add, stream);
  }
  ZFC_RETURN_IF_ERROR(check_indices(indices, index_type, num_rows, vocab_size));
  if (dim > 0) kernels::apply_rows(table, dim, indices, index_type, rows, num_rows, alpha);
  return Status::Ok();
}

Status apply_update(MemorySpace space, float* table, float* state, size_t dim,
                    int64_t vocab_size, const void* indices, zfcDataType_t index_type,
                    const float* rows, size_t num_rows, const kernels::RowUpdate& u,
                    void* stream) {
  if (space == MemorySpace::kDevice) {
    return update_rows_on_device(table, state, vocab_size, dim, indices, index_type, rows,
                                 num_rows, u, stream);
  }
  ZFC_RETURN_IF_ERROR(check_indices(indices, index_type, num_rows, vocab_size));
  if (dim > 0) kernels::update_rows(table, state, dim, indices, index_type, rows, num_rows, u);
  return Status::Ok();
}

}  // namespace exec
}  // namespace zfc
