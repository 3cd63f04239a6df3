// A step's collectives in one call (zfcGroupStart / zfcGroupEnd): the calls made on a
// communicator between the two are recorded, then run at the end after one agreement for all
// of them, whose first exchange also carries each call's payload (the plans' distinct keys,
// the small allreduces' values). Results are handed to the caller only after every call ran.
#pragma once

#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "algo/collective_call.hpp"
#include "exec/host_staging.hpp"

namespace zfc {

class CallGroup final : public GroupRecord {
 public:
  // Records the call `make()` returns, made inside the group. `owner` is the plan it runs on
  // (NULL for the communicator's own calls): a plan may run once per group. A failure to
  // make it (memory) fails the group, so that every rank hears of it at zfcGroupEnd instead
  // of this rank alone holding one call fewer.
  template <class Make>
  void record(Make make, const void* owner) {
    try {
      calls_.push_back({make(), owner});
    } catch (const std::bad_alloc&) {
      fail(error(zfcOutOfMemory, "host memory allocation failed while recording a call"));
    } catch (const std::exception& e) {
      fail(error(zfcInternalError, "unexpected exception while recording a call: %s",
                 e.what()));
    }
  }
  // Records this rank's failure to record a call (the first one wins); end() reports it on
  // every rank.
  void fail(const Status& s);
  bool holds(const void* owner) const;
  // Staging buffers for the group's next staged allreduce: each call keeps its staged copies
  // until the group runs.
  StagingBuffers& next_staging();
  // Collective: runs what was recorded and empties the group. An empty group with no failure
  // (and no zfcCommSetLocalError pending) does nothing and sends nothing.
  Status end(zfcComm& comm);
  // Drops what was recorded (the communicator is aborted or destroyed).
  void clear();

 private:
  struct Recorded {
    std::unique_ptr<CollectiveCall> call;
    const void* owner;  // the plan it runs on, or NULL
  };
  std::vector<Recorded> calls_;
  Status failure_;
  size_t staged_ = 0;
  Workspace ws_;                           // the group's first exchange
  std::deque<StagingBuffers> staging_;     // kept between groups: pinned memory is slow to get
};

// The group being recorded on comm (comm.group_depth > 0).
CallGroup& open_group(zfcComm& comm);

// For a collective that cannot be part of a group (`call` names it), called while one is
// open on comm: refuses it, and records the refusal so that zfcGroupEnd fails on every rank.
Status refuse_in_group(zfcComm& comm, const char* call);

// A call of type Call on a plan, made from `args`: run alone (on the stack), or recorded
// in the group open on the plan's communicator (a plan may run once per group).
template <class Call, class... Args>
Status run_or_record(zfcComm& comm, const void* plan, Args&&... args) {
  if (comm.group_depth == 0) {
    Call call(std::forward<Args>(args)...);
    return run_alone(comm, call);
  }
  CallGroup& group = open_group(comm);
  if (group.holds(plan)) {
    group.fail(error(zfcInvalidUsage, "plan %p runs twice in one group: its results live in "
                     "the plan until its next call, so give each table its own plan",
                     plan));
    return Status::Ok();
  }
  group.record([&] { return std::make_unique<Call>(std::forward<Args>(args)...); }, plan);
  return Status::Ok();
}

}  // namespace zfc
