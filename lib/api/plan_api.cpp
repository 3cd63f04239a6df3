// The fused sparse reduce.
#include "algo/sparse_reduce.hpp"
#include "api/api_guard.hpp"

using zfc::error;
using zfc::Status;

extern "C" {

zfcResult_t zfcSparsePlanCreate(zfcComm_t comm, const zfcSparsePlanConfig_t* config,
                                zfcSparsePlan_t* plan) {
  return zfc::guarded(comm, [&]() -> Status {
    if (comm == nullptr) return zfc::null_handle("comm");
    if (plan == nullptr) return zfc::null_handle("plan");
    zfc::PlanSpec spec;
    ZFC_RETURN_IF_ERROR(zfc::parse_plan_config(config, comm->config, &spec));
    auto created = std::make_unique<zfcSparsePlan>();
    created->comm = comm;
    created->spec = spec;
    ++comm->live_plans;
    *plan = created.release();
    return Status::Ok();
  });
}

zfcResult_t zfcSparseReduce(zfcSparsePlan_t plan, const void* indices, size_t count,
                            const void* rows, zfcSparseResult_t* out, void* stream) {
  zfcComm* comm = plan != nullptr ? plan->comm : nullptr;
  return zfc::guarded(comm, [&]() -> Status {
    if (plan == nullptr) return zfc::null_handle("plan");
    zfc::SparseOutput result;
    // A bad `out` is this rank's argument error: agreed with the others like any other.
    Status out_check = Status::Ok();
    if (out == nullptr) {
      out_check = error(zfcInvalidArgument, "out is NULL");
    } else if (out->size != sizeof(zfcSparseResult_t)) {
      out_check = error(zfcInvalidUsage, "out has size %zu, expected %zu: initialise it with "
                        "ZFC_SPARSE_RESULT_INITIALIZER", out->size, sizeof(zfcSparseResult_t));
    }
    ZFC_RETURN_IF_ERROR(
        zfc::sparse_reduce(*plan, indices, count, rows, out_check, &result, stream));
    out->indices = result.indices;
    out->rows = result.rows;
    out->num_unique = result.num_unique;
    out->dim = plan->spec.dim;
    out->overflowed = result.overflowed ? 1 : 0;
    out->algorithm = result.algorithm;
    return Status::Ok();
  });
}

zfcResult_t zfcSparsePlanDestroy(zfcSparsePlan_t plan) {
  if (plan == nullptr) return zfcSuccess;
  zfcComm* comm = plan->comm;
  delete plan;
  if (--comm->live_plans == 0 && comm->aborted) delete comm;
  return zfcSuccess;
}

}  // extern "C"
