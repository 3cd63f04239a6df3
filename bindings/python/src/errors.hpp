// Library results become Python exceptions: each zfcResult_t has its zipfcoll.Error subclass
// (zipfcoll/_errors.py), raised with the library's message for the call that failed.
#pragma once

#include <string>

#include "zipfcoll/zipfcoll.h"

namespace zfcpy {

// Raises the zipfcoll.Error subclass for `code` carrying `message`.
[[noreturn]] void raise_error(int code, const std::string& message);

// Raises zipfcoll.InvalidArgumentError for a bad argument found before the library is called.
[[noreturn]] void raise_invalid(const char* format, ...)
    __attribute__((format(printf, 1, 2)));

// The library's message for the failed call r on comm: zfcGetLastError(comm) (comm NULL: this
// thread's last failed call), or the code's fixed text when it has none. Copied at once: the
// string is only valid until the next call on comm.
std::string error_message(zfcResult_t r, zfcComm_t comm);

// Nothing when r is zfcSuccess; else raises with error_message(r, comm).
void check(zfcResult_t r, zfcComm_t comm);

}  // namespace zfcpy
