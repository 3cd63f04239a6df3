#include "perf_device.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#if defined(ZFC_PERF_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace {

#if defined(ZFC_PERF_CUDA)
// A benchmark cannot go on after a failed copy or allocation: it says why and stops every
// rank, as perf_fail does.
void must(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "zfc_perf: %s failed: %s\n", what, cudaGetErrorString(e));
  MPI_Abort(MPI_COMM_WORLD, 1);
}
#endif

}  // namespace

#if defined(ZFC_PERF_CUDA)

bool select_rank_device(int local_rank, std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    *why = std::string("no CUDA device here (") +
           (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") + ")";
    return false;
  }
  cudaError_t e2 = cudaSetDevice(local_rank % count);
  // The context made now, so that the library's own CUDA runtime finds this device current.
  if (e2 == cudaSuccess) e2 = cudaFree(nullptr);
  if (e2 != cudaSuccess) {
    *why = std::string("cudaSetDevice failed: ") + cudaGetErrorString(e2);
    return false;
  }
  return true;
}

DeviceCopy::~DeviceCopy() {
  if (data_ != nullptr) cudaFree(data_);
}

void* DeviceCopy::reserve(size_t bytes) {
  if (bytes > bytes_ || data_ == nullptr) {
    if (data_ != nullptr) must(cudaFree(data_), "cudaFree");
    data_ = nullptr;
    must(cudaMalloc(&data_, bytes > 0 ? bytes : 1), "cudaMalloc");
    bytes_ = bytes;
  }
  return data_;
}

void* DeviceCopy::upload(const void* host, size_t bytes) {
  void* d = reserve(bytes);
  if (bytes > 0) must(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
  return d;
}

void DeviceCopy::download(const void* device, void* host, size_t bytes) {
  if (bytes > 0) {
    must(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  }
}

DeviceStream::DeviceStream() {
  cudaStream_t s = nullptr;
  must(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  stream_ = s;
}

DeviceStream::~DeviceStream() {
  if (stream_ != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

void DeviceStream::sync() {
  must(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
}

#else  // no CUDA in this build: -g 1 is refused before any of these could be reached

bool select_rank_device(int, std::string* why) {
  *why = "zfc_perf was built without CUDA";
  return false;
}

DeviceCopy::~DeviceCopy() = default;
void* DeviceCopy::reserve(size_t) { std::abort(); }
void* DeviceCopy::upload(const void*, size_t) { std::abort(); }
void DeviceCopy::download(const void*, void*, size_t) { std::abort(); }
DeviceStream::DeviceStream() { std::abort(); }
DeviceStream::~DeviceStream() = default;
void DeviceStream::sync() { std::abort(); }

#endif

HostSparseResult copy_to_host(const zfcSparseResult_t& on_device, size_t index_bytes) {
  HostSparseResult h;
  h.indices.resize(on_device.num_unique * index_bytes);
  h.rows.resize(on_device.num_unique * on_device.dim);
  DeviceCopy::download(on_device.indices, h.indices.data(), h.indices.size());
  DeviceCopy::download(on_device.rows, h.rows.data(), h.rows.size() * sizeof(float));
  h.result = on_device;
  h.result.indices = h.indices.data();
  h.result.rows = h.rows.data();
  if (on_device.overflow_flag != nullptr) {  // the flag a device-resident result left there
    DeviceCopy::download(on_device.overflow_flag, &h.result.overflowed, sizeof(int));
    h.result.overflow_flag = nullptr;
  }
  return h;
}
