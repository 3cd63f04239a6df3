// zipfcoll.SparsePlan: the fused embedding-gradient exchange. Its results are views of the
// plan's own buffers, as in the C API: valid until the plan's next reduce.
#include "arrays.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "group_calls.hpp"
#include "handles.hpp"
#include "refusals.hpp"

namespace zfcpy {

SparsePlan::SparsePlan(py::object comm, const zfcSparsePlanConfig_t& config)
    : comm_(std::move(comm)), config_(config) {
  zfcComm_t c = this->comm().get();
  check(zfcSparsePlanCreate(c, &config_, &handle_), c);
  this->comm().add_plan(this);
}

SparsePlan::~SparsePlan() { release(); }

zfcSparsePlan_t SparsePlan::get() const {
  if (destroyed_) {
    raise_error(zfcInvalidUsage, handle_ == nullptr && !comm().alive()
                                     ? "the plan was freed with its communicator"
                                     : "the plan was destroyed");
  }
  return handle_;
}

void SparsePlan::release() {
  if (handle_ == nullptr) return;
  zfcSparsePlanDestroy(handle_);
  handle_ = nullptr;
  comm().drop_plan(this);
}

void SparsePlan::free_with_comm() {
  destroyed_ = true;
  release();
}

void SparsePlan::destroy() {
  destroyed_ = true;
  if (live_views_ == 0) release();
}

py::capsule SparsePlan::view_owner(py::object plan) {
  SparsePlan& p = plan.cast<SparsePlan&>();
  ++p.live_views_;
  // The capsule holds a reference to the plan object, dropped when the views are gone.
  PyObject* ref = plan.release().ptr();
  void (*drop)(void*) = [](void* ptr) {
    auto* obj = static_cast<PyObject*>(ptr);
    SparsePlan& owner = py::handle(obj).cast<SparsePlan&>();
    if (--owner.live_views_ == 0 && owner.destroyed_) owner.release();
    Py_DECREF(obj);
  };
  return py::capsule(static_cast<const void*>(ref), drop);
}

namespace {

std::unique_ptr<SparsePlan> make_plan(py::object comm, size_t dim, int64_t vocab_size,
                                      py::object row_type, py::object index_type,
                                      py::object algorithm, py::object compression,
                                      float scale, size_t stream_chunk_bytes,
                                      bool overflow_on_device) {
  if (!py::isinstance<Comm>(comm)) raise_invalid("comm must be a zipfcoll.Comm");
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = dim;
  cfg.vocab_size = vocab_size;
  cfg.row_type = data_type_of(row_type, "row_type");
  cfg.index_type = data_type_of(index_type, "index_type");
  cfg.algorithm = algorithm_of(algorithm, true);
  // None: the communicator's compression.
  cfg.compression = compression.is_none() ? -1 : compression_of(compression);
  cfg.compress_scale = scale;
  cfg.stream_chunk_bytes = stream_chunk_bytes;
  cfg.overflow_on_device = overflow_on_device ? 1 : 0;
  return std::make_unique<SparsePlan>(std::move(comm), cfg);
}

// The SparseResult of `out`: views of the plan's buffers, kept alive by `owner`. A call that
// left the overflow flag on the device (overflow_on_device) returned with its step queued on
// `stream`: its views say so, `overflowed` is None and `overflow_flag` views the flag.
py::object sparse_result(const zfcSparseResult_t& out, zfcDataType_t index_type, bool device,
                         int device_id, py::handle owner, const void* stream) {
  const auto ug = static_cast<int64_t>(out.num_unique);
  const auto dim = static_cast<int64_t>(out.dim);
  const bool flag_on_device = out.overflow_flag != nullptr;
  const uintptr_t pending = flag_on_device ? dlpack_stream(stream) : 0;
  py::object idx, values, overflowed = py::bool_(out.overflowed != 0), flag = py::none();
  if (device) {
    idx = device_view(out.indices, index_type, {ug}, device_id, owner, pending);
    values = device_view(out.rows, zfcFloat32, {ug, dim}, device_id, owner, pending);
  } else {
    idx = host_view(out.indices, index_type, {ug}, owner);
    values = host_view(out.rows, zfcFloat32, {ug, dim}, owner);
  }
  if (flag_on_device) {
    overflowed = py::none();
    flag = device_view(out.overflow_flag, zfcInt32, {}, device_id, owner, pending);
  }
  return result_type("SparseResult")(idx, values, out.num_unique, overflowed,
                                     zfcGetAlgorithmName(out.algorithm), flag);
}

// A reduce's inputs against its plan: indices of the plan's type, one row of its row type
// per index.
void check_inputs(const Array& i, const Array& r, const zfcSparsePlanConfig_t& cfg) {
  if (index_type_of(i) != cfg.index_type) {
    raise_invalid("indices hold %s, but the plan was made for %s", dtype_name(i.dtype),
                  cfg.index_type == zfcInt32 ? "int32" : "int64");
  }
  row_type_of(r, cfg.row_type);
  require_size(r, i.size() * cfg.dim, "count x dim (one row per index)");
}

// reduce(out=(indices, rows)): the caller's arrays the result goes to (zfcSparseReduceInto),
// writable host arrays of the plan's index type and float32, `capacity` and (capacity, dim).
struct CallerArrays {
  std::unique_ptr<Array> indices, rows;
  py::object owner;  // keeps the arrays alive under the result's views
  size_t capacity = 0;
};

CallerArrays borrow_out(py::handle out, const zfcSparsePlanConfig_t& cfg,
                        void* stream = nullptr) {
  CallerArrays a;
  if (!py::isinstance<py::tuple>(out) || py::len(out) != 2) {
    raise_invalid("out must be a tuple (indices, rows)");
  }
  py::tuple t = py::reinterpret_borrow<py::tuple>(out);
  a.indices = borrow(t[0], "out indices", Access::kWrite, stream);
  a.rows = borrow(t[1], "out rows", Access::kWrite, stream);
  if (a.indices->ndim() != 1 || index_type_of(*a.indices) != cfg.index_type) {
    raise_invalid("out indices must be a vector of %s",
                  cfg.index_type == zfcInt32 ? "int32" : "int64");
  }
  a.capacity = a.indices->extent(0);
  if (a.rows->dtype != Dtype::kFloat32 || a.rows->ndim() != 2 ||
      a.rows->extent(0) != a.capacity || a.rows->extent(1) != cfg.dim) {
    raise_invalid("out rows must be a float32 matrix (%zu, %zu): one row per out index",
                  a.capacity, cfg.dim);
  }
  a.owner = t;
  return a;
}

py::object reduce(py::object self, py::handle indices, py::handle rows, py::handle stream_obj,
                  py::handle out_obj) {
  SparsePlan& plan = self.cast<SparsePlan&>();
  zfcSparsePlan_t h = plan.get();
  zfcComm_t c = plan.comm().get();
  const zfcSparsePlanConfig_t& cfg = plan.config();
  void* stream = nullptr;
  std::unique_ptr<Array> i, r;
  CallerArrays into;
  zfcSparseResult_t neutral = ZFC_SPARSE_RESULT_INITIALIZER;
  const Refusal how{c, "reduce", true, [&] {
    return zfcSparseReduce(h, nullptr, 0, nullptr, &neutral, nullptr);
  }};
  py::object refused;
  if (!checks_pass(how, [&] {
        stream = stream_pointer(stream_obj);
        i = borrow(indices, "indices", Access::kRead, stream);
        r = borrow(rows, "rows", Access::kRead, stream);
        check_inputs(*i, *r, cfg);
        if (!out_obj.is_none()) into = borrow_out(out_obj, cfg);
      }, &refused)) {
    return refused;
  }
  const bool caller = into.indices != nullptr;
  const bool device = i->device || r->device;
  const int device_id = i->device_id;
  const zfcDataType_t index_type = cfg.index_type;
  void* out_ids = caller ? into.indices->data : nullptr;
  float* out_rows = caller ? static_cast<float*>(into.rows->data) : nullptr;
  const size_t capacity = into.capacity;
  auto run = [=](const void* ids, size_t count, const void* values, zfcSparseResult_t* out) {
    return caller ? zfcSparseReduceInto(h, ids, count, values, out_ids, out_rows, capacity, out,
                                        stream)
                  : zfcSparseReduce(h, ids, count, values, out, stream);
  };
  if (group_open(c)) {
    // Recorded: the library reads the arrays and writes the result when the group ends. The
    // view owner, taken now, also keeps the plan from being freed before then.
    auto call = std::make_shared<PendingCall>("reduce");
    call->objects.push_back(SparsePlan::view_owner(self));
    if (caller) call->objects.push_back(into.owner);  // what the result's views are of
    call->make_result = [=](PendingCall& p) {
      return sparse_result(p.sparse, index_type, device, device_id, p.objects.back(), stream);
    };
    const void* indices_data = i->data;
    const void* rows_data = r->data;
    const size_t count = i->size();
    zfcSparseResult_t* out = &call->sparse;
    call->arrays.push_back(std::move(i));
    call->arrays.push_back(std::move(r));
    if (caller) {
      call->arrays.push_back(std::move(into.indices));
      call->arrays.push_back(std::move(into.rows));
    }
    return record_in_group(c, std::move(call),
                           [&] { return run(indices_data, count, rows_data, out); });
  }
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  zfcResult_t res;
  {
    py::gil_scoped_release unlocked;
    res = run(i->data, i->size(), r->data, &out);
  }
  check(res, c);
  return sparse_result(out, index_type, device, device_id,
                       caller ? into.owner : py::object(SparsePlan::view_owner(self)), stream);
}

// reduce_bounded: zfcSparseReduceBounded into the caller's arrays. Host arrays: the status is
// known at return (a BoundedStatus). Device arrays: `status` is the caller's writable device
// array of 16 bytes (zfcBoundedStatus_t), written when the stream reaches the call's end.
py::object reduce_bounded(py::object self, py::handle indices, py::handle rows,
                          py::handle out_obj, py::handle status_obj, py::handle stream_obj) {
  SparsePlan& plan = self.cast<SparsePlan&>();
  zfcSparsePlan_t h = plan.get();
  zfcComm_t c = plan.comm().get();
  if (group_open(c)) {
    // The library refuses it and records the refusal, so that the group fails on every rank.
    check(zfcSparseReduceBounded(h, nullptr, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr),
          c);
  }
  const zfcSparsePlanConfig_t& cfg = plan.config();
  void* stream = nullptr;
  std::unique_ptr<Array> i, r, s;
  CallerArrays into;
  zfcBoundedStatus_t host_status{0, 0, 0};
  zfcBoundedStatus_t* status = &host_status;
  const Refusal how{c, "reduce_bounded", false, [&] {
    return zfcSparseReduceBounded(h, nullptr, 0, nullptr, 0, nullptr, nullptr, &host_status,
                                  nullptr);
  }};
  py::object refused;
  checks_pass(how, [&] {
    stream = stream_pointer(stream_obj);
    i = borrow(indices, "indices", Access::kRead, stream);
    r = borrow(rows, "rows", Access::kRead, stream);
    check_inputs(*i, *r, cfg);
    into = borrow_out(out_obj, cfg, stream);
    if (!status_obj.is_none()) {
      s = borrow(status_obj, "status", Access::kWrite, stream);
      const bool fits = (s->dtype == Dtype::kInt64 && s->size() == 2) ||
                        (s->dtype == Dtype::kInt32 && s->size() == 4);
      if (!fits) {
        raise_invalid("status must be 2 int64 or 4 int32 (the 16 bytes of "
                      "zfcBoundedStatus_t), not %zu of %s", s->size(), dtype_name(s->dtype));
      }
      status = static_cast<zfcBoundedStatus_t*>(s->data);
    } else if (i->device || r->device) {
      raise_invalid("device arrays need status=: a writable device array of 16 bytes");
    }
  }, &refused);
  zfcResult_t res;
  {
    py::gil_scoped_release unlocked;
    res = zfcSparseReduceBounded(h, i->data, i->size(), r->data, into.capacity,
                                 into.indices->data, static_cast<float*>(into.rows->data),
                                 status, stream);
  }
  check(res, c);
  if (s != nullptr && s->device) return py::none();
  // Host arrays: the call has finished, its status is there.
  const zfcBoundedStatus_t got = *status;
  return result_type("BoundedStatus")(got.num_unique, zfcGetErrorString(
                                                          static_cast<zfcResult_t>(got.result)),
                                      got.result == zfcSuccess, got.overflowed != 0);
}

}  // namespace

void bind_plan(py::module_& m) {
  py::class_<SparsePlan>(m, "SparsePlan",
      "The fused exchange of one embedding table's gradient: each rank passes its tokens'\n"
      "indices and gradient rows; every rank gets the distinct indices of all ranks and the\n"
      "summed row of each, moving Theta(G*K + U_g*D) instead of Theta(G*K*D).")
      .def(py::init(&make_plan), py::arg("comm"), py::arg("dim"), py::arg("vocab_size"),
           py::kw_only(), py::arg("row_type") = "float32", py::arg("index_type") = "int32",
           py::arg("algorithm") = "default", py::arg("compression") = py::none(),
           py::arg("scale") = 1.0f, py::arg("stream_chunk_bytes") = 0,
           py::arg("overflow_on_device") = false,
           "Local. A plan for rows of width `dim` of a `vocab_size`-row table. row_type:\n"
           "'float32', 'float16' or 'bfloat16'; index_type: 'int32' or 'int64'; algorithm:\n"
           "'default' (the communicator's), 'auto' or a name; compression: None (the\n"
           "communicator's), 'none', 'fp16' or 'bf16', with `scale`; stream_chunk_bytes:\n"
           "reduce_apply's rows per round (0: the library's 1 MiB); overflow_on_device:\n"
           "a reduce of device arrays that stays on the device, outside a group, returns\n"
           "without its last wait (see reduce).")
      .def("reduce", &reduce, py::arg("indices"), py::arg("rows"), py::kw_only(),
           py::arg("stream") = py::none(), py::arg("out") = py::none(),
           "Collective. indices: this rank's K indices; rows: K x dim gradient rows.\n"
           "Returns SparseResult(indices, rows, num_unique, overflowed, algorithm,\n"
           "overflow_flag): the sorted distinct indices of all ranks and their summed\n"
           "fp32 rows, identical on every rank. Both are read-only views of the plan's\n"
           "buffers (DeviceArray for device inputs), valid until the plan's next reduce:\n"
           "copy what must outlive it.\n"
           "out=(indices, rows): writable host arrays (capacity,) of the index type and\n"
           "(capacity, dim) float32 that receive the result instead (zfcSparseReduceInto);\n"
           "the result's views are then their first num_unique entries. A capacity below\n"
           "U_g on any rank raises InvalidArgumentError on every rank.\n"
           "On a plan made with overflow_on_device=True, a reduce of device arrays that\n"
           "stayed on the device returns with its step still queued on `stream`:\n"
           "overflowed is None, overflow_flag is a DeviceArray of one int32 (1 when a sum\n"
           "overflowed on any rank; valid until the plan's next call of any kind) and the\n"
           "views' `stream` names that stream; otherwise overflow_flag is None. A failure\n"
           "of the queued step is raised by comm.check_async_error() or the next call.\n"
           "Inside comm.group(): a Pending whose wait() gives it once the group ended (a\n"
           "plan runs at most once per group).")
      .def("reduce_bounded", &reduce_bounded, py::arg("indices"), py::arg("rows"),
           py::kw_only(), py::arg("out"), py::arg("status") = py::none(),
           py::arg("stream") = py::none(),
           "Collective. zfcSparseReduceBounded: the reduce in fixed sizes, for a capacity\n"
           "every rank shares (the length of out's indices). out=(indices, rows): writable\n"
           "arrays (capacity,) of the index type and (capacity, dim) float32 that receive\n"
           "the sorted distinct indices, then -1, and their summed rows, then zeros. A bad\n"
           "index or more distinct indices than the capacity is not raised: host arrays\n"
           "return BoundedStatus(num_unique, result, ok, overflowed), and the buffers are\n"
           "then left as they were; device arrays return None and need status=, a writable\n"
           "device array of 16 bytes (int64 num_unique, int32 result, int32 overflowed)\n"
           "written when `stream` reaches the call. Comm.check_async_error() and the next\n"
           "call that is not bounded raise such a failure once.")
      .def("destroy", &SparsePlan::destroy,
           "Local. Frees the plan (also done when it is collected); while views of its\n"
           "results are alive, their memory stays until the last of them is gone (until\n"
           "then Comm.destroy() counts the plan as alive).")
      .def_property_readonly("dim", [](const SparsePlan& p) { return p.config().dim; })
      .def_property_readonly("vocab_size",
                             [](const SparsePlan& p) { return p.config().vocab_size; })
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](SparsePlan& p, py::object, py::object, py::object) { p.destroy(); });
}

}  // namespace zfcpy
