// Comm.group(), group_start() and group_end(), and zipfcoll.Pending: a step's collectives
// under one agreement, as zfcGroupStart / zfcGroupEnd give them to C callers.
#include <unordered_map>

#include "errors.hpp"
#include "group_calls.hpp"
#include "handles.hpp"

namespace zfcpy {

namespace {

// The groups open from Python, by communicator: the library keeps the group itself; this
// keeps the Pending of each call recorded in it, completed by the outermost end. Keyed by
// handle rather than by Comm object, because a seed group's Comm may be shown through more
// than one Python object. Touched only with the GIL held.
struct OpenGroup {
  int depth = 0;
  std::vector<std::shared_ptr<PendingCall>> calls;
};

// Never destroyed: at exit, static destructors run after the interpreter is gone, and the
// Pendings of a group left open hold Python objects.
std::unordered_map<zfcComm_t, OpenGroup>& open_groups() {
  static auto* groups = new std::unordered_map<zfcComm_t, OpenGroup>();
  return *groups;
}

void group_start(const Comm& c) {
  zfcComm_t h = c.get();
  check(zfcGroupStart(h), h);
  ++open_groups()[h].depth;
}

void group_end(const Comm& c) {
  zfcComm_t h = c.get();
  auto it = open_groups().find(h);
  // Without a start the library's own message; an inner end only counts down.
  if (it == open_groups().end() || --it->second.depth > 0) {
    check(zfcGroupEnd(h), h);
    return;
  }
  std::vector<std::shared_ptr<PendingCall>> calls = std::move(it->second.calls);
  open_groups().erase(it);
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcGroupEnd(h);
  }
  if (r != zfcSuccess) {
    const std::string message = error_message(r, h);
    for (auto& call : calls) call->fail(r, message);
    raise_error(r, message);
  }
  // The library wrote every output: each call gets its result, or, if making it fails here
  // (memory), that failure, and the first such failure is raised after all are done.
  std::string unmade;
  for (auto& call : calls) {
    try {
      call->complete();
    } catch (const std::exception& e) {
      call->fail(zfcInternalError, e.what());
      if (unmade.empty()) unmade = e.what();
    }
  }
  if (!unmade.empty()) raise_error(zfcInternalError, unmade);
}

// The `with comm.group():` block: a group from entry to exit. Leaving on an exception still
// ends the group, since the other ranks end theirs (a rank that recorded fewer calls makes
// it fail on every rank, with nothing written); the body's exception is what propagates.
class GroupScope {
 public:
  explicit GroupScope(py::object comm) : comm_(std::move(comm)) {}
  py::object enter(py::object self) {
    group_start(comm_.cast<const Comm&>());
    return self;
  }
  bool exit(py::handle type) {
    try {
      group_end(comm_.cast<const Comm&>());
    } catch (py::error_already_set& e) {
      // After the body raised, the calls' Pendings carry the group's error; the body's
      // exception is the one to see.
      const bool body_raised = !type.is_none();
      if (!body_raised || !e.matches(py::module_::import("zipfcoll._errors").attr("Error"))) {
        throw;
      }
    }
    return false;
  }

 private:
  py::object comm_;
};

}  // namespace

void PendingCall::complete() {
  result_ = make_result(*this);
  state_ = State::kDone;
  arrays.clear();
  objects.clear();
}

void PendingCall::fail(int code, const std::string& message) {
  state_ = State::kFailed;
  code_ = code;
  message_ = message;
  arrays.clear();
  objects.clear();
}

py::object PendingCall::wait() const {
  switch (state_) {
    case State::kDone: return result_;
    case State::kFailed: raise_error(code_, message_);
    case State::kRecorded: break;
  }
  raise_error(zfcInvalidUsage, "this " + what_ + " was recorded in a group that has not "
              "ended: its result is written by the group's end (the end of the `with "
              "comm.group()` block, or group_end())");
}

bool group_open(zfcComm_t comm) { return open_groups().count(comm) != 0; }

py::object record_in_group(zfcComm_t comm, std::shared_ptr<PendingCall> call,
                           const std::function<zfcResult_t()>& record) {
  std::vector<std::shared_ptr<PendingCall>>& calls = open_groups().at(comm).calls;
  py::object pending = py::cast(call);
  calls.push_back(call);
  const zfcResult_t r = record();
  if (r != zfcSuccess) {
    calls.pop_back();  // nothing was recorded
    check(r, comm);
  }
  return pending;
}

py::object record_refused(zfcComm_t comm, const char* what) {
  auto call = std::make_shared<PendingCall>(what);
  call->make_result = [](PendingCall& p) -> py::object {
    raise_error(zfcInternalError, "the group of a refused " + p.what() + " succeeded");
  };
  py::object pending = py::cast(call);
  open_groups().at(comm).calls.push_back(std::move(call));
  return pending;
}

void forget_group(zfcComm_t comm, const char* why) {
  auto it = open_groups().find(comm);
  if (it == open_groups().end()) return;
  std::vector<std::shared_ptr<PendingCall>> calls = std::move(it->second.calls);
  open_groups().erase(it);
  for (auto& call : calls) call->fail(zfcInvalidUsage, why);
}

void bind_groups(py::class_<Comm>& comm, py::module_& m) {
  py::class_<PendingCall, std::shared_ptr<PendingCall>>(m, "Pending",
      "A call recorded in a group (Comm.group()): its buffers are held until the group\n"
      "ends, which runs it and writes its outputs.")
      .def("wait", &PendingCall::wait,
           "The call's result (what it returns outside a group), once its group ended;\n"
           "the group's error if it failed; InvalidUsageError while the group is open.")
      .def_property_readonly("done", &PendingCall::done,
                             "True once the group ended, whether it succeeded or not.")
      .def("__repr__", [](const PendingCall& p) {
        return "<zipfcoll.Pending " + p.what() + (p.done() ? " (ended)>" : " (recorded)>");
      });
  py::class_<GroupScope>(m, "Group", "The context manager of Comm.group().")
      .def("__enter__", [](py::object self) { return self.cast<GroupScope&>().enter(self); })
      .def("__exit__", [](GroupScope& g, py::object type, py::object, py::object) {
        return g.exit(type);
      });
  comm.def("group", [](py::object self) { return GroupScope(self); },
           "Local on entry, collective on exit: `with comm.group():` records this Comm's\n"
           "allreduce and its plans' reduce, sharded_gather and sharded_reduce_apply calls,\n"
           "which return a Pending at once, and runs them all on leaving the block under one\n"
           "agreement (small host allreduces ride on its exchange). Every rank must record\n"
           "the same calls in the same order.\n"
           "Each call's buffers must stay alive and unchanged until the block ends; results\n"
           "(Pending.wait()) and outputs are written only when the whole group succeeds.\n"
           "Groups nest; unique_merge, split and SeedGroup are refused inside one.")
      .def("group_start", &group_start,
           "Local. Opens a group, as entering `with comm.group()` does.")
      .def("group_end", &group_end,
           "Collective. Ends the group group_start() opened (the outermost end runs it);\n"
           "raises its error on every rank when any call failed on any rank.");
}

}  // namespace zfcpy
