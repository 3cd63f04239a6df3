// Compiled instead of topology_hwloc.cpp when the library is built without hwloc.
#include "topo/topology.hpp"

namespace zfc {

bool read_hwloc_topology(int, int, bool, Topology*) { return false; }

bool hwloc_available() { return false; }

}  // namespace zfc
