#include "device_runtime.hpp"

#include <cuda.h>  // the driver's types only: its calls are found through the runtime

#include "cuda_check.hpp"

namespace zfc {
namespace cuda {

Status cuda_check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::Ok();
  const zfcResult_t code = e == cudaErrorMemoryAllocation ? zfcOutOfMemory : zfcSystemError;
  return error(code, "%s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

namespace {

struct Discovery {
  int count = 0;
  const char* reason = "";
};

const Discovery& discover() {
  static const Discovery d = [] {
    Discovery r;
    const cudaError_t e = cudaGetDeviceCount(&r.count);
    if (e != cudaSuccess) {
      r.count = 0;
      r.reason = e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice
                     ? "no CUDA device or driver on this machine"
                     : cudaGetErrorString(e);
      cudaGetLastError();  // clear the sticky error of the failed query
    } else if (r.count == 0) {
      r.reason = "no CUDA device on this machine";
    }
    return r;
  }();
  return d;
}

}  // namespace

int device_count() { return discover().count; }

const char* no_device_reason() { return discover().reason; }

namespace {

// What CUDA knows of `ptr`; false for NULL, on a machine without a device, or when it knows
// nothing (plain host memory of old drivers).
bool attributes_of(const void* ptr, cudaPointerAttributes* attr) {
  if (ptr == nullptr || device_count() == 0) return false;
  if (cudaPointerGetAttributes(attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

}  // namespace

bool is_device_pointer(const void* ptr) {
  cudaPointerAttributes attr{};
  return attributes_of(ptr, &attr) &&
         (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged);
}

int device_of_pointer(const void* ptr) {
  cudaPointerAttributes attr{};
  if (!attributes_of(ptr, &attr)) return -1;
  if (attr.type == cudaMemoryTypeManaged) return current_device();
  return attr.type == cudaMemoryTypeDevice ? attr.device : -1;
}

int current_device() {
  int device = -1;
  if (device_count() == 0 || cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return device;
}

namespace {

// The driver's calls for the thread's context, found through the runtime, so that the library
// does not link libcuda (it must load on machines without a driver).
struct ContextCalls {
  CUresult (*get)(CUcontext*) = nullptr;
  CUresult (*set)(CUcontext) = nullptr;
};

const ContextCalls& context_calls() {
  static const ContextCalls calls = [] {
    ContextCalls c;
    if (device_count() == 0) return c;
    void* get = nullptr;
    void* set = nullptr;
    cudaDriverEntryPointQueryResult found_get{}, found_set{};
    // 4000: the CUDA version that introduced both calls' current signatures.
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get, 4000, cudaEnableDefault,
                                         &found_get) == cudaSuccess &&
        cudaGetDriverEntryPointByVersion("cuCtxSetCurrent", &set, 4000, cudaEnableDefault,
                                         &found_set) == cudaSuccess &&
        found_get == cudaDriverEntryPointSuccess && found_set == cudaDriverEntryPointSuccess) {
      c.get = reinterpret_cast<CUresult (*)(CUcontext*)>(get);
      c.set = reinterpret_cast<CUresult (*)(CUcontext)>(set);
    }
    cudaGetLastError();
    return c;
  }();
  return calls;
}

}  // namespace

CurrentDevice::CurrentDevice(int device) {
  const ContextCalls& calls = context_calls();
  CUcontext context = nullptr;
  if (calls.get != nullptr && calls.get(&context) == CUDA_SUCCESS) {
    saved_context_ = true;
    previous_context_ = context;
  } else {
    previous_device_ = current_device();
  }
  if (device != current_device() || (saved_context_ && context == nullptr)) {
    status_ = cuda_check(cudaSetDevice(device), "cudaSetDevice");
  }
}

CurrentDevice::~CurrentDevice() {
  if (saved_context_) {
    context_calls().set(static_cast<CUcontext>(previous_context_));  // null: none again
  } else if (previous_device_ >= 0 && current_device() != previous_device_) {
    cudaSetDevice(previous_device_);
  }
}

StreamScratch::~StreamScratch() {
  if (data_ != nullptr) cudaFreeAsync(data_, as_stream(stream_));
}

Status StreamScratch::allocate(size_t bytes) {
  if (data_ != nullptr) {
    return error(zfcInternalError, "StreamScratch::allocate called twice");
  }
  void* p = nullptr;
  ZFC_RETURN_IF_ERROR(cuda_check(cudaMallocAsync(&p, bytes == 0 ? 1 : bytes,
                                                 as_stream(stream_)),
                                 "cudaMallocAsync"));
  data_ = p;
  return Status::Ok();
}

Status synchronize(void* stream) {
  return cuda_check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
}

Status copy_to_host(void* dst, const void* d_src, size_t bytes, void* stream) {
  if (bytes == 0) return Status::Ok();
  ZFC_RETURN_IF_ERROR(cuda_check(
      cudaMemcpyAsync(dst, d_src, bytes, cudaMemcpyDeviceToHost, as_stream(stream)),
      "cudaMemcpyAsync (device to host)"));
  return synchronize(stream);
}

Status copy_to_host_queued(void* dst, const void* d_src, size_t bytes, void* stream) {
  if (bytes == 0) return Status::Ok();
  return cuda_check(
      cudaMemcpyAsync(dst, d_src, bytes, cudaMemcpyDeviceToHost, as_stream(stream)),
      "cudaMemcpyAsync (device to host)");
}

Status copy_to_device(void* d_dst, const void* src, size_t bytes, void* stream) {
  if (bytes == 0) return Status::Ok();
  return cuda_check(cudaMemcpyAsync(d_dst, src, bytes, cudaMemcpyHostToDevice, as_stream(stream)),
               "cudaMemcpyAsync (host to device)");
}

Status copy_on_device(void* d_dst, const void* d_src, size_t bytes, void* stream) {
  if (bytes == 0 || d_dst == d_src) return Status::Ok();
  return cuda_check(
      cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice, as_stream(stream)),
      "cudaMemcpyAsync (device to device)");
}

Status fill_zero(void* d_dst, size_t bytes, void* stream) {
  if (bytes == 0) return Status::Ok();
  return cuda_check(cudaMemsetAsync(d_dst, 0, bytes, as_stream(stream)), "cudaMemsetAsync");
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
  if (data_ != nullptr) cudaFree(data_);
  data_ = nullptr;
  capacity_ = 0;
  device_ = -1;
}

bool DeviceBuffer::frees_for(size_t bytes) const {
  if (data_ == nullptr) return false;
  int device = -1;
  // A failed query: reserve fails on it too, after the wait this asks for.
  if (cudaGetDevice(&device) != cudaSuccess) return true;
  return bytes > capacity_ || device != device_;
}

Status DeviceBuffer::reserve(size_t bytes) {
  int device = -1;
  ZFC_RETURN_IF_ERROR(cuda_check(cudaGetDevice(&device), "cudaGetDevice"));
  if (bytes <= capacity_ && device == device_) return Status::Ok();
  if (data_ != nullptr) {
    // Work queued before may still use the old memory: it is waited for, explicitly rather
    // than by relying on cudaFree's, before the memory goes. A buffer grows in a plan's first
    // calls, so this wait is rare.
    ZFC_RETURN_IF_ERROR(cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
    cudaFree(data_);
    data_ = nullptr;
    capacity_ = 0;
  }
  void* p = nullptr;
  ZFC_RETURN_IF_ERROR(cuda_check(cudaMalloc(&p, bytes), "cudaMalloc"));
  data_ = p;
  capacity_ = bytes;
  device_ = device;
  return Status::Ok();
}

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

Status PinnedBuffer::reserve(size_t bytes) {
  if (bytes <= capacity_) return Status::Ok();
  if (data_ != nullptr) {
    // Copies queued before may still read or write the old memory: waited for first, as
    // DeviceBuffer does.
    ZFC_RETURN_IF_ERROR(cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
    cudaFreeHost(data_);
    data_ = nullptr;
    capacity_ = 0;
  }
  void* p = nullptr;
  ZFC_RETURN_IF_ERROR(
      cuda_check(cudaHostAlloc(&p, bytes, cudaHostAllocDefault), "cudaHostAlloc"));
  data_ = p;
  capacity_ = bytes;
  return Status::Ok();
}

}  // namespace cuda
}  // namespace zfc
