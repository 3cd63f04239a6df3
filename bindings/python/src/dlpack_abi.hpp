// The DLPack exchange structures (the stable ABI that PyTorch, CuPy, JAX and NumPy share,
// "legacy" unversioned form that every producer still emits), written out here so the
// module needs no extra header. Field order and types are fixed by the ABI.
#pragma once

#include <cstdint>

namespace zfcpy {

enum DLDeviceKind : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // pinned host memory: host-addressable
  kDLCUDAManaged = 13,
};

enum DLTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4 };

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL: compact row-major
  uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// The names a DLPack capsule carries before and after a consumer takes it.
constexpr const char* kDltensorName = "dltensor";
constexpr const char* kUsedDltensorName = "used_dltensor";

}  // namespace zfcpy
