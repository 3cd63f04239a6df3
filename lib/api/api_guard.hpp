// What every C entry point does around its work: turn exceptions into result codes, and
// record the message of a failure on the communicator and on the calling thread.
#pragma once

#include <new>
#include <stdexcept>

#include "host_device/status.hpp"
#include "core/comm.hpp"
#include "core/logging.hpp"

namespace zfc {

// Records a failure (no-op on success) and returns its code.
zfcResult_t finish_call(zfcComm* comm, const Status& status);

// Runs f() -> Status, mapping std::bad_alloc to zfcOutOfMemory and any other exception to
// zfcInternalError.
template <class F>
zfcResult_t guarded(zfcComm* comm, F&& f) {
  try {
    return finish_call(comm, f());
  } catch (const std::bad_alloc&) {
    return finish_call(comm, error(zfcOutOfMemory, "host memory allocation failed"));
  } catch (const std::exception& e) {
    return finish_call(comm, error(zfcInternalError, "unexpected exception: %s", e.what()));
  }
}

// The error for a NULL handle.
Status null_handle(const char* what);

// A bad zfcSparseResult_t (NULL, or another size) is this rank's argument error, agreed with
// the other ranks like any other.
Status check_result_struct(const zfcSparseResult_t* out);

}  // namespace zfc
