// Grouped calls: a step's collectives under one agreement.
#include "algo/call_group.hpp"
#include "api/api_guard.hpp"

using zfc::error;
using zfc::Status;

extern "C" {

zfcResult_t zfcGroupStart(zfcComm_t comm) {
  return zfc::guarded(comm, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (comm->group_depth++ == 0) zfc::open_group(*comm).clear();
    return Status::Ok();
  });
}

zfcResult_t zfcGroupEnd(zfcComm_t comm) {
  return zfc::guarded(comm, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (comm->group_depth == 0) {
      return error(zfcInvalidUsage, "zfcGroupEnd without zfcGroupStart on rank %d",
                   comm->rank());
    }
    if (--comm->group_depth > 0) return Status::Ok();
    return zfc::open_group(*comm).end(*comm);
  });
}

}  // extern "C"
