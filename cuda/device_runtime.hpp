// The CUDA runtime as the rest of the library sees it: errors as Status, device discovery,
// and device memory that frees itself. No CUDA header is needed to include this file.
#pragma once

#include <cstddef>

#include "host_device/status.hpp"

namespace zfc {
namespace cuda {

// Number of usable CUDA devices; 0 when there is no driver or no device (never an error).
int device_count();

// Why device_count() is 0, for a skipped test or a refused configuration ("no CUDA driver",
// "no CUDA device", ...); empty when there is a device.
const char* no_device_reason();

// True when `ptr` is device (or managed) memory, of any device.
bool is_device_pointer(const void* ptr);

// The device whose memory `ptr` is: its ordinal, or -1 for host memory, NULL, or a machine
// without a device. Managed memory counts as the current device's (every device can use it).
int device_of_pointer(const void* ptr);

// The current device of the calling thread, or -1 when there is none.
int current_device();

// Makes `device` current for the object's lifetime and then restores what was current
// before, so that a call never leaves its caller's thread on another device. What is restored
// is the thread's CUDA context (none, for a thread that never used CUDA), not a device
// number: setting "device 0" back on such a thread would create a context on GPU 0 (CUDA 12
// and later), costing every rank memory there.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device);
  ~CurrentDevice();
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;
  // Whether `device` could be made current.
  const Status& status() const { return status_; }

 private:
  bool saved_context_ = false;      // previous_context_ holds the thread's context
  void* previous_context_ = nullptr;  // a CUcontext; null: the thread had none
  int previous_device_ = -1;        // without the driver's context calls: the device number
  Status status_;
};

// Device memory for one call, allocated on the call's stream and freed on it when the object
// goes (cudaMallocAsync / cudaFreeAsync): calls on different streams never share it, and the
// stream's order keeps it alive for the work already queued on it.
class StreamScratch {
 public:
  explicit StreamScratch(void* stream) : stream_(stream) {}
  ~StreamScratch();
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  // At least `bytes` bytes (once per object).
  Status allocate(size_t bytes);
  void* data() const { return data_; }

 private:
  void* stream_;
  void* data_ = nullptr;
};

// Waits for `stream` (a cudaStream_t; nullptr is the legacy default stream).
Status synchronize(void* stream);

Status copy_to_host(void* dst, const void* d_src, size_t bytes, void* stream);
// Queued on the stream, not waited for: `dst` is pinned memory, read once the stream ran it.
Status copy_to_host_queued(void* dst, const void* d_src, size_t bytes, void* stream);
// Queued on the stream. A pageable host source (the stack, the workspace) may be reused once
// this returns, since the runtime stages it first; a pinned one only after the copy.
Status copy_to_device(void* d_dst, const void* src, size_t bytes, void* stream);
// Queued on the stream, both buffers device memory.
Status copy_on_device(void* d_dst, const void* d_src, size_t bytes, void* stream);
Status fill_zero(void* d_dst, size_t bytes, void* stream);

// Device memory owned by the object; grows, never shrinks. It belongs to the device that was
// current when it was reserved: reserving while another device is current moves it there.
// Growing waits for the device first, since queued work may still use the old memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // At least `bytes` bytes (contents not kept when it grows).
  Status reserve(size_t bytes);
  // Whether reserve(bytes) would free memory it holds (it grows, or moves to the current
  // device), which first waits for the device.
  bool frees_for(size_t bytes) const;
  // Frees the memory now (while the caller has its device current), not at destruction.
  void release();
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
  int device_ = -1;
};

// Page-locked host memory (cudaHostAlloc), so copies to and from the device run at full speed
// and asynchronously; grows, never shrinks.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  Status reserve(size_t bytes);
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace cuda
}  // namespace zfc
