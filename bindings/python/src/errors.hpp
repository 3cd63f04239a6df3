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

// Nothing when r is zfcSuccess; else raises with zfcGetLastError(comm) (comm NULL: the
// detail of this thread's last failed call).
void check(zfcResult_t r, zfcComm_t comm);

}  // namespace zfcpy
