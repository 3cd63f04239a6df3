#include "transport/nccl/nccl_transport.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <optional>
#include <cstring>
#include <thread>

#include "cuda_check.hpp"
#include "device_runtime.hpp"

namespace zfc {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kDefaultInitMs = 60000;

Status nccl_error(ncclResult_t r, int rank, const char* what) {
  const char* detail = ncclGetLastError(nullptr);
  return error(zfcTransportError, "rank %d: %s failed: %s%s%s", rank, what,
               ncclGetErrorString(r), detail != nullptr && *detail ? ": " : "",
               detail != nullptr ? detail : "");
}

// A call on a non-blocking communicator may answer ncclInProgress; the wait that follows
// finishes it.
#define ZFC_NCCL_CHECK(call, what)                                                   \
  do {                                                                               \
    ncclResult_t zfc_r_ = (call);                                                    \
    if (zfc_r_ != ncclSuccess && zfc_r_ != ncclInProgress) {                         \
      return nccl_error(zfc_r_, rank(), what);                                       \
    }                                                                                \
  } while (0)

// Waits until `comm` has no operation in progress (init, split, group end), polling its
// asynchronous error; past the deadline the caller aborts it.
Status wait_comm_ready(ncclComm_t comm, int rank, int timeout_ms, const char* what) {
  const auto start = Clock::now();
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess) return nccl_error(r, rank, "ncclCommGetAsyncError");
    if (state == ncclSuccess) return Status::Ok();
    if (state != ncclInProgress) return nccl_error(state, rank, what);
    if (timeout_ms > 0 && Clock::now() - start > std::chrono::milliseconds(timeout_ms)) {
      return error(zfcTimeout, "rank %d: %s did not finish within %d ms", rank, what,
                   timeout_ms);
    }
    std::this_thread::yield();
  }
}

// An NCCL group that is always closed: returning between ncclGroupStart and ncclGroupEnd
// (an error queueing one of its operations) would leave every later NCCL call of the
// thread inside the group.
class NcclGroup {
 public:
  ncclResult_t start() {
    const ncclResult_t r = ncclGroupStart();
    open_ = r == ncclSuccess;
    return r;
  }
  ncclResult_t end() {
    open_ = false;
    return ncclGroupEnd();
  }
  ~NcclGroup() {
    if (open_) ncclGroupEnd();
  }

 private:
  bool open_ = false;
};

// Frees a non-blocking communicator: finalized (its operations and network resources
// flushed), its state polled until the finalize is done, then destroyed. A finalize that
// fails or runs past `timeout_ms` (0: kDefaultInitMs) aborts it instead.
void close_comm(ncclComm_t comm, int timeout_ms) {
  const int bound = timeout_ms > 0 ? timeout_ms : kDefaultInitMs;
  const ncclResult_t r = ncclCommFinalize(comm);
  const bool finalized =
      (r == ncclSuccess || r == ncclInProgress) &&
      wait_comm_ready(comm, -1, bound, "ncclCommFinalize").ok();
  if (finalized) {
    ncclCommDestroy(comm);
  } else {
    ncclCommAbort(comm);
  }
}

// One side of a call in the device memory NCCL needs: the caller's pointer when it is device
// memory, else a bounce buffer that is filled before the call (inputs) or read back after it
// (outputs).
class Staged {
 public:
  Staged(cuda::DeviceBuffer& bounce, void* stream, int device, int rank)
      : bounce_(bounce), stream_(stream), device_(device), rank_(rank) {}

  Status input(const void* ptr, size_t bytes, const void** d_out) {
    if (bytes == 0 || ptr == nullptr) {
      *d_out = ptr;
      return Status::Ok();
    }
    bool on_device = false;
    ZFC_RETURN_IF_ERROR(ours(ptr, &on_device));
    if (on_device) {
      *d_out = ptr;
      return Status::Ok();
    }
    ZFC_RETURN_IF_ERROR(bounce_.reserve(bytes));
    ZFC_RETURN_IF_ERROR(cuda::copy_to_device(bounce_.data(), ptr, bytes, stream_));
    *d_out = bounce_.data();
    staged_input_ = true;
    return Status::Ok();
  }
  // An output region (of which `filled` bytes are inputs too, as for an in-place send).
  Status output(void* ptr, size_t bytes, bool copy_in, void** d_out) {
    if (bytes == 0 || ptr == nullptr) {
      *d_out = ptr;
      return Status::Ok();
    }
    bool on_device = false;
    ZFC_RETURN_IF_ERROR(ours(ptr, &on_device));
    if (on_device) {
      *d_out = ptr;
      return Status::Ok();
    }
    ZFC_RETURN_IF_ERROR(bounce_.reserve(bytes));
    if (copy_in) ZFC_RETURN_IF_ERROR(cuda::copy_to_device(bounce_.data(), ptr, bytes, stream_));
    host_ = ptr;
    bytes_ = bytes;
    *d_out = bounce_.data();
    return Status::Ok();
  }
  // Whether a buffer goes through the bounce buffer: an output must be copied back after the
  // call, and an input's bounce buffer must not be refilled before the call has read it.
  bool stages_output() const { return host_ != nullptr; }
  bool stages_input() const { return staged_input_; }
  // After the wait: the staged output back to the caller.
  Status finish() {
    if (host_ == nullptr) return Status::Ok();
    ZFC_RETURN_IF_ERROR(cuda::copy_to_host(host_, bounce_.data(), bytes_, stream_));
    return cuda::synchronize(stream_);
  }

 private:
  // Device memory NCCL can use is the communicator's device's; another device's is refused
  // (the caller's current device may differ from the communicator's).
  Status ours(const void* ptr, bool* on_device) const {
    const int owner = cuda::device_of_pointer(ptr);
    if (owner >= 0 && owner != device_) {
      return error(zfcInvalidArgument, "rank %d: a buffer is memory of CUDA device %d, but "
                   "this NCCL communicator runs on device %d", rank_, owner, device_);
    }
    *on_device = owner >= 0;
    return Status::Ok();
  }

  cuda::DeviceBuffer& bounce_;
  void* stream_;
  int device_;
  int rank_;
  void* host_ = nullptr;
  size_t bytes_ = 0;
  bool staged_input_ = false;
};

// The end of the bytes a displacement list covers.
size_t extent(const size_t* bytes, const size_t* displs, int n) {
  size_t end = 0;
  for (int i = 0; i < n; ++i) {
    if (bytes[i] > 0 && displs[i] + bytes[i] > end) end = displs[i] + bytes[i];
  }
  return end;
}

class NcclTransport final : public Transport {
 public:
  NcclTransport(ncclComm_t comm, int rank, int size, int device, int timeout_ms,
                cudaStream_t stream)
      : Transport(rank, size), comm_(comm), device_(device), timeout_ms_(timeout_ms),
        own_stream_(stream) {}
  ~NcclTransport() override {
    cuda::CurrentDevice on(device_);  // NCCL and the stream belong to it; restored after
    if (!abandoned_) close_comm(comm_, timeout_ms_);
    cudaStreamDestroy(own_stream_);
    recv_bounce_.release();  // on this device, before the caller's context is restored
    send_bounce_.release();
  }
  const char* name() const override { return "nccl"; }
  bool accepts_device_buffers() const override { return true; }
  // The block calls are the base's two rounds over do_allgather(v) and do_alltoallv, which
  // take device memory as it is (the sizes, host memory, are staged).
  bool blocks_accept_device_buffers() const override { return true; }
  // NCCL queues its kernels on any stream of its device: on the caller's, behind its work,
  // and a call on device buffers then returns without waiting.
  bool queues_on_caller_stream() const override { return true; }
  void set_queue_stream(const void* stream) override {
    queue_ = static_cast<cudaStream_t>(const_cast<void*>(stream));
  }
  Status wait_for_queued(const void* stream) override {
    ZFC_RETURN_IF_ERROR(usable());
    return wait_for(static_cast<cudaStream_t>(const_cast<void*>(stream)));
  }
  // Once the communicator is aborted there is nothing left to find: the call that aborted it
  // reported why.
  Status poll_async_error() override {
    if (abandoned_) return Status::Ok();
    ncclResult_t state = ncclSuccess;
    const ncclResult_t asked = ncclCommGetAsyncError(comm_, &state);
    if (asked != ncclSuccess) state = asked;
    if (state != ncclSuccess && state != ncclInProgress) {
      abandon();
      return nccl_error(state, rank(), "an NCCL operation queued on the caller's stream (a "
                        "peer failed or left)");
    }
    return Status::Ok();
  }

  Status split(int color, int key, std::unique_ptr<Transport>* out) override {
    ZFC_RETURN_IF_ERROR(usable());
    cuda::CurrentDevice on(device_);
    ZFC_RETURN_IF_ERROR(on.status());
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t child = nullptr;
    ZFC_NCCL_CHECK(ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &child,
                                 &config),
                   "ncclCommSplit");
    const Status parent = wait_comm_ready(comm_, rank(), timeout_ms_, "ncclCommSplit");
    if (!parent.ok()) {
      if (child != nullptr) ncclCommAbort(child);  // before the parent it was made from
      abandon();
      return parent;
    }
    if (child == nullptr) {
      out->reset();
      return Status::Ok();
    }
    // A child that does not come up is aborted alone: the parent is still sound.
    const Status ready =
        wait_comm_ready(child, rank(), timeout_ms_, "ncclCommSplit (new communicator)");
    if (!ready.ok()) {
      ncclCommAbort(child);
      return ready;
    }
    return wrap(child, device_, timeout_ms_, out);
  }

  // Aborts the NCCL communicator at once: its kernels may otherwise never end, and peers
  // waiting on them are released with an error.
  void abandon() override {
    if (abandoned_) return;
    abandoned_ = true;
    cuda::CurrentDevice on(device_);
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }

  static Status wrap(ncclComm_t comm, int device, int timeout_ms,
                     std::unique_ptr<Transport>* out) {
    int rank = 0, size = 0;
    cudaStream_t stream = nullptr;
    ncclResult_t r = ncclCommUserRank(comm, &rank);
    if (r == ncclSuccess) r = ncclCommCount(comm, &size);
    if (r != ncclSuccess) {
      ncclCommAbort(comm);
      return nccl_error(r, rank, "ncclCommUserRank");
    }
    cuda::CurrentDevice on(device);
    Status s = on.status();
    if (s.ok()) {
      s = cuda::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                           "cudaStreamCreateWithFlags");
    }
    if (!s.ok()) {
      ncclCommAbort(comm);
      return s;
    }
    out->reset(new NcclTransport(comm, rank, size, device, timeout_ms, stream));
    return Status::Ok();
  }

 protected:
  Status do_allgather(const void* send, size_t bytes, void* recv) override {
    const size_t total = bytes * static_cast<size_t>(size());
    const bool in_place = send == static_cast<const char*>(recv) + bytes * rank();
    void* d_recv = nullptr;
    const void* d_send = nullptr;
    ZFC_RETURN_IF_ERROR(usable());
    cuda::CurrentDevice on(device_);  // the caller's device is restored on return
    ZFC_RETURN_IF_ERROR(on.status());
    Staged out(recv_bounce_, stream(), device_, rank());
    Staged in(send_bounce_, stream(), device_, rank());
    ZFC_RETURN_IF_ERROR(out.output(recv, total, in_place, &d_recv));
    if (in_place) {
      d_send = static_cast<const char*>(d_recv) + bytes * rank();
    } else {
      ZFC_RETURN_IF_ERROR(in.input(send, bytes, &d_send));
    }
    ZFC_NCCL_CHECK(ncclAllGather(d_send, d_recv, bytes, ncclUint8, comm_, stream()),
                   "ncclAllGather");
    return complete(out, in);
  }

  // One broadcast per rank, grouped: NCCL has no allgatherv of its own.
  Status do_allgatherv(const void* send, void* recv, const size_t* recv_bytes,
                       const size_t* displs) override {
    const int me = rank();
    const bool in_place = send == static_cast<const char*>(recv) + displs[me];
    void* d_recv = nullptr;
    const void* d_send = nullptr;
    ZFC_RETURN_IF_ERROR(usable());
    cuda::CurrentDevice on(device_);  // the caller's device is restored on return
    ZFC_RETURN_IF_ERROR(on.status());
    Staged out(recv_bounce_, stream(), device_, rank());
    Staged in(send_bounce_, stream(), device_, rank());
    ZFC_RETURN_IF_ERROR(out.output(recv, extent(recv_bytes, displs, size()), in_place, &d_recv));
    char* d_base = static_cast<char*>(d_recv);
    if (in_place) {
      d_send = d_base + displs[me];
    } else {
      ZFC_RETURN_IF_ERROR(in.input(send, recv_bytes[me], &d_send));
    }
    NcclGroup group;
    ZFC_NCCL_CHECK(group.start(), "ncclGroupStart");
    for (int r = 0; r < size(); ++r) {
      if (recv_bytes[r] == 0) continue;
      ZFC_NCCL_CHECK(ncclBroadcast(r == me ? d_send : d_base + displs[r], d_base + displs[r],
                                   recv_bytes[r], ncclUint8, r, comm_, stream()),
                     "ncclBroadcast");
    }
    ZFC_NCCL_CHECK(group.end(), "ncclGroupEnd");
    return complete(out, in);
  }

  // Grouped point-to-point sends and receives; this rank's own block is a device copy.
  Status do_alltoallv(const void* send, const size_t* send_bytes, const size_t* send_displs,
                      void* recv, const size_t* recv_bytes,
                      const size_t* recv_displs) override {
    const int me = rank();
    void* d_recv = nullptr;
    const void* d_send = nullptr;
    ZFC_RETURN_IF_ERROR(usable());
    cuda::CurrentDevice on(device_);  // the caller's device is restored on return
    ZFC_RETURN_IF_ERROR(on.status());
    Staged out(recv_bounce_, stream(), device_, rank());
    Staged in(send_bounce_, stream(), device_, rank());
    ZFC_RETURN_IF_ERROR(
        out.output(recv, extent(recv_bytes, recv_displs, size()), false, &d_recv));
    ZFC_RETURN_IF_ERROR(in.input(send, extent(send_bytes, send_displs, size()), &d_send));
    const char* s = static_cast<const char*>(d_send);
    char* d = static_cast<char*>(d_recv);
    if (send_bytes[me] > 0) {
      ZFC_RETURN_IF_ERROR(cuda::cuda_check(
          cudaMemcpyAsync(d + recv_displs[me], s + send_displs[me], send_bytes[me],
                          cudaMemcpyDeviceToDevice, stream()),
          "cudaMemcpyAsync"));
    }
    NcclGroup group;
    ZFC_NCCL_CHECK(group.start(), "ncclGroupStart");
    for (int r = 0; r < size(); ++r) {
      if (r == me) continue;
      if (send_bytes[r] > 0) {
        ZFC_NCCL_CHECK(ncclSend(s + send_displs[r], send_bytes[r], ncclUint8, r, comm_, stream()),
                       "ncclSend");
      }
      if (recv_bytes[r] > 0) {
        ZFC_NCCL_CHECK(ncclRecv(d + recv_displs[r], recv_bytes[r], ncclUint8, r, comm_, stream()),
                       "ncclRecv");
      }
    }
    ZFC_NCCL_CHECK(group.end(), "ncclGroupEnd");
    return complete(out, in);
  }

  Status do_barrier() override {
    ZFC_RETURN_IF_ERROR(usable());
    cuda::CurrentDevice on(device_);  // the caller's device is restored on return
    ZFC_RETURN_IF_ERROR(on.status());
    ZFC_RETURN_IF_ERROR(recv_bounce_.reserve(sizeof(int)));
    int* flag = static_cast<int*>(recv_bounce_.data());
    ZFC_NCCL_CHECK(ncclAllReduce(flag, flag, 1, ncclInt32, ncclSum, comm_, stream()),
                   "ncclAllReduce");
    return wait();
  }

 private:
  Status usable() const {
    if (abandoned_) {
      return error(zfcInvalidUsage, "rank %d: the NCCL communicator was aborted", rank());
    }
    return Status::Ok();
  }

  // The stream the calls run on: the caller's while queued there, else the transport's own.
  cudaStream_t stream() const { return queue_ != nullptr ? queue_ : own_stream_; }

  // The end of a data call: queued on the caller's stream with nothing to copy back, it
  // returns once NCCL has queued its kernels there (the non-blocking communicator may still
  // be queueing them when the call returns; the caller's next kernels must follow them) but
  // before they run (their errors are found by the next wait or poll_async_error); else it
  // waits for the stream and copies a staged output back.
  Status complete(Staged& out, const Staged& in) {
    if (queue_ != nullptr && !out.stages_output() && !in.stages_input()) {
      return wait_ready(comm_, "an NCCL group");
    }
    ZFC_RETURN_IF_ERROR(wait());
    return out.finish();
  }

  Status wait_ready(ncclComm_t comm, const char* what) {
    Status s = wait_comm_ready(comm, rank(), timeout_ms_, what);
    if (!s.ok()) abandon();
    return s;
  }

  Status wait() { return wait_for(stream()); }

  // Until stream `s` has run what was queued there. NCCL's asynchronous error (a peer gone, a
  // network failure) and the timeout both abort the communicator: its kernels may never end
  // otherwise, and the next call then fails at once instead of waiting again. The group's
  // queueing (wait_ready) and the stream each have timeout_ms.
  Status wait_for(cudaStream_t s) {
    ZFC_RETURN_IF_ERROR(wait_ready(comm_, "an NCCL group"));
    const auto start = Clock::now();
    for (;;) {
      const cudaError_t q = cudaStreamQuery(s);
      if (q == cudaSuccess) return Status::Ok();
      if (q != cudaErrorNotReady) {
        // The stream holds other kernels too (the caller's, the library's): whichever failed,
        // the error is sticky and NCCL's kernels on it will not end.
        abandon();
        return cuda::cuda_check(q, "the work on the stream an NCCL operation was queued on");
      }
      ncclResult_t state = ncclSuccess;
      const ncclResult_t asked = ncclCommGetAsyncError(comm_, &state);
      if (asked != ncclSuccess) state = asked;
      if (state != ncclSuccess && state != ncclInProgress) {
        abandon();
        return nccl_error(state, rank(), "an NCCL operation (a peer failed or left)");
      }
      if (timeout_ms_ > 0 && Clock::now() - start > std::chrono::milliseconds(timeout_ms_)) {
        abandon();
        return error(zfcTimeout,
                     "rank %d: an NCCL operation did not finish within timeout_ms %d; the "
                     "communicator was aborted", rank(), timeout_ms_);
      }
      std::this_thread::yield();
    }
  }

  ncclComm_t comm_;
  int device_;
  int timeout_ms_;
  cudaStream_t own_stream_;
  // The caller's stream while calls are queued on it (set_queue_stream), else nullptr.
  cudaStream_t queue_ = nullptr;
  cuda::DeviceBuffer send_bounce_;
  cuda::DeviceBuffer recv_bounce_;
  bool abandoned_ = false;
};

// What every rank tells the others before NCCL is started: whether it can, and why not.
struct Verdict {
  int32_t ok;
  int32_t code;
  char message[248];
  ncclUniqueId id;  // meaningful from rank 0
};

// The device this rank's NCCL communicator runs on: the config's, or the current one.
Status choose_device(int rank, int device, int* chosen) {
  if (cuda::device_count() == 0) {
    return error(zfcUnsupported, "rank %d has no device for the NCCL transport: %s", rank,
                 cuda::no_device_reason());
  }
  int dev = device;
  if (dev < 0) ZFC_RETURN_IF_ERROR(cuda::cuda_check(cudaGetDevice(&dev), "cudaGetDevice"));
  if (dev >= cuda::device_count()) {
    return error(zfcInvalidArgument, "rank %d: config device %d, but there are %d devices",
                 rank, dev, cuda::device_count());
  }
  *chosen = dev;
  return Status::Ok();
}

// Every rank's verdict; the first failed one becomes every rank's error.
Status agree_verdicts(Transport& bootstrap, const Status& local, Verdict* mine,
                      ncclUniqueId* id) {
  mine->ok = local.ok() ? 1 : 0;
  mine->code = static_cast<int32_t>(local.code());
  std::snprintf(mine->message, sizeof(mine->message), "%s", local.message().c_str());
  std::vector<Verdict> all(static_cast<size_t>(bootstrap.size()));
  ZFC_RETURN_IF_ERROR(bootstrap.allgather(mine, sizeof(Verdict), all.data()));
  for (const Verdict& v : all) {
    if (!v.ok) return error(static_cast<zfcResult_t>(v.code), "%s", v.message);
  }
  *id = all[0].id;
  return Status::Ok();
}

}  // namespace

Status nccl_transport_check() { return Status::Ok(); }

Status create_nccl_transport(Transport& bootstrap, int device, int timeout_ms,
                             std::unique_ptr<Transport>* out) {
  const int rank = bootstrap.rank();
  Verdict mine{};
  int dev = -1;
  Status local = choose_device(rank, device, &dev);
  // NCCL is started on the chosen device; the caller's current device is restored after.
  std::optional<cuda::CurrentDevice> on;
  if (local.ok()) {
    on.emplace(dev);
    local = on->status();
  }
  if (local.ok() && rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&mine.id);
    if (r != ncclSuccess) local = nccl_error(r, rank, "ncclGetUniqueId");
  }
  ncclUniqueId id;
  ZFC_RETURN_IF_ERROR(agree_verdicts(bootstrap, local, &mine, &id));

  const int init_ms = timeout_ms > 0 ? timeout_ms : kDefaultInitMs;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, bootstrap.size(), id, rank, &config);
  Status started = r == ncclSuccess || r == ncclInProgress
                       ? wait_comm_ready(comm, rank, init_ms, "ncclCommInitRankConfig")
                       : nccl_error(r, rank, "ncclCommInitRankConfig");
  // A second verdict, so that a rank whose init failed does not leave the others with a
  // communicator they cannot use.
  Verdict after{};
  Status agreed = agree_verdicts(bootstrap, started, &after, &id);
  if (!agreed.ok()) {
    if (comm != nullptr) ncclCommAbort(comm);
    return agreed;
  }
  return NcclTransport::wrap(comm, dev, timeout_ms, out);
}

}  // namespace zfc
