// The module's own refusals of a collective call's arguments (dtype, shape, contiguity, out
// arrays, stream), made before the library sees the call. The other ranks are in the call
// already and would wait for this one, so a refusal goes into the call's agreement
// (zfcCommSetLocalError): every rank fails at once with the refusing rank's error, as for an
// argument the library checks itself.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>

#include "zipfcoll/zipfcoll.h"

namespace py = pybind11;

namespace zfcpy {

// How a refused call takes part in the agreement.
struct Refusal {
  zfcComm_t comm = nullptr;
  const char* what = "";       // the call, for a Pending's messages
  bool groupable = false;      // recorded in a group open from Python (else run or refused)
  // The call with neutral arguments (count 0, NULL buffers, no stream), made with the GIL
  // released: this rank's part in the agreement, which fails with the refusal.
  std::function<zfcResult_t()> join;
};

// Runs `checks`, the module's checks of a collective call's arguments; true when they
// pass. When they raise a zipfcoll.Error, the error becomes the communicator's local error
// and: inside a group open from Python, for a groupable call, *pending is set to a Pending
// that fails with the group (whose end reports the refusal on every rank); otherwise `join`
// makes the call, and the agreed error is raised, of the same class and with the same
// message ("rank R: ...", R this rank) on every rank. Any other exception the checks raise
// is agreed as zfcInvalidArgument with its type and text. (A TypeError pybind11 raises for
// an argument of the wrong Python type, before the function runs, stays on this rank.)
bool checks_pass(const Refusal& how, const std::function<void()>& checks, py::object* pending);

}  // namespace zfcpy
