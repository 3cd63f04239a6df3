#include "refusals.hpp"

#include <memory>
#include <string>

#include "errors.hpp"
#include "group_calls.hpp"

namespace zfcpy {

bool checks_pass(const Refusal& how, const std::function<void()>& checks, py::object* pending) {
  int code = zfcSuccess;
  std::string message;
  try {
    checks();
    return true;
  } catch (py::error_already_set& e) {
    if (!e.matches(py::module_::import("zipfcoll._errors").attr("Error"))) throw;
    code = e.value().attr("code").cast<int>();
    message = py::str(e.value()).cast<std::string>();
  }
  const zfcResult_t refused = static_cast<zfcResult_t>(code);
  check(zfcCommSetLocalError(how.comm, refused, message.c_str()), how.comm);
  if (how.groupable && group_open(how.comm)) {
    *pending = record_refused(how.comm, how.what);
    return false;
  }
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = how.join();
  }
  check(r, how.comm);
  // The call took the refusal as this rank's verdict, so every rank's call failed.
  raise_error(zfcInternalError, std::string(how.what) + " succeeded although this rank "
              "refused its arguments: " + message);
}

}  // namespace zfcpy
