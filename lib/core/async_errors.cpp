#include "core/async_errors.hpp"

#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <thread>

#include "exec/stream_readback.hpp"

namespace zfc {

namespace {

// The header field at byte `at`, for a disagreement's text.
const char* header_field_name(int64_t at) {
  switch (at) {
    case offsetof(OpHeader, op): return "operation (the ranks are out of step; 11 is this one)";
    case offsetof(OpHeader, sequence): return "collective number (the ranks are out of step)";
    case offsetof(OpHeader, algorithm): return "algorithm";
    case offsetof(OpHeader, local_unique): return "local distinct count";
    case offsetof(OpHeader, dim): return "dim";
    case offsetof(OpHeader, vocab): return "vocab_size";
    case offsetof(OpHeader, capacity): return "capacity";
    case offsetof(OpHeader, row_type): return "row data type";
    case offsetof(OpHeader, index_type): return "index data type";
    case offsetof(OpHeader, compression): return "compression";
    case offsetof(OpHeader, scale): return "compression scale (bits)";
    case offsetof(OpHeader, color): return "memory space (1: device)";
    case offsetof(OpHeader, key): return "agreement in its kernels (1: yes)";
    case offsetof(OpHeader, node): return "update";
  }
  return "header";
}

}  // namespace

std::string describe_verdict(const BoundedVerdict& v, int64_t vocab) {
  char text[320];
  const long long rank = static_cast<long long>(v.rank);
  switch (v.reason) {
    case kBoundedBadIndex:
      std::snprintf(text, sizeof text, "zfcSparseReduceBounded: rank %lld: indices[%lld] is "
                    "outside [0, %lld)", rank, static_cast<long long>(v.detail),
                    static_cast<long long>(vocab));
      break;
    case kBoundedDisagree:
      if (v.detail < 0) {
        std::snprintf(text, sizeof text, "zfcSparseReduceBounded: rank %lld sent no valid "
                      "operation header: the ranks are not calling the same zipfcoll "
                      "operation", rank);
      } else {
        std::snprintf(text, sizeof text, "zfcSparseReduceBounded: rank %lld's call differs "
                      "from rank 0's in its %s: rank 0 has %lld, rank %lld has %lld", rank,
                      header_field_name(v.detail), static_cast<long long>(v.v0), rank,
                      static_cast<long long>(v.vr));
      }
      break;
    case kBoundedRankFailed:
      std::snprintf(text, sizeof text, "zfcSparseReduceBounded: rank %lld: its own checks of "
                    "the call failed (%s; its call returned why)", rank,
                    zfcGetErrorString(static_cast<zfcResult_t>(v.result)));
      break;
    case kBoundedTooMany:
      std::snprintf(text, sizeof text, "zfcSparseReduceBounded: the ranks' counts add up to "
                    "%lld indices, more than the %d that int32 positions can address",
                    static_cast<long long>(v.detail), INT32_MAX);
      break;
    default:
      std::snprintf(text, sizeof text, "zfcSparseReduceBounded: the step has %s%lld distinct "
                    "indices, more than its capacity %lld%s",
                    v.vr != 0 ? "at least " : "", static_cast<long long>(v.num_unique),
                    static_cast<long long>(v.detail),
                    v.vr != 0 ? " (some rank's own exceed it, and its block held only part of "
                                "them)" : "");
      break;
  }
  return text;
}

// A device call's verdict on its way to the host.
struct AsyncErrors::Pending {
  StreamReadback readback;  // the verdict, read without waiting
  int64_t vocab = 0;
  BoundedVerdict& verdict() { return *static_cast<BoundedVerdict*>(readback.host()); }
};

Status AsyncErrors::note_device(const BoundedVerdict* d_verdict, const void* stream,
                                int64_t vocab) {
  return queue(d_verdict, stream, vocab);
}

Status AsyncErrors::note_device_end(const void* stream) { return queue(nullptr, stream, 0); }

// Readbacks are made once and reused (spare_): their pinned memory is slow to free.
Status AsyncErrors::queue(const BoundedVerdict* d_verdict, const void* stream,
                          int64_t vocab) {
  // A call being captured in a CUDA graph: what runs later are the graph's launches, which
  // this call cannot follow; their verdicts reach the caller's status only.
  bool captured = false;
  ZFC_RETURN_IF_ERROR(StreamReadback::capturing(stream, &captured));
  if (captured) return Status::Ok();
  Pending* p = nullptr;
  if (!spare_.empty()) {
    p = spare_.back();
    spare_.pop_back();
  } else {
    p = new Pending;
  }
  Status st = p->readback.reserve(sizeof(BoundedVerdict));
  if (st.ok()) {
    p->vocab = vocab;
    // No verdict of its own: result zfcSuccess, only the end is waited for.
    if (d_verdict == nullptr) p->verdict() = BoundedVerdict{};
    st = p->readback.queue(d_verdict, sizeof(BoundedVerdict), stream);
  }
  if (!st.ok()) {
    spare_.push_back(p);
    return st;
  }
  pending_.push_back(p);
  return Status::Ok();
}

// The calls in the order they were made, up to the first that has not finished: the first
// failure is the earliest call's. Waiting, each unfinished call is polled (with the
// transport's own check for failures of the transfers queued there) until it finishes, the
// transport reports a failure, or timeout_ms passes (0: no limit); the last two end the wait
// with that failure, and the calls not looked at stay pending.
zfcResult_t AsyncErrors::take(const Wait* wait, std::string* detail) {
  const auto start = std::chrono::steady_clock::now();
  while (!pending_.empty()) {
    Pending* p = pending_.front();
    std::string device_error;
    const StreamReadback::State state = p->readback.query(&device_error);
    if (state == StreamReadback::State::kPending) {
      if (wait == nullptr) break;
      const Status polled = wait->poll ? wait->poll() : Status::Ok();
      const bool late = wait->timeout_ms > 0 &&
                        std::chrono::steady_clock::now() - start >
                            std::chrono::milliseconds(wait->timeout_ms);
      if (!polled.ok() || late) {
        *detail = polled.ok()
                      ? "a bounded call's, or a device zfcSparseReduce's, work on its stream did not finish "
                        "within timeout_ms " + std::to_string(wait->timeout_ms)
                      : polled.message();
        return polled.ok() ? zfcTimeout : polled.code();
      }
      std::this_thread::yield();
      continue;
    }
    pending_.pop_front();
    if (state == StreamReadback::State::kDone) {
      fold(p->verdict(), p->vocab);
    } else if (first_ == zfcSuccess) {
      first_ = zfcSystemError;
      first_detail_ = "a call queued on the device failed: " + device_error;
    }
    spare_.push_back(p);
  }
  return finish_take(detail);
}

AsyncErrors::~AsyncErrors() {
  for (Pending* p : pending_) delete p;
  for (Pending* p : spare_) delete p;
}

void AsyncErrors::note(const BoundedVerdict& verdict, int64_t vocab) { fold(verdict, vocab); }

void AsyncErrors::fold(const BoundedVerdict& verdict, int64_t vocab) {
  if (verdict.result == zfcSuccess || first_ != zfcSuccess) return;
  first_ = static_cast<zfcResult_t>(verdict.result);
  first_detail_ = describe_verdict(verdict, vocab);
}

zfcResult_t AsyncErrors::finish_take(std::string* detail) {
  const zfcResult_t r = first_;
  if (r != zfcSuccess) {
    *detail = first_detail_;
    first_ = zfcSuccess;
    first_detail_.clear();
    return r;
  }
  return pending_.empty() ? zfcSuccess : zfcInProgress;
}

}  // namespace zfc
