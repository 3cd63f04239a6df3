// The fused sparse reduce.
#include "algo/bounded_reduce.hpp"
#include "algo/call_group.hpp"
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
    return zfc::sparse_reduce(*plan, indices, count, rows, zfc::check_result_struct(out), out,
                              stream);
  });
}

zfcResult_t zfcSparseReduceInto(zfcSparsePlan_t plan, const void* indices, size_t count,
                                const void* rows, void* out_indices, float* out_rows,
                                size_t capacity, zfcSparseResult_t* out, void* stream) {
  zfcComm* comm = plan != nullptr ? plan->comm : nullptr;
  return zfc::guarded(comm, [&]() -> Status {
    if (plan == nullptr) return zfc::null_handle("plan");
    const zfc::CallerOutput into{out_indices, out_rows, capacity};
    return zfc::sparse_reduce(*plan, indices, count, rows, zfc::check_result_struct(out), out,
                              stream, &into);
  });
}

zfcResult_t zfcSparseReduceApply(zfcSparsePlan_t plan, const void* indices, size_t count,
                                 const void* rows, const zfcRowUpdate_t* update, float* table,
                                 float* state, int* overflowed, void* stream) {
  zfcComm* comm = plan != nullptr ? plan->comm : nullptr;
  return zfc::guarded(comm, [&]() -> Status {
    if (plan == nullptr) return zfc::null_handle("plan");
    if (comm->group_depth > 0) return zfc::refuse_in_group(*comm, "zfcSparseReduceApply");
    zfc::StreamApply apply;
    apply.table = table;
    apply.state = state;
    // A bad update is this rank's argument error: agreed with the others like any other.
    const Status check = zfc::kernels::parse_row_update(update, &apply.update);
    return zfc::sparse_reduce_apply(*plan, indices, count, rows, apply, check, overflowed,
                                    stream);
  });
}

zfcResult_t zfcSparseReduceBounded(zfcSparsePlan_t plan, const void* indices, size_t count,
                                   const void* rows, size_t capacity, void* out_indices,
                                   float* out_rows, zfcBoundedStatus_t* out_status,
                                   void* stream) {
  zfcComm* comm = plan != nullptr ? plan->comm : nullptr;
  return zfc::guarded(comm, [&]() -> Status {
    if (plan == nullptr) return zfc::null_handle("plan");
    if (comm->group_depth > 0) return zfc::refuse_in_group(*comm, "zfcSparseReduceBounded");
    const zfc::BoundedOutput out{out_indices, plan->spec.index_type, out_rows, capacity,
                                 out_status};
    return zfc::sparse_reduce_bounded(*plan, indices, count, rows, out, stream);
  });
}

zfcResult_t zfcSparsePlanDestroy(zfcSparsePlan_t plan) {
  if (plan == nullptr) return zfcSuccess;
  zfcComm* comm = plan->comm;
  if (comm->group_depth > 0 && zfc::open_group(*comm).holds(plan)) {
    return zfc::finish_call(comm, error(zfcInvalidUsage, "zfcSparsePlanDestroy: the plan has "
                                        "a call in the open group; end the group first"));
  }
  // A timed-out MPI receive may still write into the plan's workspace when its peer wakes
  // up: the plan's memory is then kept until the process ends, as its communicator's is.
  if (!zfc::transfers_in_flight(*comm)) delete plan;
  if (--comm->live_plans == 0 && comm->aborted) delete comm;
  return zfcSuccess;
}

}  // extern "C"
