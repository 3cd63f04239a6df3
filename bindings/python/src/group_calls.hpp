// Grouped calls from Python (zfcGroupStart / zfcGroupEnd): inside `with comm.group():` the
// communicator's allreduce and its plans' reduce, sharded_gather and sharded_reduce_apply
// are recorded by the library and return a zipfcoll.Pending; the library reads their
// buffers and writes their outputs at the group's end, so each Pending holds what its call
// borrowed until then and gives the result after.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "zipfcoll/zipfcoll.h"

namespace py = pybind11;

namespace zfcpy {

class PendingCall {
 public:
  explicit PendingCall(std::string what) : what_(std::move(what)) {}
  PendingCall(const PendingCall&) = delete;
  PendingCall& operator=(const PendingCall&) = delete;

  // What the call borrowed, held until the group ends: the library reads it then.
  std::vector<std::unique_ptr<Array>> arrays;
  // Python objects the result is made of (an output array, the plan's view owner).
  std::vector<py::object> objects;
  // Where the library writes the call's outputs when the group ends.
  int overflowed = 0;
  zfcSparseResult_t sparse = ZFC_SPARSE_RESULT_INITIALIZER;
  // Makes the call's result from the above, once the group ran.
  std::function<py::object(PendingCall&)> make_result;

  // The group ran: the result is made and the borrowed arrays are let go.
  void complete();
  // The group failed (or its communicator went away): wait() raises this.
  void fail(int code, const std::string& message);
  bool done() const { return state_ != State::kRecorded; }
  // The result; raises the group's error, or InvalidUsageError while the group is open.
  py::object wait() const;
  const std::string& what() const { return what_; }

 private:
  enum class State { kRecorded, kDone, kFailed };
  std::string what_;
  State state_ = State::kRecorded;
  py::object result_;
  int code_ = zfcSuccess;
  std::string message_;
};

// Whether a group opened from Python is open on `comm`: calls on it are then recorded.
bool group_open(zfcComm_t comm);

// Records `call` (holding the arrays it borrowed) in the group open on `comm`, and returns
// the zipfcoll.Pending the caller gets. `record` makes the library call, which keeps
// pointers into `call` and its arrays: everything that can fail (memory, Python objects) is
// done before it, so that a call the library recorded is always completed or failed.
py::object record_in_group(zfcComm_t comm, std::shared_ptr<PendingCall> call,
                           const std::function<zfcResult_t()>& record);

// For a call this rank refused inside the group open on `comm`, with the refusal set as the
// communicator's local error (refusals.hpp): a Pending recorded with the group's calls and
// nothing in the library, so that the group's end, which fails on every rank with the
// refusal, fails it too.
py::object record_refused(zfcComm_t comm, const char* what);

// `comm` is being freed without communicating (aborted, or its seed group destroyed): the
// library drops what its open group recorded, so those calls fail with `why`.
void forget_group(zfcComm_t comm, const char* why);

}  // namespace zfcpy
