#include "refusals.hpp"

#include <memory>
#include <string>

#include "errors.hpp"
#include "group_calls.hpp"

namespace zfcpy {

bool checks_pass(const Refusal& how, const std::function<void()>& checks, py::object* pending) {
  int code = zfcInvalidArgument;
  std::string message;
  // Whatever the checks raise is this rank's refusal: a zipfcoll.Error keeps its code, any
  // other exception (an export that DLPack refused, a failed cast, no memory) is agreed as
  // zfcInvalidArgument with its text, so that no rank raises alone while the others wait.
  try {
    checks();
    return true;
  } catch (py::error_already_set& e) {
    message = py::str(e.value()).cast<std::string>();
    if (e.matches(py::module_::import("zipfcoll._errors").attr("Error"))) {
      const int c = e.value().attr("code").cast<int>();
      if (c > zfcSuccess && c < zfcNumResults) code = c;
    } else {
      message = py::str(e.type().attr("__name__")).cast<std::string>() + ": " + message;
    }
  } catch (const std::exception& e) {
    message = e.what();
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
