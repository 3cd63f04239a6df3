#include "algo/call_group.hpp"

#include <algorithm>
#include <string>

#include "algo/group_agreement.hpp"
#include "core/stats.hpp"

namespace zfc {

void take_pending_error(zfcComm& comm, LocalHeader* h) {
  if (comm.pending_error.ok()) return;
  h->status = comm.pending_error.code();
  h->message = comm.pending_error.message().substr(0, kMaxFailureText);
  comm.pending_error = Status::Ok();
}

void report_async_errors(zfcComm& comm, LocalHeader* h) {
  take_pending_error(comm, h);
  AsyncErrors::Wait wait;
  wait.poll = [&comm] { return comm.transport->poll_async_error(); };
  wait.timeout_ms = comm.config.timeout_ms;
  std::string detail;
  const zfcResult_t earlier = comm.async_errors.take(&wait, &detail);
  if (earlier == zfcTimeout) {
    // Queued transfers that never end hold the stream: released by aborting the transport.
    comm.transport->abandon();
  }
  if (earlier != zfcSuccess) {
    header_fail(h, error(earlier, "%s (found after that call returned)", detail.c_str()));
  }
}

Status run_alone(zfcComm& comm, CollectiveCall& call) {
  Transport& t = *comm.transport;
  OpRecorder recorder(&comm, &call.workspace());
  zfcOpStats_t* op = recorder.op();
  call.prepare(op);
  if (call.reports_async_errors()) report_async_errors(comm, &call.header());
  Agreed agreed;
  ZFC_RETURN_IF_ERROR(exchange_and_agree(t, call.workspace(), call.header(), op, &agreed,
                                         call.payload(), call.payload_bytes()));
  ZFC_RETURN_IF_ERROR(call.check_agreed(agreed));
  ZFC_RETURN_IF_ERROR(call.run(agreed, op));
  call.publish();
  recorder.commit();
  return Status::Ok();
}

void CallGroup::fail(const Status& s) {
  if (failure_.ok()) failure_ = s;
}

bool CallGroup::holds(const void* owner) const {
  return owner != nullptr &&
         std::any_of(calls_.begin(), calls_.end(),
                     [owner](const Recorded& r) { return r.owner == owner; });
}

StagingBuffers& CallGroup::next_staging() {
  if (staging_.size() <= staged_) staging_.emplace_back();
  return staging_[staged_++];
}

void CallGroup::clear() {
  calls_.clear();
  failure_ = Status::Ok();
  staged_ = 0;
}

namespace {

// The order calls run in: those that write the caller's memory only when published first,
// then those that write it as they run (the staged allreduces), each in the order recorded,
// so that a group that fails part-way has written nothing of the caller's.
std::vector<size_t> run_order(const std::vector<std::unique_ptr<CollectiveCall>>& calls) {
  std::vector<size_t> order;
  for (int late = 0; late < 2; ++late) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (calls[i]->writes_while_running() == (late == 1)) order.push_back(i);
    }
  }
  return order;
}

}  // namespace

Status CallGroup::end(zfcComm& comm) {
  std::vector<std::unique_ptr<CollectiveCall>> calls;
  for (Recorded& r : calls_) calls.push_back(std::move(r.call));
  const Status failure = failure_;
  clear();
  // A pending zfcCommSetLocalError stands for the calls this rank refused to record: the
  // others wait for it in the exchange.
  if (calls.empty() && failure.ok() && comm.pending_error.ok()) return Status::Ok();
  Transport& t = *comm.transport;
  OpRecorder recorder(&comm, &ws_);
  zfcOpStats_t* op = recorder.op();
  for (auto& c : calls) recorder.add_workspace(&c->workspace());
  LocalHeader group{make_header(OpKind::kGroup)};
  group.count = static_cast<int64_t>(calls.size());
  header_fail(&group, failure);
  report_async_errors(comm, &group);
  GroupSide mine;
  mine.group = &group;
  for (size_t i = 0; i < calls.size(); ++i) {
    CollectiveCall& c = *calls[i];
    c.prepare(op);
    mine.calls.push_back(&c.header());
    mine.payloads.push_back(c.payload());
    mine.payload_bytes.push_back(c.payload_bytes());
    // A call's local failure is the group's: its header, the first 96 bytes of this rank's
    // block, is what every rank reads (whatever this rank's calls), so every rank then takes
    // the failure texts' round alike, as for a single operation.
    const LocalHeader& h = c.header();
    if (h.status != zfcSuccess) {
      header_fail(&group, in_group(i, Status(static_cast<zfcResult_t>(h.status), h.message)));
    }
  }
  GroupAgreed agreed;
  {
    PhaseTimer timer(op, zfcPhaseHeader);
    ZFC_RETURN_IF_ERROR(exchange_group(t, ws_, mine, &agreed));
  }
  ZFC_RETURN_IF_ERROR(agree_group(agreed, t.size()));
  for (size_t i = 0; i < calls.size(); ++i) {
    const Status s = calls[i]->check_agreed(agreed.calls[i]);
    if (!s.ok()) return in_group(i, s);
  }
  for (size_t i : run_order(calls)) {
    const Status s = calls[i]->run(agreed.calls[i], op);
    if (!s.ok()) return in_group(i, s);  // every rank fails in the same call
  }
  const bool overflow = std::any_of(calls.begin(), calls.end(),
                                    [](const auto& c) { return c->overflowed(); });
  for (auto& c : calls) {
    if (overflow) c->hold_updates();
    c->publish();
  }
  op->calls = calls.size();
  recorder.commit();
  return Status::Ok();
}

CallGroup& open_group(zfcComm& comm) {
  if (!comm.group) comm.group = std::make_unique<CallGroup>();
  return static_cast<CallGroup&>(*comm.group);
}

Status refuse_in_group(zfcComm& comm, const char* call) {
  const Status s = error(zfcInvalidUsage, "%s was called between zfcGroupStart and "
                         "zfcGroupEnd: a group holds zfcAllReduce, zfcSparseReduce, "
                         "zfcShardedGather and zfcShardedReduceApply calls only", call);
  open_group(comm).fail(s);
  return s;
}

}  // namespace zfc
