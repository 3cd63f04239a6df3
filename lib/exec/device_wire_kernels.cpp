// The device side of exec/wire_kernels.hpp: the CUDA kernels of cuda/ on the caller's
// stream. Without CUDA, the scratch and the factory refuse with zfcUnsupported.
#include <array>
#include <cstring>

#include "exec/wire_kernels.hpp"
#include "transport/transport.hpp"

#if ZIPFCOLL_HAVE_CUDA
#include "device_kernels.hpp"
#include "device_runtime.hpp"
#endif

namespace zfc {

#if ZIPFCOLL_HAVE_CUDA
struct DeviceScratch::Buffers {
  // First, so freed last: cudaFree of the device buffers waits for the work queued on them,
  // the copies to and from these among it.
  std::array<cuda::PinnedBuffer, 2> pinned;  // by DeviceScratch::Pinned
  std::array<cuda::DeviceBuffer, static_cast<size_t>(Slot::kNumSlots)> slots;
  cuda::DeviceBuffer flag;
};
#else
struct DeviceScratch::Buffers {};
#endif

DeviceScratch::DeviceScratch() = default;
DeviceScratch::~DeviceScratch() = default;

#if ZIPFCOLL_HAVE_CUDA

namespace {

// Before a buffer frees its memory to grow (`frees`, asked only when it matters). With no
// transfers queued on the stream, the buffer's own wait for the device covers it (a
// transport that does not queue waited for its own stream's work before it returned).
template <class Frees>
Status before_growth(void* stream, const QueuedOn& queued, Frees frees) {
  if (queued.transport == nullptr || !frees()) return Status::Ok();
  return queued.transport->wait_for_queued(stream);
}

}  // namespace

Status DeviceScratch::get(Slot slot, size_t bytes, void** out, void* stream,
                          const QueuedOn& queued) {
  if (!buffers_) buffers_ = std::make_unique<Buffers>();
  cuda::DeviceBuffer& b = buffers_->slots[static_cast<size_t>(slot)];
  const size_t want = bytes == 0 ? 1 : bytes;
  ZFC_RETURN_IF_ERROR(before_growth(stream, queued, [&] { return b.frees_for(want); }));
  ZFC_RETURN_IF_ERROR(b.reserve(want));
  *out = b.data();
  return Status::Ok();
}

Status DeviceScratch::flag(int** d_flag) {
  if (!buffers_) buffers_ = std::make_unique<Buffers>();
  ZFC_RETURN_IF_ERROR(buffers_->flag.reserve(sizeof(int)));
  *d_flag = static_cast<int*>(buffers_->flag.data());
  return Status::Ok();
}

Status DeviceScratch::pinned(Pinned use, size_t bytes, void** out, size_t* capacity,
                            void* stream, const QueuedOn& queued) {
  if (!buffers_) buffers_ = std::make_unique<Buffers>();
  cuda::PinnedBuffer& b = buffers_->pinned[static_cast<size_t>(use)];
  ZFC_RETURN_IF_ERROR(before_growth(stream, queued, [&] {
    return b.data() != nullptr && bytes > b.capacity();
  }));
  if (bytes > 0) ZFC_RETURN_IF_ERROR(b.reserve(bytes));
  *out = b.data();
  *capacity = b.capacity();
  return Status::Ok();
}

Status wait_for_stream(void* stream, const QueuedOn& queued) {
  if (queued.transport == nullptr) return cuda::synchronize(stream);
  return queued.transport->wait_for_queued(stream);
}

Status read_back(DeviceScratch& scratch, void* stream, const QueuedOn& queued, void* dst,
                 const void* src, size_t bytes) {
  if (bytes == 0) return Status::Ok();
  void* pinned = nullptr;
  size_t room = 0;
  // The last read has ended (this one follows it on the host): growing frees nothing in use.
  ZFC_RETURN_IF_ERROR(
      scratch.pinned(DeviceScratch::Pinned::kReads, bytes, &pinned, &room, stream, queued));
  ZFC_RETURN_IF_ERROR(cuda::copy_to_host_queued(pinned, src, bytes, stream));
  ZFC_RETURN_IF_ERROR(wait_for_stream(stream, queued));
  std::memcpy(dst, pinned, bytes);
  return Status::Ok();
}

namespace {

class DeviceWireKernels final : public WireKernels {
 public:
  DeviceWireKernels(DeviceScratch& scratch, void* stream, int* d_flag, QueuedOn queued)
      : scratch_(scratch), stream_(stream), d_flag_(d_flag), queued_(queued) {}

  Status scratch(Slot slot, size_t bytes, void** out) override {
    return scratch_.get(slot, bytes, out, stream_, queued_);
  }
  Status encode(const float* src, size_t n, zfcDataType_t wire, float scale,
                void* dst) override {
    return cuda::encode(src, n, wire, scale, dst, stream_);
  }
  Status sum_blocks(const void* blocks, int nblocks, size_t n, zfcDataType_t wire,
                    float* acc) override {
    return cuda::sum_blocks(blocks, nblocks, n, wire, acc, stream_);
  }
  Status add_to(const void* src, zfcDataType_t wire, size_t n, float* acc) override {
    return cuda::add_to(src, wire, n, acc, stream_);
  }
  Status decode(const void* src, size_t n, zfcDataType_t wire, float scale,
                float* dst) override {
    return cuda::decode(src, n, wire, scale, dst, d_flag_, stream_);
  }
  Status check_finite(const float* v, size_t n) override {
    return cuda::flag_nonfinite(v, n, d_flag_, stream_);
  }
  // The transports run on their own stream (NCCL) or from the host (MPI), unless the
  // transport queues its calls behind this stream's work.
  Status settle() override {
    if (queued_.transport != nullptr) return Status::Ok();
    ++syncs_;
    return cuda::synchronize(stream_);
  }
  uint32_t syncs() const override { return syncs_; }
  const int* flag_word() const override { return d_flag_; }
  Status all_finite(bool* out) override {
    ++syncs_;
    int flag = 0;
    ZFC_RETURN_IF_ERROR(read_back(scratch_, stream_, queued_, &flag, d_flag_, sizeof flag));
    *out = flag == 0;
    return Status::Ok();
  }

 private:
  DeviceScratch& scratch_;
  void* stream_;
  int* d_flag_;
  QueuedOn queued_;
  uint32_t syncs_ = 0;
};

}  // namespace

Status make_device_wire_kernels(DeviceScratch& scratch, const void* stream,
                                std::unique_ptr<WireKernels>* out, QueuedOn queued) {
  int* d_flag = nullptr;
  ZFC_RETURN_IF_ERROR(scratch.flag(&d_flag));
  void* s = const_cast<void*>(stream);
  // A memset on the stream, not a copy from host memory, so nothing of the host is read.
  ZFC_RETURN_IF_ERROR(cuda::fill_zero(d_flag, sizeof(int), s));
  out->reset(new DeviceWireKernels(scratch, s, d_flag, queued));
  return Status::Ok();
}

#else

Status DeviceScratch::get(Slot, size_t, void**, void*, const QueuedOn&) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

Status DeviceScratch::flag(int**) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

Status DeviceScratch::pinned(Pinned, size_t, void**, size_t*, void*, const QueuedOn&) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

Status wait_for_stream(void*, const QueuedOn&) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

Status read_back(DeviceScratch&, void*, const QueuedOn&, void*, const void*, size_t) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

Status make_device_wire_kernels(DeviceScratch&, const void*, std::unique_ptr<WireKernels>*,
                                QueuedOn) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

#endif

}  // namespace zfc
