#include "exec/device_local_ops.hpp"

#include "device_kernels.hpp"
#include "device_runtime.hpp"

namespace zfc {
namespace {

constexpr size_t kFlagBytes = 256;  // the device word a check writes, then CUB's scratch

Status check_count(const char* what, size_t n) {
  if (n > static_cast<size_t>(INT32_MAX)) {
    return error(zfcInvalidArgument, "%s %zu exceeds %d for device buffers", what, n,
                 INT32_MAX);
  }
  return Status::Ok();
}

// Reads the device word a find_bad_* kernel wrote (waits for the stream).
Status read_first_bad(const cuda::StreamScratch& scratch, void* stream, uint32_t* first_bad) {
  return cuda::copy_to_host(first_bad, scratch.data(), sizeof(uint32_t), stream);
}

}  // namespace

Status scatter_to_dense_on_device(const void* d_rows, zfcDataType_t row_type,
                                  const int32_t* d_positions, size_t count, size_t dim,
                                  float* d_dense, size_t num_unique, void* stream) {
  ZFC_RETURN_IF_ERROR(check_count("count", count));
  ZFC_RETURN_IF_ERROR(check_count("num_unique", num_unique));
  const uint32_t n = static_cast<uint32_t>(count), m = static_cast<uint32_t>(num_unique);
  size_t bytes = 0;
  ZFC_RETURN_IF_ERROR(cuda::scatter_to_dense(nullptr, &bytes, d_rows, row_type, d_positions, n,
                                             dim, d_dense, m, stream));
  // Standalone calls have no plan to own their scratch, and calls on other streams may run
  // at the same time: the scratch is the call's own, in its stream's order.
  cuda::StreamScratch scratch(stream);
  ZFC_RETURN_IF_ERROR(scratch.allocate(kFlagBytes + bytes));
  uint32_t* d_bad = static_cast<uint32_t*>(scratch.data());
  ZFC_RETURN_IF_ERROR(cuda::find_bad_position(d_positions, n, m, d_bad, stream));
  uint32_t bad = n;
  ZFC_RETURN_IF_ERROR(read_first_bad(scratch, stream, &bad));
  if (bad < n) {
    int32_t value = 0;
    ZFC_RETURN_IF_ERROR(cuda::copy_to_host(&value, d_positions + bad, sizeof value, stream));
    return error(zfcInvalidArgument, "positions[%u] = %d is outside [0, %zu)", bad, value,
                 num_unique);
  }
  return cuda::scatter_to_dense(static_cast<char*>(scratch.data()) + kFlagBytes, &bytes, d_rows,
                                row_type, d_positions, n, dim, d_dense, m, stream);
}

Status update_rows_on_device(float* d_table, float* d_state, int64_t vocab_size, size_t dim,
                             const void* d_indices, zfcDataType_t index_type,
                             const float* d_rows, size_t num_rows,
                             const kernels::RowUpdate& u, void* stream) {
  ZFC_RETURN_IF_ERROR(check_count("num_rows", num_rows));
  const uint32_t n = static_cast<uint32_t>(num_rows);
  const int kind = static_cast<int>(u.kind);
  size_t bytes = 0;
  ZFC_RETURN_IF_ERROR(cuda::update_rows(nullptr, &bytes, d_table, d_state, vocab_size, dim,
                                        d_indices, index_type, d_rows, n, kind, u.alpha,
                                        u.epsilon, stream));
  cuda::StreamScratch scratch(stream);  // the call's own (see scatter_to_dense_on_device)
  ZFC_RETURN_IF_ERROR(scratch.allocate(kFlagBytes + bytes));
  uint32_t* d_bad = static_cast<uint32_t*>(scratch.data());
  ZFC_RETURN_IF_ERROR(cuda::find_bad_index(d_indices, index_type, n, vocab_size, d_bad, stream));
  uint32_t bad = n;
  ZFC_RETURN_IF_ERROR(read_first_bad(scratch, stream, &bad));
  if (bad < n) {
    int64_t value = 0;
    if (index_type == zfcInt32) {
      int32_t v32 = 0;
      ZFC_RETURN_IF_ERROR(cuda::copy_to_host(
          &v32, static_cast<const int32_t*>(d_indices) + bad, sizeof v32, stream));
      value = v32;
    } else {
      ZFC_RETURN_IF_ERROR(cuda::copy_to_host(
          &value, static_cast<const int64_t*>(d_indices) + bad, sizeof value, stream));
    }
    return error(zfcInvalidArgument, "indices[%u] = %lld is outside [0, %lld)", bad,
                 static_cast<long long>(value), static_cast<long long>(vocab_size));
  }
  if (dim == 0) return Status::Ok();  // indices checked, nothing to write
  return cuda::update_rows(static_cast<char*>(scratch.data()) + kFlagBytes, &bytes, d_table,
                           d_state, vocab_size, dim, d_indices, index_type, d_rows, n, kind,
                           u.alpha, u.epsilon, stream);
}

Status update_host_rows_on_device(float* d_table, float* d_state, int64_t vocab_size,
                                  size_t dim, const void* keys, size_t key_bytes,
                                  const float* rows, size_t n, const kernels::RowUpdate& u,
                                  void* stream) {
  ZFC_RETURN_IF_ERROR(check_count("rows to apply", n));
  const uint32_t count = static_cast<uint32_t>(n);
  // The kernel reads 4-byte indices as unsigned keys, which these are.
  const zfcDataType_t key_type = key_bytes == 4 ? zfcInt32 : zfcInt64;
  const int kind = static_cast<int>(u.kind);
  size_t bytes = 0;
  ZFC_RETURN_IF_ERROR(cuda::update_rows(nullptr, &bytes, d_table, d_state, vocab_size, dim,
                                        nullptr, key_type, nullptr, count, kind, u.alpha,
                                        u.epsilon, stream));
  const size_t key_part = (n * key_bytes + 255) / 256 * 256;
  const size_t row_part = (n * dim * sizeof(float) + 255) / 256 * 256;
  // Freed in the stream's order, after the kernel that reads it.
  cuda::StreamScratch scratch(stream);
  ZFC_RETURN_IF_ERROR(scratch.allocate(key_part + row_part + bytes));
  char* at = static_cast<char*>(scratch.data());
  ZFC_RETURN_IF_ERROR(cuda::copy_to_device(at, keys, n * key_bytes, stream));
  ZFC_RETURN_IF_ERROR(
      cuda::copy_to_device(at + key_part, rows, n * dim * sizeof(float), stream));
  return cuda::update_rows(at + key_part + row_part, &bytes, d_table, d_state, vocab_size, dim,
                           at, key_type, reinterpret_cast<const float*>(at + key_part), count,
                           kind, u.alpha, u.epsilon, stream);
}

Status read_rows_on_device(const float* d_table, size_t dim, const uint64_t* rows, size_t n,
                           float* out, void* stream) {
  ZFC_RETURN_IF_ERROR(check_count("rows to read", n));
  if (n == 0 || dim == 0) return Status::Ok();
  const size_t index_part = (n * sizeof(uint64_t) + 255) / 256 * 256;
  const size_t row_bytes = n * dim * sizeof(float);
  cuda::StreamScratch scratch(stream);
  ZFC_RETURN_IF_ERROR(scratch.allocate(index_part + row_bytes));
  char* at = static_cast<char*>(scratch.data());
  ZFC_RETURN_IF_ERROR(cuda::copy_to_device(at, rows, n * sizeof(uint64_t), stream));
  float* d_out = reinterpret_cast<float*>(at + index_part);
  ZFC_RETURN_IF_ERROR(cuda::gather_rows(d_table, dim, reinterpret_cast<const uint64_t*>(at),
                                        static_cast<uint32_t>(n), d_out, stream));
  return cuda::copy_to_host(out, d_out, row_bytes, stream);
}

Status wait_for_device_stream(void* stream) { return cuda::synchronize(stream); }

}  // namespace zfc
