// Library-owned results handed to Python without a copy: read-only NumPy views of host
// memory, and DeviceArray for CUDA memory, which any DLPack consumer
// (torch.from_dlpack, cupy.from_dlpack) or __cuda_array_interface__ reader takes.
#include <string>

#include "arrays.hpp"
#include "errors.hpp"

namespace zfcpy {
namespace {

py::dtype numpy_dtype(zfcDataType_t type) {
  switch (type) {
    case zfcInt32: return py::dtype::of<int32_t>();
    case zfcInt64: return py::dtype::of<int64_t>();
    case zfcFloat16: return py::dtype("float16");
    case zfcBFloat16: return py::dtype::of<uint16_t>();  // NumPy has no bfloat16
    default: return py::dtype::of<float>();
  }
}

DLDataType dl_type(zfcDataType_t type) {
  switch (type) {
    case zfcInt32: return {kDLInt, 32, 1};
    case zfcInt64: return {kDLInt, 64, 1};
    case zfcFloat16: return {kDLFloat, 16, 1};
    case zfcBFloat16: return {kDLBfloat, 16, 1};
    default: return {kDLFloat, 32, 1};
  }
}

const char* typestr(zfcDataType_t type) {
  switch (type) {
    case zfcInt32: return "<i4";
    case zfcInt64: return "<i8";
    case zfcFloat16: return "<f2";
    case zfcBFloat16: return "<V2";  // no array-interface code for bfloat16
    default: return "<f4";
  }
}

// Device memory that another object (a plan) owns, shown through the two GPU array
// protocols.
struct DeviceArray {
  void* data;
  zfcDataType_t type;
  std::vector<int64_t> shape;
  int device_id;
  py::object owner;
  // 0: complete when the call that made it returned. Else the stream, in DLPack's numbering
  // (1: the legacy default stream; else a cudaStream_t), on which the call's work that
  // writes this memory is still queued: only that stream may read it without a wait.
  uintptr_t pending = 0;
};

// What a DLPack capsule made here carries: the tensor, its shape and a reference to the
// owner, all freed by the consumer through the deleter.
struct Exported {
  DLManagedTensor managed;
  std::vector<int64_t> shape;
  PyObject* owner;
};

void delete_exported(DLManagedTensor* m) {
  auto* e = static_cast<Exported*>(m->manager_ctx);
  py::gil_scoped_acquire gil;
  Py_XDECREF(e->owner);
  delete e;
}

void capsule_destructor(PyObject* cap) {
  // A capsule never consumed still owns its tensor.
  if (!PyCapsule_IsValid(cap, kDltensorName)) return;
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kDltensorName));
  if (m != nullptr) m->deleter(m);
}

py::capsule to_dlpack(const DeviceArray& a) {
  auto* e = new Exported();
  e->shape = a.shape;
  e->owner = a.owner.ptr();
  Py_XINCREF(e->owner);
  DLTensor& t = e->managed.dl_tensor;
  t.data = a.data;
  t.device = {kDLCUDA, a.device_id};
  t.ndim = static_cast<int32_t>(e->shape.size());
  t.dtype = dl_type(a.type);
  t.shape = e->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = delete_exported;
  PyObject* cap = PyCapsule_New(&e->managed, kDltensorName, capsule_destructor);
  if (cap == nullptr) {
    delete_exported(&e->managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

// A consumer on `stream` (DLPack's numbering; None is the legacy default stream, -1 asks
// for no ordering) may read `a` if its data is complete or written on that same stream.
// Any other stream would need a wait queued on it, which this module does not make: it
// links no CUDA runtime of its own.
void check_readable_on(const DeviceArray& a, const py::object& stream) {
  if (!stream.is_none() && !py::isinstance<py::int_>(stream)) {
    throw py::type_error("stream must be None or an int (DLPack's numbering)");
  }
  if (a.pending == 0) return;
  const long long asked = stream.is_none() ? 1 : stream.cast<long long>();
  if (asked == -1 || static_cast<uintptr_t>(asked) == a.pending) return;
  throw py::buffer_error("this result is still being written on stream " +
                         std::to_string(a.pending) + " (the call's) and stream " +
                         std::to_string(asked) + " would not wait for it: read it on the "
                         "call's stream, or synchronize that stream and take "
                         "__dlpack__(stream=-1)");
}

}  // namespace

py::array host_view(const void* data, zfcDataType_t type, std::vector<ssize_t> shape,
                    py::handle owner) {
  py::array view(numpy_dtype(type), shape, data, owner);
  // The owner rewrites this memory on its next call; the caller must not.
  py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return view;
}

py::object device_view(const void* data, zfcDataType_t type, std::vector<int64_t> shape,
                       int device_id, py::handle owner, uintptr_t pending) {
  return py::cast(DeviceArray{const_cast<void*>(data), type, std::move(shape), device_id,
                              py::reinterpret_borrow<py::object>(owner), pending});
}

uintptr_t dlpack_stream(const void* stream) {
  // cudaStream_t 0 is the legacy default stream, which DLPack and the CUDA array interface
  // number 1 (their 0 is ambiguous).
  return stream == nullptr ? 1 : reinterpret_cast<uintptr_t>(stream);
}

void bind_device_array(py::module_& m) {
  py::class_<DeviceArray>(m, "DeviceArray",
      "CUDA memory owned by a zipfcoll object (a plan's result), for torch.from_dlpack,\n"
      "cupy.from_dlpack or any __cuda_array_interface__ reader. Valid as long as its owner\n"
      "says (a plan's result: until the plan's next reduce; its overflow_flag: until the\n"
      "plan's next call of any kind).")
      .def_property_readonly("shape", [](const DeviceArray& a) {
        py::tuple t(a.shape.size());
        for (size_t i = 0; i < a.shape.size(); ++i) t[i] = a.shape[i];
        return t;
      })
      .def_property_readonly("dtype", [](const DeviceArray& a) { return numpy_dtype(a.type); })
      .def_property_readonly("ptr", [](const DeviceArray& a) {
        return reinterpret_cast<uintptr_t>(a.data);
      })
      .def_property_readonly("stream", [](const DeviceArray& a) -> py::object {
        if (a.pending == 0) return py::none();
        return py::int_(a.pending);
      }, "None when the data was complete as the call that made it returned; else the\n"
         "stream (as DLPack numbers it: 1 is the legacy default stream) that still writes\n"
         "it: a plan made with overflow_on_device=True returns with its step queued.")
      .def("__dlpack__", [](const DeviceArray& a, py::object stream) {
        check_readable_on(a, stream);
        return to_dlpack(a);
      }, py::arg("stream") = py::none(),
           "A DLPack capsule of this memory. Data complete at the call's return needs no\n"
           "stream ordering. Data still being written (see `stream`) is given only to a\n"
           "consumer on that stream, or to stream=-1 (the caller orders it); any other\n"
           "stream is refused with BufferError, since no wait is queued for it.")
      .def("__dlpack_device__", [](const DeviceArray& a) {
        return py::make_tuple(static_cast<int>(kDLCUDA), a.device_id);
      })
      .def_property_readonly("__cuda_array_interface__", [](const DeviceArray& a) {
        py::dict d;
        py::tuple shape(a.shape.size());
        for (size_t i = 0; i < a.shape.size(); ++i) shape[i] = a.shape[i];
        d["shape"] = shape;
        d["typestr"] = typestr(a.type);
        d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(a.data), true);
        d["version"] = 3;
        d["strides"] = py::none();
        // Version 3's key: a reader on another stream makes it wait for this one.
        if (a.pending != 0) d["stream"] = py::int_(a.pending);
        return d;
      });
  // For the suite, which has no GPU: an empty DeviceArray (no memory behind it) whose data
  // is still being written on `pending` (0: complete), to check the protocols' stream rules.
  m.def("_device_array_for_tests", [](uintptr_t pending) {
    return device_view(nullptr, zfcInt32, {0}, 0, py::none(), pending);
  }, py::arg("pending"));
}

}  // namespace zfcpy
