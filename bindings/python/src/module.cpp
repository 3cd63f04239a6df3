// zipfcoll._zipfcoll: the C API for Python. The public names are re-exported by
// zipfcoll/__init__.py; the exception classes and result tuples live in Python.
#include <pybind11/pybind11.h>

#include "arrays.hpp"
#include "errors.hpp"
#include "handles.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_zipfcoll, m) {
  m.doc() = "zipfcoll: sparse-embedding collectives (the C extension)";
  int version = 0;
  zfcGetVersion(&version);
  m.attr("library_version") = version;
  m.attr("header_version") = ZFC_VERSION_CODE;
  m.attr("__version__") = ZFC_VERSION_STRING;
  // Part of what a sum's bits are (zipfcoll.h, "Token order"): references need it.
  m.attr("SUM_BLOCK_ROWS") = ZFC_SUM_BLOCK_ROWS;
  m.def("algorithm_name", &zfcGetAlgorithmName, py::arg("algorithm"),
        "The name of a zfcAlgorithm_t number ('unknown' for a bad one).");
  m.def("error_string", [](int code) {
    return std::string(zfcGetErrorString(static_cast<zfcResult_t>(code)));
  }, py::arg("code"), "The library's fixed text for a result code.");
  zfcpy::bind_device_array(m);
  zfcpy::bind_comm(m);
  zfcpy::bind_plan(m);
  zfcpy::bind_tables(m);
  zfcpy::bind_seed_groups(m);
  zfcpy::bind_workload(m);
}
