// Device buffers of a collective, run through host memory: the inputs are copied to pinned
// host memory, the host algorithm runs on the copies (so the result has the host's bits),
// and the outputs are copied back to the device on the caller's stream. This is how the
// collectives accept device buffers over a host transport (MPI); with CUDA off, or for host
// buffers, every step is a no-op that hands back the caller's own pointers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>

#include "host_device/status.hpp"
#include "exec/memory_space.hpp"

namespace zfc {

// The pinned buffers one communicator or plan keeps between calls, one per staged argument.
class StagingBuffers {
 public:
  static constexpr int kSlots = 4;
  StagingBuffers();
  ~StagingBuffers();
  StagingBuffers(const StagingBuffers&) = delete;
  StagingBuffers& operator=(const StagingBuffers&) = delete;

  // At least `bytes` of pinned host memory in slot `slot` (< kSlots).
  Status get(int slot, size_t bytes, void** out);

 private:
  struct Slots;  // the pinned buffers (CUDA builds): allocated on first use
  std::unique_ptr<Slots> slots_;
};

// Device copies of a sparse reduce's result (indices and rows), owned by the plan and valid
// until its next call, like the host result.
class DeviceResult {
 public:
  DeviceResult();
  ~DeviceResult();
  DeviceResult(const DeviceResult&) = delete;
  DeviceResult& operator=(const DeviceResult&) = delete;

  // Copies the host result to device memory held here and waits for the copies.
  Status store(const void* indices, size_t index_bytes, const float* rows, size_t row_bytes,
               const void* stream, const void** d_indices, const float** d_rows);

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

// One call's staging. begin() classifies the buffers (a local check: mixed host and device
// buffers are an error); after it, input() and output() give the host pointers the host
// algorithm uses, and finish() copies the outputs to the device.
class HostStaging {
 public:
  explicit HostStaging(StagingBuffers& buffers) : buffers_(buffers) {}

  Status begin(std::initializer_list<NamedBuffer> buffers, const void* stream);
  bool on_device() const { return space_ == MemorySpace::kDevice; }

  // A host copy of `bytes` bytes at `src` (the pointer itself for host buffers). Waits for
  // the stream: the host reads the copy next.
  Status input(int slot, const void* src, size_t bytes, const void** host);

  // A host buffer of `bytes` bytes that finish() copies to `dst` (`dst` itself for host
  // buffers). Outputs are written to the device only by finish(), after success.
  Status output(int slot, void* dst, size_t bytes, void** host);

  // Queues the copy of `bytes` bytes of host memory at src to the device buffer dst, on the
  // call's stream, for finish() to wait for (a result that passed through the host, written
  // to the caller's device buffers once the call succeeded).
  Status copy_out(void* dst, const void* src, size_t bytes);

  // Copies every output to the device and waits for the copies.
  Status finish();

  // How many times input() and finish() waited for the stream.
  uint32_t waits() const { return waits_; }

 private:
  struct Pending {
    void* dst = nullptr;
    const void* src = nullptr;
    size_t bytes = 0;
  };
  StagingBuffers& buffers_;
  MemorySpace space_ = MemorySpace::kHost;
  void* stream_ = nullptr;
  std::array<Pending, StagingBuffers::kSlots> outputs_{};
  uint32_t waits_ = 0;
};

}  // namespace zfc
