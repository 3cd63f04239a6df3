// The error value every internal layer returns: a zfcResult_t plus a message that names the
// bad value and, where known, the rank. It is the leaf of the dependency graph, so that the
// transports and kernels, the CUDA code in cuda/ too, can report errors without depending on
// the core; it lives in common/host_device, the one part of the host's code cuda/ may include.
#pragma once

#include <string>
#include <utility>

#include "zipfcoll/zipfcoll.h"

namespace zfc {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(zfcResult_t code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == zfcSuccess; }
  zfcResult_t code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  zfcResult_t code_ = zfcSuccess;
  std::string message_;
};

// printf into a std::string.
std::string strfmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// A failed Status whose message is formatted like printf.
Status error(zfcResult_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace zfc

#define ZFC_RETURN_IF_ERROR(expr)                  \
  do {                                             \
    ::zfc::Status zfc_status_ = (expr);            \
    if (!zfc_status_.ok()) return zfc_status_;     \
  } while (0)
