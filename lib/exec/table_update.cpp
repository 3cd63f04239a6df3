#include "exec/table_update.hpp"

#include <cstring>

#include "exec/device_local_ops.hpp"

namespace zfc {

Status TableUpdate::apply(const void* keys, size_t key_bytes, const float* rows, size_t n) {
  if (n == 0 || dim_ == 0) return Status::Ok();
  if (on_device()) {
    // The copies read the caller's host rows and keys, which it may overwrite once this
    // returns (the next streamed round does): the stream is waited for here.
    ZFC_RETURN_IF_ERROR(update_host_rows_on_device(table_, state_, vocab_, dim_, keys,
                                                   key_bytes, rows, n, update_, stream_));
    ++waits_;
    return wait_for_device_stream(stream_);
  }
  const bool with_state = kernels::update_has_state(update_);
  for (size_t p = 0; p < n; ++p) {
    const uint64_t key = key_bytes == 4 ? static_cast<const uint32_t*>(keys)[p]
                                        : static_cast<const uint64_t*>(keys)[p];
    const size_t at = static_cast<size_t>(key) * dim_;
    kernels::update_row(table_ + at, with_state ? state_ + at : nullptr, rows + p * dim_, dim_,
                        update_);
  }
  return Status::Ok();
}

Status read_table_rows(MemorySpace space, const float* table, size_t dim,
                       const uint64_t* rows, size_t n, float* out, const void* stream) {
  if (space == MemorySpace::kDevice) {
    return read_rows_on_device(table, dim, rows, n, out, const_cast<void*>(stream));
  }
  for (size_t p = 0; p < n; ++p) {
    std::memcpy(out + p * dim, table + rows[p] * dim, dim * sizeof(float));
  }
  return Status::Ok();
}

}  // namespace zfc
