// The device backend of the local operations (exec/local_ops.hpp): scatter-to-dense and
// the row updates on device buffers, queued on the caller's stream after the arguments are
// checked. Defined by local_ops_device.cpp in a CUDA build and by local_ops_no_device.cpp
// otherwise (where no device buffer gets this far: resolve_memory_space refuses them).
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device/status.hpp"
#include "kernels/row_update.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {

// zfcScatterToDense's contract on device buffers. Checking the positions costs one wait for
// the stream (the first bad one, if any, is read back) before anything is written.
Status scatter_to_dense_on_device(const void* d_rows, zfcDataType_t row_type,
                                  const int32_t* d_positions, size_t count, size_t dim,
                                  float* d_dense, size_t num_unique, void* stream);

// zfcApplyRows's and zfcApplyUpdate's contract on device buffers (apply rows is the update
// zfcUpdateAdd), with the same one wait to check the indices; d_state is read and written
// for Adagrad only.
Status update_rows_on_device(float* d_table, float* d_state, int64_t vocab_size, size_t dim,
                             const void* d_indices, zfcDataType_t index_type,
                             const float* d_rows, size_t num_rows,
                             const kernels::RowUpdate& u, void* stream);

// TableUpdate's device side: n unsigned keys (key_bytes 4 or 8, already below vocab_size)
// and their n x dim fp32 rows in host memory, copied to the device and applied to d_table
// (and d_state) in order on `stream`, without waiting for it.
Status update_host_rows_on_device(float* d_table, float* d_state, int64_t vocab_size,
                                  size_t dim, const void* keys, size_t key_bytes,
                                  const float* rows, size_t n, const kernels::RowUpdate& u,
                                  void* stream);

// Rows rows[p] (host memory, each below the table's rows) of the device table d_table, into
// out (host memory, n x dim fp32); waits for the stream.
Status read_rows_on_device(const float* d_table, size_t dim, const uint64_t* rows, size_t n,
                           float* out, void* stream);

// Waits for `stream`.
Status wait_for_device_stream(void* stream);

}  // namespace zfc
