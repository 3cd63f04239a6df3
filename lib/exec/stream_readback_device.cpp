#include "exec/stream_readback.hpp"

#include <cuda_runtime_api.h>

#include "cuda_check.hpp"

namespace zfc {

StreamReadback::~StreamReadback() {
  if (event_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
  if (host_ != nullptr) cudaFreeHost(host_);
}

Status StreamReadback::capturing(const void* stream, bool* out) {
  cudaStream_t s = static_cast<cudaStream_t>(const_cast<void*>(stream));
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  ZFC_RETURN_IF_ERROR(
      cuda::cuda_check(cudaStreamIsCapturing(s, &capture), "cudaStreamIsCapturing"));
  *out = capture != cudaStreamCaptureStatusNone;
  return Status::Ok();
}

Status StreamReadback::reserve(size_t bytes) {
  if (host_ == nullptr) {
    void* host = nullptr;
    ZFC_RETURN_IF_ERROR(cuda::cuda_check(cudaMallocHost(&host, bytes), "cudaMallocHost"));
    host_ = host;
  }
  if (event_ == nullptr) {
    cudaEvent_t ev = nullptr;
    ZFC_RETURN_IF_ERROR(cuda::cuda_check(
        cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreateWithFlags"));
    event_ = ev;
  }
  return Status::Ok();
}

Status StreamReadback::queue(const void* d_src, size_t bytes, const void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(const_cast<void*>(stream));
  if (d_src != nullptr) {
    ZFC_RETURN_IF_ERROR(cuda::cuda_check(
        cudaMemcpyAsync(host_, d_src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync"));
  }
  return cuda::cuda_check(cudaEventRecord(static_cast<cudaEvent_t>(event_), s),
                          "cudaEventRecord");
}

StreamReadback::State StreamReadback::query(std::string* detail) const {
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (e == cudaErrorNotReady) return State::kPending;
  if (e == cudaSuccess) return State::kDone;
  *detail = cudaGetErrorString(e);
  return State::kFailed;
}

}  // namespace zfc
