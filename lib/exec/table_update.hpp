// The update of a replicated table (and Adagrad's state) with reduced rows the host holds,
// where the table lives: host memory, through kernels::update_row, or device memory, where
// the rows and their indices are copied to the device and updated there by the CUDA kernel
// on the call's stream, with the host's bits (exec/device_local_ops.hpp). zfcSparseReduceApply
// applies its result through it, whole or a streamed round at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "exec/memory_space.hpp"
#include "host_device/status.hpp"
#include "kernels/row_update.hpp"

namespace zfc {

class TableUpdate {
 public:
  TableUpdate(MemorySpace space, float* table, float* state, int64_t vocab, size_t dim,
              const kernels::RowUpdate& update, const void* stream)
      : space_(space), table_(table), state_(state), vocab_(vocab), dim_(dim),
        update_(update), stream_(const_cast<void*>(stream)) {}

  bool on_device() const { return space_ == MemorySpace::kDevice; }

  // Row keys[p] updated with rows[p] (dim fp32 values, host memory), p = 0..n-1 in order;
  // keys of key_bytes bytes (4 or 8), unsigned, checked below the vocabulary by the caller.
  // On the device the call waits for the stream (one wait per call: a streamed round's),
  // so the caller may reuse its host buffers once it returns.
  Status apply(const void* keys, size_t key_bytes, const float* rows, size_t n);

  uint32_t waits() const { return waits_; }

 private:
  MemorySpace space_;
  float* table_;
  float* state_;
  int64_t vocab_;
  size_t dim_;
  kernels::RowUpdate update_;
  void* stream_;
  uint32_t waits_ = 0;
};

// Rows rows[p] of a table (`dim` fp32 values each; each below the table's rows) into out
// (host memory, n x dim), p = 0..n-1: copied on the host, or gathered on the device and
// copied back, waiting for `stream`.
Status read_table_rows(MemorySpace space, const float* table, size_t dim,
                       const uint64_t* rows, size_t n, float* out, const void* stream);

}  // namespace zfc
