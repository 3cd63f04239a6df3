// Python keyword arguments and names ("fp16", "unique_allreduce", ...) to the C API's
// config structs and enums; a bad name or value is InvalidArgumentError naming it.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "zipfcoll/zipfcoll.h"

namespace py = pybind11;

namespace zfcpy {

// A communicator's config from keyword arguments (see Comm.from_mpi4py). `name` receives
// the storage of config.name, which must outlive the init call.
zfcConfig_t comm_config(const py::kwargs& kw, std::string* name);

// An algorithm by name or number; `allow_default`: "default" (-1) is accepted.
int algorithm_of(py::handle value, bool allow_default);
// A compression kind by name or number ("none", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2",
// "int8", each but "none" also with "_sr": stochastic rounding); None is "none".
zfcCompressionKind_t compression_of(py::handle value);
zfcTransport_t transport_of(py::handle value);
zfcSeedPolicy_t seed_policy_of(py::handle value);
// A row or index type by name or NumPy dtype ("float32", numpy.float16, "bfloat16", ...).
zfcDataType_t data_type_of(py::handle value, const char* what);

}  // namespace zfcpy
