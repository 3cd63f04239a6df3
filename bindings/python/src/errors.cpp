#include "errors.hpp"

#include <pybind11/pybind11.h>

#include <cstdarg>
#include <cstdio>

namespace py = pybind11;

namespace zfcpy {

void raise_error(int code, const std::string& message) {
  py::object cls = py::module_::import("zipfcoll._errors").attr("error_class")(code);
  py::object exc = cls(message);
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}

void raise_invalid(const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  raise_error(zfcInvalidArgument, text);
}

std::string error_message(zfcResult_t r, zfcComm_t comm) {
  std::string detail = zfcGetLastError(comm);
  return detail.empty() ? std::string(zfcGetErrorString(r)) : detail;
}

void check(zfcResult_t r, zfcComm_t comm) {
  if (r != zfcSuccess) raise_error(r, error_message(r, comm));
}

}  // namespace zfcpy
