// Version, names, error strings and statistics.
#include <string>
#include <vector>

#include "algo/algorithms.hpp"
#include "api/api_guard.hpp"
#include "core/comm.hpp"
#include "base/enum_value.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
const char* thread_last_error();
}

using zfc::error;
using zfc::Status;

extern "C" {

const char* zfcGetErrorString(zfcResult_t result) {
  switch (zfc::enum_value(result)) {
    case zfcSuccess: return "no error";
    case zfcInvalidArgument: return "invalid argument";
    case zfcInvalidUsage: return "invalid usage";
    case zfcMismatch: return "arguments differ across ranks";
    case zfcOutOfMemory: return "out of memory";
    case zfcSystemError: return "system error";
    case zfcTransportError: return "transport error";
    case zfcRemoteError: return "remote rank error";
    case zfcTimeout: return "timeout";
    case zfcUnsupported: return "unsupported";
    case zfcInternalError: return "internal error";
    case zfcInProgress: return "operation in progress";
    default: return "unknown result code";
  }
}

const char* zfcGetLastError(zfcComm_t comm) {
  return comm != nullptr ? comm->last_error.c_str() : zfc::thread_last_error();
}

zfcResult_t zfcCommGetAsyncError(zfcComm_t comm, zfcResult_t* async_error) {
  return zfc::guarded(comm, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (async_error == nullptr) return zfc::null_handle("async_error");
    std::string detail;
    zfcResult_t found = comm->async_errors.take(nullptr, &detail);
    if (found == zfcSuccess || found == zfcInProgress) {
      // Transfers queued on a caller's stream: a peer lost there is found here too.
      const Status queued = comm->transport->poll_async_error();
      if (!queued.ok()) {
        found = queued.code();
        detail = queued.message();
      }
    }
    if (found != zfcSuccess && found != zfcInProgress) comm->last_error = detail;
    *async_error = found;
    return Status::Ok();
  });
}

zfcResult_t zfcGetVersion(int* version) {
  return zfc::guarded(nullptr, [&] {
    if (version == nullptr) return zfc::null_handle("version");
    *version = ZFC_VERSION_CODE;
    return Status::Ok();
  });
}

zfcResult_t zfcQueryTransport(int transport, int* memory_kinds) {
  return zfc::guarded(nullptr, [&]() -> Status {
    if (memory_kinds == nullptr) return zfc::null_handle("memory_kinds");
    int kinds = 0;
    ZFC_RETURN_IF_ERROR(zfc::query_transport(transport, &kinds));
    *memory_kinds = kinds;
    return Status::Ok();
  });
}

const char* zfcGetAlgorithmName(int algorithm) {
  if (algorithm == zfcAlgoDefault) return "default";
  if (algorithm == zfcAlgoAuto) return "auto";
  const zfc::AlgorithmInfo* a = zfc::find_algorithm(algorithm);
  return a != nullptr ? a->name : "unknown";
}

const char* zfcGetCompressionName(int kind) {
  // Every kind's name, made once from the formats' (kernels/wire_format.hpp).
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all(2 * ZFC_COMPRESS_STOCHASTIC);
    for (int k = 0; k < ZFC_COMPRESS_STOCHASTIC; ++k) {
      const zfc::kernels::WireFormat* f = zfc::kernels::find_wire_format(k);
      if (f == nullptr) continue;
      all[static_cast<size_t>(k)] = f->name;
      if (k != zfcCompressNone) {
        all[static_cast<size_t>(k | ZFC_COMPRESS_STOCHASTIC)] = std::string(f->name) + "_sr";
      }
    }
    return all;
  }();
  if (kind < 0 || static_cast<size_t>(kind) >= names.size()) return nullptr;
  const std::string& n = names[static_cast<size_t>(kind)];
  return n.empty() ? nullptr : n.c_str();
}

const char* zfcGetPhaseName(int phase) {
  static const char* const kNames[zfcNumPhases] = {"local",   "header",        "index_exchange",
                                                   "merge",   "scatter",       "row_exchange",
                                                   "total"};
  return phase >= 0 && phase < zfcNumPhases ? kNames[phase] : "unknown";
}

zfcResult_t zfcCommGetStats(zfcComm_t comm, zfcStats_t* stats) {
  return zfc::guarded(comm, [&] {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (stats == nullptr) return zfc::null_handle("stats");
    return zfc::copy_stats_out(comm->stats, stats);
  });
}

zfcResult_t zfcCommResetStats(zfcComm_t comm) {
  return zfc::guarded(comm, [&] {
    if (comm == nullptr) return zfc::null_handle("comm");
    comm->stats.reset();
    return Status::Ok();
  });
}

}  // extern "C"
