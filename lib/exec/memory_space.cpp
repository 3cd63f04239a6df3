#include "exec/memory_space.hpp"

#if ZIPFCOLL_HAVE_CUDA
#include "device_runtime.hpp"
#endif

namespace zfc {

bool device_support_built() { return ZIPFCOLL_HAVE_CUDA != 0; }

Status resolve_memory_space(std::initializer_list<NamedBuffer> buffers, const void* stream,
                            MemorySpace* out) {
#if ZIPFCOLL_HAVE_CUDA
  const NamedBuffer* device = nullptr;
  const NamedBuffer* host = nullptr;
  const int current = cuda::current_device();
  for (const NamedBuffer& b : buffers) {
    if (b.ptr == nullptr) continue;
    const int owner = cuda::device_of_pointer(b.ptr);
    if (owner >= 0 && owner != current) {
      // The kernels run on the current device; another device's memory is not theirs.
      return error(zfcInvalidArgument, "%s is memory of CUDA device %d, but the current "
                   "device is %d: make its device current (cudaSetDevice) or pass memory "
                   "of the current device", b.name, owner, current);
    }
    if (owner >= 0 && device == nullptr) device = &b;
    if (owner < 0 && host == nullptr) host = &b;
  }
  if (device != nullptr && host != nullptr) {
    return error(zfcInvalidArgument, "%s is device memory but %s is not: a call's buffers must "
                 "all be on the device or all on the host", device->name, host->name);
  }
  if (device != nullptr) {
    *out = MemorySpace::kDevice;
    return Status::Ok();
  }
  if (stream != nullptr) {
    return error(zfcInvalidArgument, "stream %p given with host buffers (pass NULL, or device "
                 "buffers)", stream);
  }
  *out = MemorySpace::kHost;
  return Status::Ok();
#else
  if (stream != nullptr) {
    return error(zfcUnsupported, "stream %p given, but this build has no CUDA support and "
                 "handles host buffers only (pass NULL)", stream);
  }
  *out = MemorySpace::kHost;
  return Status::Ok();
#endif
}

}  // namespace zfc
