// Internal to cuda/: CUDA runtime errors as Status, stream casts, launch geometry, and the
// carving of one caller-supplied scratch block into typed arrays.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "host_device/status.hpp"

namespace zfc {
namespace cuda {

// Ok for cudaSuccess; otherwise zfcOutOfMemory or zfcSystemError naming `what` and the error.
Status cuda_check(cudaError_t e, const char* what);

// The error, if any, of the kernel launched last on this thread.
inline Status launch_check(const char* kernel) { return cuda_check(cudaGetLastError(), kernel); }

inline cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

constexpr unsigned kBlock = 256;

// Blocks of kBlock threads for a grid-stride loop over n items (at least 1, at most 2^20).
inline unsigned grid_for(size_t n) {
  const size_t g = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(g == 0 ? 1 : (g > (size_t{1} << 20) ? (size_t{1} << 20) : g));
}

// Hands out 256-byte aligned pieces of a scratch block. With base == nullptr it only adds up
// the bytes, so the same code answers the size query and lays out the real call.
class ScratchLayout {
 public:
  explicit ScratchLayout(void* base) : base_(static_cast<char*>(base)) {}
  template <class T>
  T* take(size_t count) {
    const size_t at = bytes_;
    bytes_ += (count * sizeof(T) + 255) & ~size_t{255};
    return base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + at);
  }
  // Whatever is left after the typed pieces, for CUB's own scratch.
  void* rest() const { return base_ == nullptr ? nullptr : base_ + bytes_; }
  size_t bytes() const { return bytes_; }

 private:
  char* base_;
  size_t bytes_ = 0;
};

}  // namespace cuda
}  // namespace zfc
