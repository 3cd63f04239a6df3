// A few bytes from the host's stack into device memory as a kernel's argument rather than
// a copy: a copy from pageable memory may make the driver wait for the stream, and a CUDA
// graph cannot capture one; a kernel's arguments are captured with it.
#include <cstring>

#include "cuda_check.hpp"
#include "device_kernels.hpp"

namespace zfc {
namespace cuda {
namespace {

struct InlineBytes {
  unsigned char b[kInlineStoreBytes];
};

__global__ void store_inline_kernel(unsigned char* dst, InlineBytes bytes, uint32_t n) {
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = bytes.b[i];
}

}  // namespace

Status store_inline(void* d_dst, const void* src, size_t bytes, void* stream) {
  if (bytes == 0) return Status::Ok();
  if (bytes > kInlineStoreBytes) {
    return error(zfcInternalError, "store_inline of %zu bytes (at most %zu)", bytes,
                 kInlineStoreBytes);
  }
  InlineBytes in;
  std::memset(&in, 0, sizeof in);
  std::memcpy(in.b, src, bytes);
  store_inline_kernel<<<1, 128, 0, as_stream(stream)>>>(static_cast<unsigned char*>(d_dst), in,
                                                        static_cast<uint32_t>(bytes));
  return launch_check("store_inline_kernel");
}

}  // namespace cuda
}  // namespace zfc
