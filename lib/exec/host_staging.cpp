#include "exec/host_staging.hpp"

#if ZIPFCOLL_HAVE_CUDA
#include "device_runtime.hpp"
#endif

namespace zfc {

#if ZIPFCOLL_HAVE_CUDA
struct StagingBuffers::Slots {
  std::array<cuda::PinnedBuffer, kSlots> pinned;
};
#else
struct StagingBuffers::Slots {};
#endif

StagingBuffers::StagingBuffers() = default;
StagingBuffers::~StagingBuffers() = default;

Status StagingBuffers::get(int slot, size_t bytes, void** out) {
#if ZIPFCOLL_HAVE_CUDA
  if (slot < 0 || slot >= kSlots) return error(zfcInternalError, "staging slot %d", slot);
  if (!slots_) slots_ = std::make_unique<Slots>();
  cuda::PinnedBuffer& buf = slots_->pinned[static_cast<size_t>(slot)];
  ZFC_RETURN_IF_ERROR(buf.reserve(bytes == 0 ? 1 : bytes));
  *out = buf.data();
  return Status::Ok();
#else
  (void)slot;
  (void)bytes;
  (void)out;
  return error(zfcUnsupported, "device buffers need a build with CUDA");
#endif
}

#if ZIPFCOLL_HAVE_CUDA
struct DeviceResult::Buffers {
  cuda::DeviceBuffer indices, rows;
};
#else
struct DeviceResult::Buffers {};
#endif

DeviceResult::DeviceResult() = default;
DeviceResult::~DeviceResult() = default;

Status DeviceResult::store(const void* indices, size_t index_bytes, const float* rows,
                           size_t row_bytes, const void* stream, const void** d_indices,
                           const float** d_rows) {
#if ZIPFCOLL_HAVE_CUDA
  if (!buffers_) buffers_ = std::make_unique<Buffers>();
  void* s = const_cast<void*>(stream);
  ZFC_RETURN_IF_ERROR(buffers_->indices.reserve(index_bytes + 1));
  ZFC_RETURN_IF_ERROR(buffers_->rows.reserve(row_bytes + 1));
  ZFC_RETURN_IF_ERROR(cuda::copy_to_device(buffers_->indices.data(), indices, index_bytes, s));
  ZFC_RETURN_IF_ERROR(cuda::copy_to_device(buffers_->rows.data(), rows, row_bytes, s));
  ZFC_RETURN_IF_ERROR(cuda::synchronize(s));
  *d_indices = buffers_->indices.data();
  *d_rows = static_cast<const float*>(buffers_->rows.data());
  return Status::Ok();
#else
  (void)indices, (void)index_bytes, (void)rows, (void)row_bytes, (void)stream;
  (void)d_indices, (void)d_rows;
  return error(zfcUnsupported, "device buffers need a build with CUDA");
#endif
}

Status HostStaging::begin(std::initializer_list<NamedBuffer> buffers, const void* stream) {
  stream_ = const_cast<void*>(stream);
  return resolve_memory_space(buffers, stream, &space_);
}

Status HostStaging::input(int slot, const void* src, size_t bytes, const void** host) {
  if (!on_device() || src == nullptr) {
    *host = src;
    return Status::Ok();
  }
#if ZIPFCOLL_HAVE_CUDA
  void* copy = nullptr;
  ZFC_RETURN_IF_ERROR(buffers_.get(slot, bytes, &copy));
  ++waits_;
  ZFC_RETURN_IF_ERROR(cuda::copy_to_host(copy, src, bytes, stream_));
  *host = copy;
  return Status::Ok();
#else
  (void)slot;
  (void)bytes;
  return error(zfcUnsupported, "device buffers need a build with CUDA");
#endif
}

Status HostStaging::output(int slot, void* dst, size_t bytes, void** host) {
  if (!on_device() || dst == nullptr) {
    *host = dst;
    return Status::Ok();
  }
  void* buf = nullptr;
  ZFC_RETURN_IF_ERROR(buffers_.get(slot, bytes, &buf));
  outputs_[static_cast<size_t>(slot)] = Pending{dst, buf, bytes};
  *host = buf;
  return Status::Ok();
}

Status HostStaging::copy_out(void* dst, const void* src, size_t bytes) {
  if (!on_device()) return error(zfcInternalError, "a copy to the device of a host call");
#if ZIPFCOLL_HAVE_CUDA
  return cuda::copy_to_device(dst, src, bytes, stream_);
#else
  (void)dst, (void)src, (void)bytes;
  return error(zfcUnsupported, "device buffers need a build with CUDA");
#endif
}

Status HostStaging::finish() {
  if (!on_device()) return Status::Ok();
#if ZIPFCOLL_HAVE_CUDA
  for (const Pending& p : outputs_) {
    if (p.dst != nullptr) {
      ZFC_RETURN_IF_ERROR(cuda::copy_to_device(p.dst, p.src, p.bytes, stream_));
    }
  }
  // The pinned buffers are reused by the next call, which may use another stream.
  ++waits_;
  return cuda::synchronize(stream_);
#else
  return Status::Ok();
#endif
}

}  // namespace zfc
