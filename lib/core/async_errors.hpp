// The failures of a communicator's bounded calls (zfcSparseReduceBounded), which a device
// finds after the call returned, and of the transfers a device-resident zfcSparseReduce left
// queued on its stream: each call notes where its status will be, and the first
// failure among those that finished is reported once, by zfcCommGetAsyncError or by the
// communicator's next call that is not bounded (which waits for them). The status of every
// call is alike on every rank, so the ranks' next calls fail alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "host_device/bounded_step.hpp"
#include "host_device/status.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {

// The text of a failed verdict, for a plan of `vocab` indices.
std::string describe_verdict(const BoundedVerdict& v, int64_t vocab);

class AsyncErrors {
 public:
  AsyncErrors() = default;
  ~AsyncErrors();
  AsyncErrors(const AsyncErrors&) = delete;
  AsyncErrors& operator=(const AsyncErrors&) = delete;

  // A call whose verdict is known now (host buffers).
  void note(const BoundedVerdict& verdict, int64_t vocab);
  // A call whose verdict the device writes to d_verdict on `stream`: read back into pinned
  // memory behind the call's work, without waiting; nothing while `stream` is being captured
  // in a CUDA graph. zfcUnsupported without CUDA.
  Status note_device(const BoundedVerdict* d_verdict, const void* stream, int64_t vocab);
  // A call that returned with transfers still queued on `stream` and no verdict of its own
  // (a zfcSparseReduce that left its overflow flag on the device): its end is waited for
  // like a bounded call's, so that a failure of those transfers is reported alike.
  Status note_device_end(const void* stream);
  // How take() waits: `poll` reports a failure of the transfers queued on the calls' streams
  // (a peer lost), and timeout_ms (0: none) bounds the wait.
  struct Wait {
    std::function<Status()> poll;
    int timeout_ms = 0;
  };
  // The first unreported failure, in the order the calls were made: zfcSuccess if none,
  // zfcInProgress when some call has not finished (and none before it failed). With `wait`,
  // waits for the calls first, as it says; a failure of that wait (the poll's, or zfcTimeout)
  // is returned instead. A failure returned is cleared, its detail in *detail.
  zfcResult_t take(const Wait* wait, std::string* detail);

 private:
  struct Pending;
  Status queue(const BoundedVerdict* d_verdict, const void* stream, int64_t vocab);
  void fold(const BoundedVerdict& verdict, int64_t vocab);
  zfcResult_t finish_take(std::string* detail);

  std::deque<Pending*> pending_;  // device calls in the order they were queued
  std::vector<Pending*> spare_;   // finished, kept for the next call
  zfcResult_t first_ = zfcSuccess;
  std::string first_detail_;
};

}  // namespace zfc
