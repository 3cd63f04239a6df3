// A build without CUDA: resolve_memory_space refuses device buffers before any local
// operation runs, so these are never reached; they say so rather than touch the memory.
#include "exec/device_local_ops.hpp"

namespace zfc {

Status scatter_to_dense_on_device(const void*, zfcDataType_t, const int32_t*, size_t, size_t,
                                  float*, size_t, void*) {
  return error(zfcInternalError, "a device scatter reached a build without device support");
}

Status update_rows_on_device(float*, float*, int64_t, size_t, const void*, zfcDataType_t,
                             const float*, size_t, const kernels::RowUpdate&, void*) {
  return error(zfcInternalError, "a device update reached a build without device support");
}

Status update_host_rows_on_device(float*, float*, int64_t, size_t, const void*, size_t,
                                  const float*, size_t, const kernels::RowUpdate&, void*) {
  return error(zfcInternalError, "a device table reached a build without device support");
}

Status read_rows_on_device(const float*, size_t, const uint64_t*, size_t, float*, void*) {
  return error(zfcInternalError, "a device table reached a build without device support");
}

Status wait_for_device_stream(void*) {
  return error(zfcInternalError, "a device stream reached a build without device support");
}

}  // namespace zfc
