#include "config.hpp"

#include <cstring>

#include "errors.hpp"

namespace zfcpy {
namespace {

struct Named {
  const char* name;
  int value;
};

// The wire formats by the names the C library gives them (zfc_perf, the trainer); "_sr":
// rounded stochastically.
const Named kCompressions[] = {{"none", zfcCompressNone},
                               {"fp16", zfcCompressFp16},
                               {"bf16", zfcCompressBf16},
                               {"fp8_e4m3", zfcCompressFp8E4M3},
                               {"fp8_e5m2", zfcCompressFp8E5M2},
                               {"int8", zfcCompressInt8},
                               {"fp16_sr", zfcCompressFp16Stochastic},
                               {"bf16_sr", zfcCompressBf16Stochastic},
                               {"fp8_e4m3_sr", zfcCompressFp8E4M3Stochastic},
                               {"fp8_e5m2_sr", zfcCompressFp8E5M2Stochastic},
                               {"int8_sr", zfcCompressInt8Stochastic}};
const Named kTransports[] = {{"auto", zfcTransportAuto}, {"mpi", zfcTransportMpi},
                             {"nccl", zfcTransportNccl}, {"ucx", zfcTransportUcx}};
const Named kPolicies[] = {{"power", zfcSeedPower},         {"log2", zfcSeedLog2},
                           {"ln", zfcSeedLn},               {"log10", zfcSeedLog10},
                           {"all_same", zfcSeedAllSame},    {"all_distinct", zfcSeedAllDistinct},
                           {"explicit", zfcSeedExplicit}};
const Named kTypes[] = {{"int32", zfcInt32},     {"int64", zfcInt64},
                        {"float32", zfcFloat32}, {"float16", zfcFloat16},
                        {"bfloat16", zfcBFloat16}};

template <size_t N>
int lookup(py::handle value, const Named (&table)[N], const char* what) {
  if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) {
    const int v = value.cast<int>();
    for (const Named& n : table) {
      if (n.value == v) return v;
    }
    raise_invalid("%s %d is not one of the known values", what, v);
  }
  const std::string s = py::str(value);
  std::string known;
  for (const Named& n : table) {
    if (s == n.name) return n.value;
    known += known.empty() ? "" : ", ";
    known += n.name;
  }
  raise_invalid("%s '%s' is not one of: %s", what, s.c_str(), known.c_str());
}

zfcLinkModel_t link_of(py::handle value, const char* what) {
  py::tuple t;
  try {
    t = py::tuple(py::reinterpret_borrow<py::object>(value));
  } catch (const py::error_already_set&) {
    raise_invalid("%s must be (latency_us, bandwidth_gbs)", what);
  }
  if (t.size() != 2) raise_invalid("%s must be (latency_us, bandwidth_gbs)", what);
  return {t[0].cast<double>(), t[1].cast<double>()};
}

}  // namespace

int algorithm_of(py::handle value, bool allow_default) {
  if (value.is_none() || (allow_default && py::str(value).cast<std::string>() == "default")) {
    if (!allow_default) raise_invalid("algorithm None is not one of the known values");
    return zfcAlgoDefault;
  }
  if (py::isinstance<py::int_>(value)) {
    const int v = value.cast<int>();
    if ((v == zfcAlgoDefault && allow_default) || (v >= 0 && v < zfcNumAlgorithms)) return v;
    raise_invalid("algorithm %d is not one of the known values", v);
  }
  const std::string s = py::str(value);
  std::string known;
  for (int a = 0; a < zfcNumAlgorithms; ++a) {
    if (s == zfcGetAlgorithmName(a)) return a;
    known += known.empty() ? "" : ", ";
    known += zfcGetAlgorithmName(a);
  }
  raise_invalid("algorithm '%s' is not one of: %s%s", s.c_str(), known.c_str(),
                allow_default ? ", default" : "");
}

zfcTransport_t transport_of(py::handle value) {
  return static_cast<zfcTransport_t>(lookup(value, kTransports, "transport"));
}

zfcCompressionKind_t compression_of(py::handle value) {
  if (value.is_none()) return zfcCompressNone;
  return static_cast<zfcCompressionKind_t>(lookup(value, kCompressions, "compression"));
}

zfcSeedPolicy_t seed_policy_of(py::handle value) {
  return static_cast<zfcSeedPolicy_t>(lookup(value, kPolicies, "seed policy"));
}

zfcDataType_t data_type_of(py::handle value, const char* what) {
  // NumPy dtypes and scalar types name themselves through numpy.dtype(value).name.
  py::object named = py::reinterpret_borrow<py::object>(value);
  if (!py::isinstance<py::str>(value)) {
    try {
      named = py::module_::import("numpy").attr("dtype")(value).attr("name");
    } catch (const py::error_already_set&) {
      named = py::str(value);
    }
  }
  return static_cast<zfcDataType_t>(lookup(named, kTypes, what));
}

zfcConfig_t comm_config(const py::kwargs& kw, std::string* name) {
  zfcConfig_t c = ZFC_CONFIG_INITIALIZER;
  for (auto item : kw) {
    const std::string key = py::str(item.first);
    py::handle v = item.second;
    if (key == "transport") c.transport = transport_of(v);
    else if (key == "device") c.device = v.cast<int>();
    else if (key == "timeout_ms") c.timeout_ms = v.cast<int>();
    else if (key == "algorithm") c.algorithm = algorithm_of(v, false);
    else if (key == "compression") c.compression = compression_of(v);
    else if (key == "scale") c.compress_scale = v.cast<float>();
    else if (key == "bounds_check") c.bounds_check = v.cast<bool>() ? 1 : 0;
    else if (key == "ranks_per_node") c.ranks_per_node = v.cast<int>();
    else if (key == "intra_node") c.intra_node = link_of(v, "intra_node");
    else if (key == "inter_node") c.inter_node = link_of(v, "inter_node");
    else if (key == "local_gbs") c.local_gbs = v.cast<double>();
    else if (key == "rounding_seed") c.rounding_seed = v.cast<unsigned long long>();
    else if (key == "name") {
      *name = v.is_none() ? std::string() : py::str(v).cast<std::string>();
      c.name = v.is_none() ? nullptr : name->c_str();
    } else {
      raise_invalid("'%s' is not a communicator setting (transport, device, timeout_ms, "
                    "algorithm, compression, scale, bounds_check, name, ranks_per_node, "
                    "intra_node, inter_node, local_gbs, rounding_seed)", key.c_str());
    }
  }
  return c;
}

}  // namespace zfcpy
