// The local operations of the C API -- scatter-to-dense, apply rows, the row updates -- on
// the memory space their buffers are in, behind one call each: the host kernels
// (lib/kernels), or the device backend on the caller's stream (exec/device_local_ops.hpp),
// chosen here from the resolved space, never by a build switch in the layers above. The
// arguments' presence and types are checked by the caller; the positions and indices here,
// before anything is written.
#pragma once

#include <cstddef>
#include <cstdint>

#include "exec/memory_space.hpp"
#include "host_device/status.hpp"
#include "kernels/row_update.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace exec {

// zfcScatterToDense: dense (num_unique x dim) = the rows added at their positions, the rows
// no position names zeroed.
Status scatter_to_dense(MemorySpace space, const void* rows, zfcDataType_t row_type,
                        const int32_t* positions, size_t count, size_t dim, float* dense,
                        size_t num_unique, void* stream);

// zfcApplyRows: table[indices[p]] += alpha * rows[p], in order.
Status apply_rows(MemorySpace space, float* table, int64_t vocab_size, size_t dim,
                  const void* indices, zfcDataType_t index_type, const float* rows,
                  size_t num_rows, float alpha, void* stream);

// zfcApplyUpdate: the row update u of every indexed row, in order.
Status apply_update(MemorySpace space, float* table, float* state, size_t dim,
                    int64_t vocab_size, const void* indices, zfcDataType_t index_type,
                    const float* rows, size_t num_rows, const kernels::RowUpdate& u,
                    void* stream);

}  // namespace exec
}  // namespace zfc
