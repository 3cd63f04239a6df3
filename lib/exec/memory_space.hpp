// Where the buffers of a call live. With CUDA built in, a call's buffers may all be device
// memory, and its work then goes on the caller's stream; without it, or for host buffers,
// the stream must be NULL. Buffers are classified by asking the CUDA runtime, so a caller
// passes the pointers it has and never says which kind they are.
#pragma once

#include <initializer_list>

#include "host_device/status.hpp"

namespace zfc {

enum class MemorySpace { kHost, kDevice };

struct NamedBuffer {
  const char* name;
  const void* ptr;  // NULL buffers (of empty arguments) do not count
};

// True when this build has the CUDA kernels.
bool device_support_built();

// kHost when every buffer is host memory and stream is NULL; kDevice when every buffer is
// memory of the current device (stream: a cudaStream_t, NULL for the default stream). Mixed
// buffers, memory of another device, a stream with host buffers, or device buffers without
// CUDA support give zfcInvalidArgument or zfcUnsupported naming the buffer.
Status resolve_memory_space(std::initializer_list<NamedBuffer> buffers, const void* stream,
                            MemorySpace* out);

}  // namespace zfc
