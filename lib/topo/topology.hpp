// Where a rank runs: the machine's cores and NUMA nodes (from hwloc where it is), this
// rank's share of the cores given its place among the ranks on the machine, optional binding
// to that share, and a one-line summary for logs and benchmark headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host_device/status.hpp"

namespace zfc {

// An id of this host: equal on two processes of one machine, different across machines (a
// hash of the host name and the kernel's boot id).
uint64_t host_id();

// The cores (indexes 0..cores-1 in the machine's order) that local rank `local_rank` of
// `local_size` gets: a contiguous block of an even split, or one shared core each when there
// are more ranks than cores.
std::vector<int> share_cores(int cores, int local_rank, int local_size);

struct Topology {
  int cores = 0;               // physical cores of the machine
  int hardware_threads = 0;
  int numa_nodes = 0;
  std::vector<int> rank_cores; // this rank's share (share_cores)
  std::vector<int> rank_numa;  // the NUMA nodes of those cores
  bool bound = false;          // the process is bound to its share
  std::string summary;         // one line
};

// Reads the machine's topology and this rank's share; with `bind`, binds the process to its
// share. Failures are reported in the summary, not as errors: placement is advice.
Topology discover_topology(int local_rank, int local_size, bool bind);

// The one-line summary of `t` for local rank `local_rank` of `local_size`, read by `source`.
std::string describe_topology(const Topology& t, int local_rank, int local_size,
                              const char* source);

// "0-3,6" for a sorted list of indexes ("-" for none).
std::string index_ranges(const std::vector<int>& v);

// The topology as hwloc reads it (topology_hwloc.cpp, in the static library or the plugin
// libzipfcoll-hwloc.so), this rank's share, and with `bind` the binding. False when this
// library has no hwloc (built without it, or its plugin does not load here).
bool read_hwloc_topology(int local_rank, int local_size, bool bind, Topology* out);

// True when this library reads the topology with hwloc.
bool hwloc_available();

// What the plugin libzipfcoll-hwloc.so exports (hwloc_plugin.cpp).
struct HwlocPlugin {
  decltype(&read_hwloc_topology) discover;
};

}  // namespace zfc
