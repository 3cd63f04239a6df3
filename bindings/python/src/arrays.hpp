// The caller's arrays, borrowed for the length of one call without copying: anything with
// the buffer protocol (NumPy, bytearray, memoryview, array.array) or with __dlpack__
// (PyTorch, CuPy, JAX; CUDA memory included). Results the library owns go back out as
// read-only NumPy views, or for device memory as DeviceArray (DLPack and
// __cuda_array_interface__), each keeping its owner alive.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dlpack_abi.hpp"
#include "zipfcoll/zipfcoll.h"

namespace py = pybind11;

namespace zfcpy {

enum class Dtype { kInt32, kInt64, kFloat32, kFloat16, kBFloat16, kUInt16, kOther };

const char* dtype_name(Dtype t);

enum class Access { kRead, kWrite };

class Array {
 public:
  Array() = default;
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  ~Array();

  void* data = nullptr;
  std::vector<int64_t> shape;
  Dtype dtype = Dtype::kOther;
  bool device = false;  // CUDA device (or managed) memory
  int device_id = 0;    // its CUDA device
  std::string name;     // the argument's name, for messages

  size_t size() const;               // number of elements
  size_t extent(int axis) const;     // shape[axis], 1 past the last axis
  int ndim() const { return static_cast<int>(shape.size()); }

 private:
  friend std::unique_ptr<Array> borrow(py::handle, const char*, Access, void*);
  Py_buffer view_{};
  bool has_view_ = false;
  DLManagedTensor* managed_ = nullptr;
};

// Borrows `obj` (argument `name`) for one call. `stream` is handed to a device producer's
// __dlpack__ so that its pending work is ordered before the call. Raises
// InvalidArgumentError naming the argument when obj is not a C-contiguous array, or is
// read-only while `access` is kWrite.
std::unique_ptr<Array> borrow(py::handle obj, const char* name, Access access, void* stream);

// None -> NULL; an int (a cudaStream_t's address); an object with `cuda_stream` (PyTorch)
// or `ptr` (CuPy).
void* stream_pointer(py::handle stream);

// The zfcDataType_t of an index array (int32 or int64), else InvalidArgumentError.
zfcDataType_t index_type_of(const Array& a);
// The zfcDataType_t of a row array: float32, float16, or bfloat16 (also uint16 holding
// bfloat16 bits when `declared` is zfcBFloat16). `declared` < 0: whatever the array holds.
zfcDataType_t row_type_of(const Array& a, int declared);

// Requires a.size() == want (and, for rows, shape (count, dim)); messages name the argument.
void require_size(const Array& a, size_t want, const char* what);

// A read-only NumPy view of host memory owned by `owner`, shape `shape`.
py::array host_view(const void* data, zfcDataType_t type, std::vector<ssize_t> shape,
                    py::handle owner);

// A DeviceArray viewing device memory on `device_id` owned by `owner`. `pending`: 0 when
// the memory is complete, else the stream (dlpack_stream) whose queued work still writes it.
py::object device_view(const void* data, zfcDataType_t type, std::vector<int64_t> shape,
                       int device_id, py::handle owner, uintptr_t pending = 0);

// A cudaStream_t (nullptr: the legacy default stream) as DLPack numbers streams.
uintptr_t dlpack_stream(const void* stream);

void bind_device_array(py::module_& m);

}  // namespace zfcpy
