// Updates of embedding tables: SparsePlan.reduce_apply (the fused, streamed reduce and update
// of a replicated table), the sharded table's SparsePlan.sharded_gather and
// SparsePlan.sharded_reduce_apply, and the layout functions shard_rows and shard_locate.
// Tables, shards and states are float32 host arrays written in place.
#include "arrays.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "group_calls.hpp"
#include "handles.hpp"
#include "refusals.hpp"

namespace zfcpy {
namespace {

// An update by name: "add", "sgd" or "adagrad".
zfcRowUpdate_t row_update(const std::string& kind, float alpha, float epsilon) {
  zfcRowUpdate_t u = ZFC_ROW_UPDATE_INITIALIZER;
  if (kind == "add") {
    u.kind = zfcUpdateAdd;
  } else if (kind == "sgd") {
    u.kind = zfcUpdateSgd;
  } else if (kind == "adagrad") {
    u.kind = zfcUpdateAdagrad;
  } else {
    raise_invalid("update '%s' is not one of 'add', 'sgd', 'adagrad'", kind.c_str());
  }
  u.alpha = alpha;
  u.epsilon = epsilon;
  return u;
}

// A float32 host matrix of `rows` x `dim` (the table, a shard, or a state), or NULL for None.
std::unique_ptr<Array> borrow_matrix(py::handle obj, const char* name, size_t rows,
                                     size_t dim) {
  if (obj.is_none()) return nullptr;
  auto a = borrow(obj, name, Access::kWrite, nullptr);
  if (a->dtype != Dtype::kFloat32 || a->ndim() != 2 || a->extent(1) != dim ||
      a->extent(0) != rows) {
    raise_invalid("%s must be a float32 matrix (%zu, %zu)", name, rows, dim);
  }
  return a;
}

float* data_of(const std::unique_ptr<Array>& a) {
  return a ? static_cast<float*>(a->data) : nullptr;
}

// The checked index and row arrays of a plan call.
struct PlanInputs {
  std::unique_ptr<Array> indices, rows;
};

PlanInputs borrow_inputs(const SparsePlan& plan, py::handle indices, py::handle rows,
                         bool with_rows, void* stream) {
  PlanInputs in;
  const zfcSparsePlanConfig_t& cfg = plan.config();
  in.indices = borrow(indices, "indices", Access::kRead, stream);
  if (index_type_of(*in.indices) != cfg.index_type) {
    raise_invalid("indices hold %s, but the plan was made for %s",
                  dtype_name(in.indices->dtype), cfg.index_type == zfcInt32 ? "int32" : "int64");
  }
  if (with_rows) {
    if (rows.is_none()) raise_invalid("rows is required (count x dim gradient rows)");
    in.rows = borrow(rows, "rows", Access::kRead, stream);
    row_type_of(*in.rows, cfg.row_type);
    require_size(*in.rows, in.indices->size() * cfg.dim, "count x dim (one row per index)");
  }
  return in;
}

bool reduce_apply(SparsePlan& plan, py::handle indices, py::handle rows, py::handle table,
                  const std::string& update, float alpha, float epsilon, py::handle state,
                  py::handle stream_obj) {
  zfcSparsePlan_t h = plan.get();
  zfcComm_t c = plan.comm().get();
  const zfcSparsePlanConfig_t& cfg = plan.config();
  void* stream = nullptr;
  zfcRowUpdate_t u = ZFC_ROW_UPDATE_INITIALIZER;
  PlanInputs in;
  std::unique_ptr<Array> t, s;
  int overflowed = 0;
  const Refusal how{c, "reduce_apply", false, [&] {
    return zfcSparseReduceApply(h, nullptr, 0, nullptr, &u, nullptr, nullptr, &overflowed,
                                nullptr);
  }};
  py::object refused;
  checks_pass(how, [&] {  // reduce_apply is no group's: a refusal is raised here
    stream = stream_pointer(stream_obj);
    u = row_update(update, alpha, epsilon);
    in = borrow_inputs(plan, indices, rows, true, stream);
    const size_t vocab = static_cast<size_t>(cfg.vocab_size);
    t = borrow_matrix(table, "table", vocab, cfg.dim);
    s = borrow_matrix(state, "state", vocab, cfg.dim);
  }, &refused);
  zfcResult_t res;
  {
    py::gil_scoped_release unlocked;
    res = zfcSparseReduceApply(h, in.indices->data, in.indices->size(), in.rows->data, &u,
                               data_of(t), data_of(s), &overflowed, stream);
  }
  check(res, c);
  return overflowed != 0;
}

// A lookup's result: views of the plan's buffers (kept alive by `owner`) and the positions.
py::object lookup_result(const zfcSparseResult_t& out, zfcDataType_t index_type, size_t dim,
                         const py::object& owner, const py::object& positions) {
  const auto u = static_cast<ssize_t>(out.num_unique);
  py::object idx = host_view(out.indices, index_type, {u}, owner);
  py::object values = host_view(out.rows, zfcFloat32, {u, static_cast<ssize_t>(dim)}, owner);
  return result_type("ShardedLookup")(idx, values, positions);
}

py::object sharded_gather(py::object self, py::handle shard, py::handle indices,
                          bool positions) {
  SparsePlan& plan = self.cast<SparsePlan&>();
  zfcSparsePlan_t h = plan.get();
  zfcComm_t c = plan.comm().get();
  const zfcSparsePlanConfig_t& cfg = plan.config();
  PlanInputs in;
  std::unique_ptr<Array> s;
  zfcSparseResult_t neutral = ZFC_SPARSE_RESULT_INITIALIZER;
  const Refusal how{c, "sharded_gather", true, [&] {
    return zfcShardedGather(h, nullptr, 0, nullptr, 0, &neutral, nullptr, nullptr);
  }};
  py::object refused;
  if (!checks_pass(how, [&] {
        in = borrow_inputs(plan, indices, py::none(), false, nullptr);
        s = borrow(shard, "shard", Access::kRead, nullptr);
        if (s->dtype != Dtype::kFloat32 || s->ndim() != 2 || s->extent(1) != cfg.dim) {
          raise_invalid("shard must be a float32 matrix (shard_rows, %zu)", cfg.dim);
        }
      }, &refused)) {
    return refused;
  }
  py::array_t<int32_t> pos(positions ? static_cast<ssize_t>(in.indices->size()) : 0);
  py::object pos_obj = positions ? py::object(pos) : py::none();
  const zfcDataType_t index_type = cfg.index_type;
  const size_t dim = cfg.dim, count = in.indices->size(), shard_rows = s->extent(0);
  const void* ids = in.indices->data;
  const float* rows = static_cast<const float*>(s->data);
  int32_t* where = positions ? pos.mutable_data() : nullptr;
  if (group_open(c)) {
    // Recorded: the library reads the ids and the shard and writes the positions when the
    // group ends; the view owner keeps the plan alive until then.
    auto call = std::make_shared<PendingCall>("sharded_gather");
    call->objects.push_back(SparsePlan::view_owner(self));
    call->objects.push_back(pos_obj);
    call->make_result = [=](PendingCall& p) {
      return lookup_result(p.sparse, index_type, dim, p.objects[0], p.objects[1]);
    };
    zfcSparseResult_t* out = &call->sparse;
    call->arrays.push_back(std::move(in.indices));
    call->arrays.push_back(std::move(s));
    return record_in_group(c, std::move(call), [&] {
      return zfcShardedGather(h, rows, shard_rows, ids, count, out, where, nullptr);
    });
  }
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  zfcResult_t res;
  {
    py::gil_scoped_release unlocked;
    res = zfcShardedGather(h, rows, shard_rows, ids, count, &out, where, nullptr);
  }
  check(res, c);
  return lookup_result(out, index_type, dim, SparsePlan::view_owner(self), pos_obj);
}

py::object sharded_reduce_apply(py::object self, py::handle indices, py::handle rows,
                                py::handle shard, const std::string& update, float alpha,
                                float epsilon, py::handle state) {
  SparsePlan& plan = self.cast<SparsePlan&>();
  zfcSparsePlan_t h = plan.get();
  zfcComm_t c = plan.comm().get();
  const size_t dim = plan.config().dim;
  zfcRowUpdate_t u = ZFC_ROW_UPDATE_INITIALIZER;
  PlanInputs in;
  std::unique_ptr<Array> s, st;
  int neutral_flag = 0;
  const Refusal how{c, "sharded_reduce_apply", true, [&] {
    return zfcShardedReduceApply(h, nullptr, 0, nullptr, &u, nullptr, nullptr, 0,
                                 &neutral_flag, nullptr);
  }};
  py::object refused;
  if (!checks_pass(how, [&] {
        u = row_update(update, alpha, epsilon);
        in = borrow_inputs(plan, indices, rows, true, nullptr);
        s = borrow(shard, "shard", Access::kWrite, nullptr);
        if (s->dtype != Dtype::kFloat32 || s->ndim() != 2 || s->extent(1) != dim) {
          raise_invalid("shard must be a float32 matrix (shard_rows, %zu)", dim);
        }
        st = borrow_matrix(state, "state", s->extent(0), dim);
      }, &refused)) {
    return refused;
  }
  const void* ids = in.indices->data;
  const void* values = in.rows->data;
  const size_t count = in.indices->size(), shard_rows = s->extent(0);
  float* table = static_cast<float*>(s->data);
  float* accumulators = data_of(st);
  if (group_open(c)) {
    // Recorded: the owners write their shards (and states) when the group ends, and only if
    // every call of it succeeded without overflow.
    auto call = std::make_shared<PendingCall>("sharded_reduce_apply");
    call->objects.push_back(SparsePlan::view_owner(self));
    call->make_result = [](PendingCall& p) { return py::object(py::bool_(p.overflowed != 0)); };
    int* overflowed = &call->overflowed;
    call->arrays.push_back(std::move(in.indices));
    call->arrays.push_back(std::move(in.rows));
    call->arrays.push_back(std::move(s));
    if (st) call->arrays.push_back(std::move(st));
    return record_in_group(c, std::move(call), [&] {
      return zfcShardedReduceApply(h, ids, count, values, &u, table, accumulators, shard_rows,
                                   overflowed, nullptr);
    });
  }
  int overflowed = 0;
  zfcResult_t res;
  {
    py::gil_scoped_release unlocked;
    res = zfcShardedReduceApply(h, ids, count, values, &u, table, accumulators, shard_rows,
                                &overflowed, nullptr);
  }
  check(res, c);
  return py::bool_(overflowed != 0);
}

}  // namespace

void bind_tables(py::module_& m) {
  auto plan = py::class_<SparsePlan>(m.attr("SparsePlan"));
  plan.def("reduce_apply", &reduce_apply, py::arg("indices"), py::arg("rows"),
           py::arg("table"), py::kw_only(), py::arg("update") = "sgd", py::arg("alpha") = 1.0f,
           py::arg("epsilon") = 1e-10f, py::arg("state") = py::none(),
           py::arg("stream") = py::none(),
           "Collective. reduce() fused with the update of this rank's replicated table\n"
           "(float32, vocab_size x dim, written in place): 'add' (table += alpha g), 'sgd'\n"
           "(table -= alpha g) or 'adagrad' (with `state`, the accumulators, same shape),\n"
           "with the bits of reduce() then the update. key_routed (auto's choice here)\n"
           "streams the rows in rounds of the plan's stream_chunk_bytes. Returns whether\n"
           "some reduced value was not finite (then no table changed, on any rank).\n"
           "Refused inside comm.group().");
  plan.def("sharded_gather", &sharded_gather, py::arg("shard"), py::arg("indices"),
           py::kw_only(), py::arg("positions") = true,
           "Collective. The forward lookup of a table sharded by rows (shard: this rank's\n"
           "shard_rows(vocab_size, ranks, rank) x dim float32 rows). Returns\n"
           "ShardedLookup(indices, rows, positions): this rank's sorted distinct indices,\n"
           "their current rows (views of the plan's buffers, valid until its next call),\n"
           "and the place of each index among them (int32; None with positions=False).\n"
           "Inside comm.group() it returns a Pending whose wait() gives the lookup.");
  plan.def("sharded_reduce_apply", &sharded_reduce_apply, py::arg("indices"), py::arg("rows"),
           py::arg("shard"), py::kw_only(), py::arg("update") = "sgd",
           py::arg("alpha") = 1.0f, py::arg("epsilon") = 1e-10f,
           py::arg("state") = py::none(),
           "Collective. The update of a sharded table: each rank's summed rows go to their\n"
           "owners, which apply `update` to their shard (and state) in place. Returns\n"
           "whether some summed value was not finite (then no shard changed). Inside\n"
           "comm.group() it returns a Pending: the shards change when the group ends, and\n"
           "none does if any call of the group overflowed.");
  m.def("shard_rows", [](int64_t vocab_size, int ranks, int rank) {
          size_t rows = 0;
          check(zfcShardRows(vocab_size, ranks, rank, &rows), nullptr);
          return rows;
        }, py::arg("vocab_size"), py::arg("ranks"), py::arg("rank"),
        "Local. The rows of `rank`'s shard of a vocab_size-row table over `ranks` ranks.");
  m.def("shard_locate", [](int64_t vocab_size, int ranks, int64_t index) {
          int owner = -1;
          size_t row = 0;
          check(zfcShardLocate(vocab_size, ranks, index, &owner, &row), nullptr);
          return py::make_tuple(owner, row);
        }, py::arg("vocab_size"), py::arg("ranks"), py::arg("index"),
        "Local. (owner, row): where id `index` lives in a table sharded over `ranks`.");
}

}  // namespace zfcpy
