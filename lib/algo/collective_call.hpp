// One collective call as the agreement sees it: prepared locally, agreed with the other ranks
// (alone, in its own first exchange, or with the other calls of a group in one exchange;
// algo/call_group.hpp), then run, and only then made visible to the caller.
#pragma once

#include <cstddef>

#include "algo/agreement.hpp"
#include "core/comm.hpp"

namespace zfc {

class CollectiveCall {
 public:
  virtual ~CollectiveCall() = default;
  // The local phase: this rank's checks, staging of device inputs, local sets. A failure is
  // recorded in header() (the other ranks learn it in the agreement), not returned.
  virtual void prepare(zfcOpStats_t* op) = 0;
  virtual LocalHeader& header() = 0;
  // What rides behind the header in the first exchange (the distinct keys, a few values).
  virtual const void* payload() const { return nullptr; }
  virtual size_t payload_bytes() const { return 0; }
  // Whether the call first reports a failure of an earlier bounded call found since
  // (core/async_errors.hpp), waiting for them: every call but a bounded one, which never waits.
  virtual bool reports_async_errors() const { return true; }
  // The workspace the call's exchanges use (and its agreement, when it runs alone).
  virtual Workspace& workspace() = 0;
  // Checks every rank makes alike from what was agreed, before any call of a group runs, so
  // that a group fails before it has written anything.
  virtual Status check_agreed(const Agreed&) { return Status::Ok(); }
  // Whether run() writes the caller's memory (rather than publish()); a group runs such
  // calls last. Answered after check_agreed(), from what was agreed, so alike on every rank.
  virtual bool writes_while_running() const { return false; }
  // The exchanges after the agreement.
  virtual Status run(const Agreed& agreed, zfcOpStats_t* op) = 0;
  // Whether a value the call summed was not finite (what its overflow flag reports); asked
  // after every call of the group ran, so alike on every rank.
  virtual bool overflowed() const { return false; }
  // Told before publish() when some call of its group overflowed: a call that updates the
  // caller's table leaves it as it was then, so that a grouped step is skipped whole.
  virtual void hold_updates() {}
  // Hands the results to the caller; after every call of the group ran.
  virtual void publish() = 0;
};

// Puts the error the caller set with zfcCommSetLocalError (comm.pending_error) into `h` in
// place of whatever h holds, and takes it: the caller refused the call's arguments before
// the library saw them and passed neutral ones, so its error, not theirs, is this rank's
// verdict. Every collective call takes it before its agreement (report_async_errors does,
// and the bounded call, which does not report those, itself).
void take_pending_error(zfcComm& comm, LocalHeader* h);

// take_pending_error, then puts the first failure of the communicator's bounded calls not
// yet reported into `h`, after waiting for them (core/async_errors.hpp); every rank waits for
// the same calls, whose verdicts agree, so every rank's header fails alike. Taken whatever h
// already holds, so that it is reported once.
void report_async_errors(zfcComm& comm, LocalHeader* h);

// Runs a call by itself: its header and payload in its own first exchange (timed as the
// header phase), the verdict, the call's exchanges; one entry in the communicator's stats.
Status run_alone(zfcComm& comm, CollectiveCall& call);

}  // namespace zfc
