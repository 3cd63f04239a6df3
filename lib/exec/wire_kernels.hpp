// The local steps of the row collectives (encode to the wire, rank-ordered sums, decode with
// the overflow check) on one memory space: the host kernels, or the CUDA kernels on the
// caller's stream. The allreduce is written once against this interface, so the algorithm
// the host tests prove is the one that runs on device buffers over NCCL or CUDA-aware MPI.
// Both implementations give the same bits (cuda/device_kernels.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "host_device/status.hpp"
#include "exec/workspace.hpp"
#include "kernels/wire_format.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {

class Transport;

class WireKernels {
 public:
  virtual ~WireKernels() = default;

  // Scratch of at least `bytes` in this memory space, one buffer per slot.
  virtual Status scratch(Slot slot, size_t bytes, void** out) = 0;

  // dst[i] = wire(src[i] * scale).
  virtual Status encode(const float* src, size_t n, zfcDataType_t wire, float scale,
                        void* dst) = 0;
  // acc[i] = ((+0 + block_0[i]) + block_1[i]) + ... over nblocks consecutive blocks.
  virtual Status sum_blocks(const void* blocks, int nblocks, size_t n, zfcDataType_t wire,
                            float* acc) = 0;
  // acc[i] += fp32(src[i]).
  virtual Status add_to(const void* src, zfcDataType_t wire, size_t n, float* acc) = 0;
  // dst[i] = fp32(src[i]) / scale, noting whether some value is not finite.
  virtual Status decode(const void* src, size_t n, zfcDataType_t wire, float scale,
                        float* dst) = 0;
  // Notes whether some v[i] is not finite.
  virtual Status check_finite(const float* v, size_t n) = 0;
  // rows x dim values to rows of the wire format f (f's scale rule): a format of values only
  // through encode(); the host runs any format's own encode, a device refuses one with a
  // per-row part (zfcUnsupported) until it has kernels for it.
  // Rounded as `r` says; a device refuses stochastic rounding too.
  virtual Status encode_rows(const kernels::WireFormat& f, const float* src, size_t rows,
                             size_t dim, float scale, void* dst,
                             const kernels::Rounding& r = kernels::Rounding{});

  // Before the transport reads or writes the buffers: the work queued so far is done.
  virtual Status settle() = 0;
  // Whether every value noted since the call began was finite (waits for the work).
  virtual Status all_finite(bool* out) = 0;
  // How many times the call waited for the device (settle, all_finite, ...); 0 on the host.
  virtual uint32_t syncs() const { return 0; }
  // The device word this call's kernels set when they note a value that is not finite (zeroed
  // as the call began), for a result that leaves the flag on the device; NULL on the host,
  // whose all_finite costs no wait.
  virtual const int* flag_word() const { return nullptr; }
};

// The host kernels (lib/kernels) with the communicator's workspace.
class HostWireKernels final : public WireKernels {
 public:
  explicit HostWireKernels(Workspace& ws) : ws_(ws) {}
  Status scratch(Slot slot, size_t bytes, void** out) override;
  Status encode(const float* src, size_t n, zfcDataType_t wire, float scale,
                void* dst) override;
  Status sum_blocks(const void* blocks, int nblocks, size_t n, zfcDataType_t wire,
                    float* acc) override;
  Status add_to(const void* src, zfcDataType_t wire, size_t n, float* acc) override;
  Status decode(const void* src, size_t n, zfcDataType_t wire, float scale,
                float* dst) override;
  Status check_finite(const float* v, size_t n) override;
  Status encode_rows(const kernels::WireFormat& f, const float* src, size_t rows, size_t dim,
                     float scale, void* dst,
                     const kernels::Rounding& r = kernels::Rounding{}) override;
  // Notes a decode's verdict (a format's own decode, run by the step kernels).
  void note_finite(bool finite) {
    if (!finite) finite_ = false;
  }
  Status settle() override { return Status::Ok(); }
  Status all_finite(bool* out) override;

 private:
  Workspace& ws_;
  bool finite_ = true;
};

// A device call whose transport queues its transfers on the caller's stream
// (Transport::set_queue_stream): settle() then has nothing to wait for, and a wait for the
// stream, which holds those transfers, is the transport's own (Transport::wait_for_queued):
// it polls for their failure (a peer lost) and after the communicator's timeout_ms aborts
// the transport instead of waiting for ever.
struct QueuedOn {
  Transport* transport = nullptr;  // NULL: the transport's calls do not queue there
};

// Device scratch a communicator keeps between calls (one buffer per slot, and the word the
// overflow check writes). Without CUDA it only refuses. Growing frees the old memory, which
// queued work may still use, so it waits for the device first. When the calling step's
// transfers are queued on its `stream` (`queued`), that stream is waited for before, by the
// transport's own wait: a lost peer then ends the wait at timeout_ms instead of hanging it.
class DeviceScratch {
 public:
  DeviceScratch();
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  Status get(Slot slot, size_t bytes, void** out, void* stream = nullptr,
             const QueuedOn& queued = {});
  Status flag(int** d_flag);
  // At least `bytes` of page-locked host memory for `use`, and how much it holds (kept
  // between calls; contents not kept when it grows, which waits for the device before it
  // frees the old memory). bytes == 0 allocates nothing.
  enum class Pinned { kUploads, kReads };
  Status pinned(Pinned use, size_t bytes, void** out, size_t* capacity, void* stream = nullptr,
                const QueuedOn& queued = {});

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

// The CUDA kernels on `stream`, with scratch from `scratch`; zfcUnsupported without CUDA.
Status make_device_wire_kernels(DeviceScratch& scratch, const void* stream,
                                std::unique_ptr<WireKernels>* out, QueuedOn queued = {});

// Waits for `stream`, as `queued` says (CUDA builds).
Status wait_for_stream(void* stream, const QueuedOn& queued);
// `bytes` at device `src` into host `dst`, through the scratch's pinned memory, waiting for
// the stream as `queued` says (CUDA builds).
Status read_back(DeviceScratch& scratch, void* stream, const QueuedOn& queued, void* dst,
                 const void* src, size_t bytes);

}  // namespace zfc
