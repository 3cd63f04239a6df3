// The plugin libzipfcoll-hwloc.so: the topology as hwloc reads it, built apart from
// libzipfcoll so that the library itself does not need libhwloc.
#include "base/plugin_abi.hpp"
#include "topo/topology.hpp"

namespace {
const zfc::HwlocPlugin kEntries{&zfc::read_hwloc_topology};
}  // namespace

ZFC_DEFINE_PLUGIN("hwloc", kEntries)
