// hwloc in libzipfcoll: its plugin, loaded on first use. Without it the topology is still
// described (hardware threads counted as cores), so a missing plugin is not an error.
#include "base/plugin_loader.hpp"
#include "topo/topology.hpp"

namespace zfc {
namespace {

const HwlocPlugin* hwloc_plugin() {
  const HwlocPlugin* plugin = nullptr;
  return load_plugin("hwloc", "hwloc", &plugin).ok() ? plugin : nullptr;
}

}  // namespace

bool read_hwloc_topology(int local_rank, int local_size, bool bind, Topology* out) {
  const HwlocPlugin* plugin = hwloc_plugin();
  return plugin != nullptr && plugin->discover(local_rank, local_size, bind, out);
}

bool hwloc_available() { return hwloc_plugin() != nullptr; }

}  // namespace zfc
