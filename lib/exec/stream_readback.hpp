// A few bytes a device writes, read by the host later without waiting: the caller's stream
// copies them to pinned memory and records an event behind the copy, and the host asks the
// event when it wants them. The communicator's record of asynchronous failures
// (core/async_errors) keeps one per device call whose verdict is still on its way. A build
// without CUDA compiles stream_readback_no_device.cpp, which refuses every device stream.
#pragma once

#include <cstddef>
#include <string>

#include "host_device/status.hpp"

namespace zfc {

class StreamReadback {
 public:
  enum class State { kPending, kDone, kFailed };

  StreamReadback() = default;
  ~StreamReadback();
  StreamReadback(const StreamReadback&) = delete;
  StreamReadback& operator=(const StreamReadback&) = delete;

  // Whether `stream` (a cudaStream_t) is being captured into a CUDA graph: what runs later
  // is the graph's launches, so an event recorded now marks no point to wait for.
  static Status capturing(const void* stream, bool* out);

  // `bytes` of pinned memory and the event, made on the first call and kept: freeing pinned
  // memory would wait for the device.
  Status reserve(size_t bytes);

  // Queues on `stream` the copy of `bytes` bytes from d_src (none when NULL) into host(),
  // then the event.
  Status queue(const void* d_src, size_t bytes, const void* stream);

  // kDone once the stream passed the event (host() then holds the bytes); kFailed, with the
  // device's error in *detail, when the work before it failed.
  State query(std::string* detail) const;

  void* host() const { return host_; }

 private:
  void* host_ = nullptr;   // pinned
  [[maybe_unused]] void* event_ = nullptr;  // cudaEvent_t (CUDA builds)
};

}  // namespace zfc
