// The communicator's collectives (unique_merge, allreduce) and the local row operations
// (scatter_to_dense, apply_rows). Arrays are the caller's memory, passed through untouched;
// outputs the caller does not pass are allocated as NumPy arrays (host inputs only).
#include <pybind11/numpy.h>

#include "arrays.hpp"
#include "config.hpp"
#include "errors.hpp"
#include "group_calls.hpp"
#include "handles.hpp"
#include "refusals.hpp"

namespace zfcpy {
namespace {

bool wants_allocation(py::handle out) { return out.is_none() || py::isinstance<py::bool_>(out); }

py::array new_host_array(zfcDataType_t type, std::vector<ssize_t> shape) {
  switch (type) {
    case zfcInt32: return py::array_t<int32_t>(shape);
    case zfcInt64: return py::array_t<int64_t>(shape);
    default: return py::array_t<float>(shape);
  }
}

// Outputs the module allocates are host memory; device callers pass their own.
void require_host(const Array& in, const char* output) {
  if (in.device) {
    raise_invalid("%s is device memory: pass %s (a device array) as well", in.name.c_str(),
                  output);
  }
}

py::object unique_merge(const Comm& c, py::handle indices, int64_t vocab_size, py::handle out,
                        py::handle positions, py::handle stream_obj) {
  zfcComm_t h = c.get();  // may raise: with the GIL held
  void* stream = nullptr;
  std::unique_ptr<Array> in, u, pos;
  zfcDataType_t type = zfcInt32;
  py::object out_obj = py::reinterpret_borrow<py::object>(out);
  const bool allocated_out = out.is_none();
  py::object pos_obj = py::none();
  size_t num_unique = 0;
  const Refusal how{h, "unique_merge", false, [&] {
    return zfcUniqueMerge(h, nullptr, zfcInt32, 0, vocab_size, nullptr, 0, &num_unique,
                          nullptr, nullptr);
  }};
  py::object refused;
  checks_pass(how, [&] {
    stream = stream_pointer(stream_obj);
    in = borrow(indices, "indices", Access::kRead, stream);
    type = index_type_of(*in);
    // Without `out`, room for U_g <= V: untouched pages of the allocation cost nothing, and
    // the U_g found are copied out of it below.
    if (allocated_out) {
      require_host(*in, "out");
      if (vocab_size < 0) raise_invalid("vocab_size %lld is negative", (long long)vocab_size);
      out_obj = new_host_array(type, {static_cast<ssize_t>(vocab_size)});
    }
    u = borrow(out_obj, "out", Access::kWrite, stream);
    if (u->dtype != in->dtype) {
      raise_invalid("out holds %s but indices hold %s", dtype_name(u->dtype),
                    dtype_name(in->dtype));
    }
    if (!(py::isinstance<py::bool_>(positions) && !positions.cast<bool>())) {
      pos_obj = py::reinterpret_borrow<py::object>(positions);
      if (wants_allocation(positions)) {
        require_host(*in, "positions");
        pos_obj = py::array_t<int32_t>(in->shape.empty()
                                           ? std::vector<ssize_t>{1}
                                           : std::vector<ssize_t>(in->shape.begin(),
                                                                  in->shape.end()));
      }
      pos = borrow(pos_obj, "positions", Access::kWrite, stream);
      if (pos->dtype != Dtype::kInt32) raise_invalid("positions must be int32");
      require_size(*pos, in->size(), "one position per index");
    }
  }, &refused);  // unique_merge is no group's: a refusal is raised here
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcUniqueMerge(h, in->data, type, in->size(), vocab_size, u->data, u->size(),
                       &num_unique, pos ? static_cast<int32_t*>(pos->data) : nullptr, stream);
  }
  check(r, h);
  py::object unique = out_obj[py::slice(0, static_cast<ssize_t>(num_unique), 1)];
  if (allocated_out) unique = unique.attr("copy")();
  return result_type("UniqueMergeResult")(unique, pos_obj);
}

py::object allreduce(const Comm& c, py::handle send, py::handle out, py::handle compression,
                     float scale, py::handle residual_obj, py::handle stream_obj) {
  zfcComm_t h = c.get();  // may raise: with the GIL held
  void* stream = nullptr;
  std::unique_ptr<Array> in, o, res;
  py::object out_obj = py::reinterpret_borrow<py::object>(out);
  zfcCompression_t how{zfcCompressNone, scale};
  int neutral_flag = 0;
  const Refusal refusal{h, "allreduce", true, [&] {
    return zfcAllReduce(h, nullptr, nullptr, 0, zfcFloat32, nullptr, &neutral_flag, nullptr);
  }};
  py::object refused;
  if (!checks_pass(refusal, [&] {
        stream = stream_pointer(stream_obj);
        in = borrow(send, "send", Access::kRead, stream);
        if (in->dtype != Dtype::kFloat32) {
          raise_invalid("send must hold float32 values, not %s", dtype_name(in->dtype));
        }
        if (out.is_none()) {
          require_host(*in, "out");
          out_obj = new_host_array(zfcFloat32, std::vector<ssize_t>(in->shape.begin(),
                                                                    in->shape.end()));
        }
        o = borrow(out_obj, "out", Access::kWrite, stream);
        if (o->dtype != Dtype::kFloat32) raise_invalid("out must hold float32 values");
        require_size(*o, in->size(), "the size of send");
        how.kind = compression_of(compression);
        if (!residual_obj.is_none()) {
          res = borrow(residual_obj, "residual", Access::kWrite, stream);
          require_host(*res, "residual");
          if (res->dtype != Dtype::kFloat32) raise_invalid("residual must hold float32 values");
          require_size(*res, in->size(), "the size of send");
        }
      }, &refused)) {
    return refused;
  }
  if (group_open(h)) {
    // Recorded: the library reads send and writes out and the flag when the group ends.
    auto call = std::make_shared<PendingCall>("allreduce");
    call->objects.push_back(out_obj);
    call->make_result = [](PendingCall& p) {
      return result_type("AllReduceResult")(p.objects[0], p.overflowed != 0);
    };
    const void* send_data = in->data;
    void* out_data = o->data;
    float* residual = res ? static_cast<float*>(res->data) : nullptr;
    const size_t count = in->size();
    int* overflowed = &call->overflowed;
    call->arrays.push_back(std::move(in));
    call->arrays.push_back(std::move(o));
    if (res) call->arrays.push_back(std::move(res));
    return record_in_group(h, std::move(call), [&] {
      return zfcAllReduceWithResidual(h, send_data, out_data, count, zfcFloat32, &how,
                                      residual, overflowed, stream);
    });
  }
  int overflowed = 0;
  zfcResult_t r;
  {
    py::gil_scoped_release unlocked;
    r = zfcAllReduceWithResidual(h, in->data, o->data, in->size(), zfcFloat32, &how,
                                 res ? static_cast<float*>(res->data) : nullptr, &overflowed,
                                 stream);
  }
  check(r, h);
  return result_type("AllReduceResult")(out_obj, overflowed != 0);
}

py::object scatter_to_dense(py::handle rows, py::handle positions, size_t num_unique,
                            py::handle out, py::object row_type, py::handle stream_obj) {
  void* stream = stream_pointer(stream_obj);
  auto r_arr = borrow(rows, "rows", Access::kRead, stream);
  auto p_arr = borrow(positions, "positions", Access::kRead, stream);
  if (p_arr->dtype != Dtype::kInt32) raise_invalid("positions must be int32");
  const int declared = row_type.is_none() ? -1 : data_type_of(row_type, "row_type");
  const zfcDataType_t type = row_type_of(*r_arr, declared);
  const size_t count = p_arr->size();
  if (r_arr->ndim() != 2 || r_arr->extent(0) != count) {
    raise_invalid("rows must have shape (count, dim) with count = %zu positions", count);
  }
  const size_t dim = r_arr->extent(1);
  py::object out_obj = py::reinterpret_borrow<py::object>(out);
  if (out.is_none()) {
    require_host(*r_arr, "out");
    out_obj = py::array_t<float>({static_cast<ssize_t>(num_unique), static_cast<ssize_t>(dim)});
  }
  auto d = borrow(out_obj, "out", Access::kWrite, stream);
  if (d->dtype != Dtype::kFloat32) raise_invalid("out must hold float32 values");
  require_size(*d, num_unique * dim, "num_unique x dim");
  zfcResult_t res;
  {
    py::gil_scoped_release unlocked;
    res = zfcScatterToDense(r_arr->data, type, static_cast<const int32_t*>(p_arr->data), count,
                            dim, static_cast<float*>(d->data), num_unique, stream);
  }
  check(res, nullptr);
  return out_obj;
}

void apply_rows(py::handle table, py::handle indices, py::handle rows, float alpha,
                py::handle stream_obj) {
  void* stream = stream_pointer(stream_obj);
  auto t = borrow(table, "table", Access::kWrite, stream);
  auto i = borrow(indices, "indices", Access::kRead, stream);
  auto r = borrow(rows, "rows", Access::kRead, stream);
  if (t->dtype != Dtype::kFloat32 || t->ndim() != 2) {
    raise_invalid("table must be a float32 matrix (vocab_size, dim)");
  }
  if (r->dtype != Dtype::kFloat32) raise_invalid("rows must hold float32 values");
  const zfcDataType_t itype = index_type_of(*i);
  const size_t dim = t->extent(1);
  require_size(*r, i->size() * dim, "one table-wide row per index");
  zfcResult_t res;
  {
    py::gil_scoped_release unlocked;
    res = zfcApplyRows(static_cast<float*>(t->data), static_cast<int64_t>(t->extent(0)), dim,
                       i->data, itype, static_cast<const float*>(r->data), i->size(), alpha,
                       stream);
  }
  check(res, nullptr);
}

}  // namespace

void bind_collectives(py::class_<Comm>& comm, py::module_& m) {
  comm.def("unique_merge", &unique_merge, py::arg("indices"), py::arg("vocab_size"),
           py::kw_only(), py::arg("out") = py::none(), py::arg("positions") = py::none(),
           py::arg("stream") = py::none(),
           "Collective. The sorted distinct indices over all ranks (int32 or int64, each in\n"
           "[0, vocab_size)) and, for each local index, its position among them.\n"
           "Returns UniqueMergeResult(unique, positions): unique is out[:U_g] when `out` is\n"
           "given (room for U_g; written in place), else a new array; positions is the\n"
           "`positions` array given (int32, written in place), a new one, or None when\n"
           "positions=False. Device indices need out and positions (or False).");
  comm.def("allreduce", &allreduce, py::arg("send"), py::arg("out") = py::none(),
           py::kw_only(), py::arg("compression") = py::none(), py::arg("scale") = 1.0f,
           py::arg("residual") = py::none(), py::arg("stream") = py::none(),
           "Collective. Sums float32 `send` over ranks into `out` (written in place; may be\n"
           "send itself; a new array when None and send is host memory). compression 'fp16'\n"
           "or 'bf16' sends values times `scale` in 16 bits, 'fp8_e4m3', 'fp8_e5m2' and\n"
           "'int8' a byte per value and a scale per 256; '..._sr' rounds stochastically.\n"
           "`residual` (host float32, send's size, kept by the caller; zeros at first):\n"
           "error feedback, zfcAllReduceWithResidual. Sums are fp32, in rank order,\n"
           "identical on every rank. Returns AllReduceResult(out, overflowed): overflowed is\n"
           "True on every rank when some result is not finite. Inside comm.group(): a\n"
           "Pending whose wait() gives it once the group ended.");
  m.def("scatter_to_dense", &scatter_to_dense, py::arg("rows"), py::arg("positions"),
        py::arg("num_unique"), py::kw_only(), py::arg("out") = py::none(),
        py::arg("row_type") = py::none(), py::arg("stream") = py::none(),
        "Local. out (num_unique x dim float32, zero-filled first) gets row i of rows\n"
        "(count x dim; float32, float16, or bfloat16: a uint16 array with\n"
        "row_type='bfloat16') added at row positions[i], in order of i in blocks of\n"
        "SUM_BLOCK_ROWS per position (zipfcoll.h, 'Token order'), in fp32.\n"
        "Returns out (the array given, written in place, or a new one).");
  m.def("apply_rows", &apply_rows, py::arg("table"), py::arg("indices"), py::arg("rows"),
        py::kw_only(), py::arg("alpha") = 1.0f, py::arg("stream") = py::none(),
        "Local. table[indices[p]] += alpha * rows[p], in place; indices are checked against\n"
        "the table's rows before anything is written.");
}

}  // namespace zfcpy
