// The device backend of the local operations (exec/local_ops.hpp): scatter-to-dense and
// apply rows on device buffers, queued on the caller's stream after the arguments are
// checked. Defined by local_ops_device.cpp in a CUDA build and by local_ops_no_device.cpp
// otherwise (where no device buffer gets this far: resolve_memory_space refuses them).
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device/status.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {

// zfcScatterToDense's contract on device buffers. Checking the positions costs one wait for
// the stream (the first bad one, if any, is read back) before anything is written.
Status scatter_to_dense_on_device(const void* d_rows, zfcDataType_t row_type,
                                  const int32_t* d_positions, size_t count, size_t dim,
                                  float* d_dense, size_t num_unique, void* stream);

// zfcApplyRows's contract on device buffers, with the same one wait to check the indices.
Status apply_rows_on_device(float* d_table, int64_t vocab_size, size_t dim,
                            const void* d_indices, zfcDataType_t index_type,
                            const float* d_rows, size_t num_rows, float alpha, void* stream);

}  // namespace zfc
