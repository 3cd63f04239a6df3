#include "api/api_guard.hpp"

#include <string>

#include "algo/sparse_reduce.hpp"

namespace zfc {
namespace {
thread_local std::string t_last_error;
}

const char* thread_last_error() { return t_last_error.c_str(); }

zfcResult_t finish_call(zfcComm* comm, const Status& status) {
  if (status.ok()) return zfcSuccess;
  t_last_error = status.message();
  int rank = -1;
  if (comm != nullptr) {
    comm->last_error = status.message();
    if (comm->transport) rank = comm->rank();
  }
  ZFC_LOG(kWarn, rank, "%s: %s", zfcGetErrorString(status.code()), status.message().c_str());
  return status.code();
}

Status null_handle(const char* what) { return error(zfcInvalidArgument, "%s is NULL", what); }

Status check_result_struct(const zfcSparseResult_t* out) {
  if (out == nullptr) return error(zfcInvalidArgument, "out is NULL");
  // The 0.11 layout (without overflow_flag) too: the call then reads the flag back itself.
  if (out->size != sizeof(zfcSparseResult_t) && out->size != kSparseResultSize011) {
    return error(zfcInvalidUsage, "out has size %zu, expected %zu (or %zu, the 0.11 "
                 "layout): initialise it with ZFC_SPARSE_RESULT_INITIALIZER", out->size,
                 sizeof(zfcSparseResult_t), kSparseResultSize011);
  }
  return Status::Ok();
}

}  // namespace zfc
