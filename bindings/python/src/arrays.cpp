#include "arrays.hpp"

#include <cstring>
#include <string>

#include "errors.hpp"

namespace zfcpy {
namespace {

Dtype from_format(const char* format, ssize_t itemsize) {
  // Byte order and alignment prefixes: the library runs on little-endian hosts only.
  while (*format == '@' || *format == '=' || *format == '<') ++format;
  if (std::strlen(format) != 1) return Dtype::kOther;
  switch (*format) {
    case 'i': case 'l': case 'q':
      if (itemsize == 4) return Dtype::kInt32;
      if (itemsize == 8) return Dtype::kInt64;
      return Dtype::kOther;
    case 'f': return itemsize == 4 ? Dtype::kFloat32 : Dtype::kOther;
    case 'e': return itemsize == 2 ? Dtype::kFloat16 : Dtype::kOther;
    case 'H': return itemsize == 2 ? Dtype::kUInt16 : Dtype::kOther;
    default: return Dtype::kOther;
  }
}

Dtype from_dl(DLDataType t) {
  if (t.lanes != 1) return Dtype::kOther;
  if (t.code == kDLInt && t.bits == 32) return Dtype::kInt32;
  if (t.code == kDLInt && t.bits == 64) return Dtype::kInt64;
  if (t.code == kDLFloat && t.bits == 32) return Dtype::kFloat32;
  if (t.code == kDLFloat && t.bits == 16) return Dtype::kFloat16;
  if (t.code == kDLBfloat && t.bits == 16) return Dtype::kBFloat16;
  if (t.code == kDLUInt && t.bits == 16) return Dtype::kUInt16;
  return Dtype::kOther;
}

bool compact_row_major(const int64_t* shape, const int64_t* strides, int ndim) {
  if (strides == nullptr) return true;
  int64_t want = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != want) return false;
    want *= shape[i];
  }
  return true;
}

bool borrow_buffer(py::handle obj, const char* name, Access access, Array* a, Py_buffer* v) {
  const int flags = PyBUF_STRIDES | PyBUF_FORMAT | (access == Access::kWrite ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj.ptr(), v, flags) != 0) {
    PyErr_Clear();
    if (access == Access::kWrite && PyObject_GetBuffer(obj.ptr(), v, PyBUF_STRIDES) == 0) {
      PyBuffer_Release(v);
      raise_invalid("%s is read-only, but the call writes to it", name);
    }
    PyErr_Clear();
    return false;
  }
  a->data = v->buf;
  a->shape.assign(v->shape, v->shape + v->ndim);
  if (v->ndim == 0) a->shape.clear();
  a->dtype = from_format(v->format != nullptr ? v->format : "B", v->itemsize);
  return true;
}

// Calls obj.__dlpack__ as the protocol asks: CUDA producers are given the stream the call
// will use (1 stands for the legacy default stream, which a NULL stream means here).
py::capsule dlpack_capsule(py::handle obj, bool* device, int* device_id, void* stream) {
  py::tuple where = obj.attr("__dlpack_device__")();
  const int kind = where[0].cast<int>();
  *device_id = where[1].cast<int>();
  *device = kind == kDLCUDA || kind == kDLCUDAManaged;
  if (kind != kDLCPU && kind != kDLCUDAHost && !*device) {
    raise_invalid("DLPack device type %d is neither CPU nor CUDA", kind);
  }
  if (!*device) return obj.attr("__dlpack__")();
  return obj.attr("__dlpack__")(py::arg("stream") = dlpack_stream(stream));
}

}  // namespace

const char* dtype_name(Dtype t) {
  switch (t) {
    case Dtype::kInt32: return "int32";
    case Dtype::kInt64: return "int64";
    case Dtype::kFloat32: return "float32";
    case Dtype::kFloat16: return "float16";
    case Dtype::kBFloat16: return "bfloat16";
    case Dtype::kUInt16: return "uint16";
    default: return "an unsupported type";
  }
}

Array::~Array() {
  if (has_view_) PyBuffer_Release(&view_);
  if (managed_ != nullptr && managed_->deleter != nullptr) managed_->deleter(managed_);
}

size_t Array::size() const {
  size_t n = 1;
  for (int64_t s : shape) n *= static_cast<size_t>(s);
  return n;
}

size_t Array::extent(int axis) const {
  return axis < ndim() ? static_cast<size_t>(shape[axis]) : 1;
}

std::unique_ptr<Array> borrow(py::handle obj, const char* name, Access access, void* stream) {
  auto a = std::make_unique<Array>();
  a->name = name;
  if (obj.is_none()) raise_invalid("%s is None; an array is needed", name);
  if (PyObject_CheckBuffer(obj.ptr()) && borrow_buffer(obj, name, access, a.get(), &a->view_)) {
    a->has_view_ = true;
    if (!PyBuffer_IsContiguous(&a->view_, 'C')) {
      raise_invalid("%s is not C-contiguous; pass a contiguous array (numpy.ascontiguousarray)",
                    name);
    }
    return a;
  }
  if (!py::hasattr(obj, "__dlpack__")) {
    const std::string type = py::str(py::type::handle_of(obj).attr("__name__"));
    raise_invalid("%s (a %s) has neither the buffer protocol nor __dlpack__", name,
                  type.c_str());
  }
  int device_id = 0;
  py::capsule cap = dlpack_capsule(obj, &a->device, &device_id, stream);
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), kDltensorName));
  if (m == nullptr) throw py::error_already_set();
  // Taken: the capsule must no longer free it; ~Array calls the producer's deleter.
  PyCapsule_SetName(cap.ptr(), kUsedDltensorName);
  a->managed_ = m;
  const DLTensor& t = m->dl_tensor;
  a->data = static_cast<char*>(t.data) + t.byte_offset;
  a->shape.assign(t.shape, t.shape + t.ndim);
  a->dtype = from_dl(t.dtype);
  a->device_id = device_id;
  if (!compact_row_major(t.shape, t.strides, t.ndim)) {
    raise_invalid("%s is not C-contiguous; pass a contiguous tensor (.contiguous())", name);
  }
  return a;
}

void* stream_pointer(py::handle stream) {
  if (stream.is_none()) return nullptr;
  py::handle value = stream;
  py::object attr;
  if (py::hasattr(stream, "cuda_stream")) {
    attr = stream.attr("cuda_stream");
    value = attr;
  } else if (py::hasattr(stream, "ptr")) {
    attr = stream.attr("ptr");
    value = attr;
  }
  if (!py::isinstance<py::int_>(value)) {
    raise_invalid("stream must be None, an int (a cudaStream_t) or a stream object");
  }
  return reinterpret_cast<void*>(value.cast<uintptr_t>());
}

zfcDataType_t index_type_of(const Array& a) {
  if (a.dtype == Dtype::kInt32) return zfcInt32;
  if (a.dtype == Dtype::kInt64) return zfcInt64;
  raise_invalid("%s must hold int32 or int64 indices, not %s", a.name.c_str(),
                dtype_name(a.dtype));
}

zfcDataType_t row_type_of(const Array& a, int declared) {
  zfcDataType_t got;
  switch (a.dtype) {
    case Dtype::kFloat32: got = zfcFloat32; break;
    case Dtype::kFloat16: got = zfcFloat16; break;
    case Dtype::kBFloat16: got = zfcBFloat16; break;
    case Dtype::kUInt16:
      if (declared == zfcBFloat16) return zfcBFloat16;  // bfloat16 bits in a uint16 array
      [[fallthrough]];
    default:
      raise_invalid("%s must hold float32, float16 or bfloat16 rows, not %s", a.name.c_str(),
                    dtype_name(a.dtype));
  }
  if (declared >= 0 && got != static_cast<zfcDataType_t>(declared)) {
    raise_invalid("%s holds %s rows, but the plan was made for %s", a.name.c_str(),
                  dtype_name(a.dtype),
                  dtype_name(declared == zfcFloat16 ? Dtype::kFloat16
                             : declared == zfcBFloat16 ? Dtype::kBFloat16
                                                       : Dtype::kFloat32));
  }
  return got;
}

void require_size(const Array& a, size_t want, const char* what) {
  if (a.size() != want) {
    raise_invalid("%s has %zu elements; %s needs %zu", a.name.c_str(), a.size(), what, want);
  }
}

}  // namespace zfcpy
