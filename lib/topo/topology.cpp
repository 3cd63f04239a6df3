#include "topo/topology.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace zfc {
namespace {

uint64_t fnv1a(const std::string& s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string host_name() {
  char name[256] = "unknown";
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

// "0-3,6" for a sorted list of indexes.
std::string index_ranges(const std::vector<int>& v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(v[i]);
    if (j > i) out += "-" + std::to_string(v[j]);
    i = j + 1;
  }
  return out.empty() ? "-" : out;
}

std::string describe_topology(const Topology& t, int local_rank, int local_size,
                              const char* source) {
  std::ostringstream s;
  s << "host " << host_name() << ": " << t.cores << " cores, " << t.hardware_threads
    << " hardware threads, " << t.numa_nodes << " NUMA node" << (t.numa_nodes == 1 ? "" : "s")
    << " (" << source << "); local rank " << local_rank << " of " << local_size << " on cores "
    << index_ranges(t.rank_cores) << ", NUMA " << index_ranges(t.rank_numa)
    << (t.bound ? ", bound" : ", not bound");
  return s.str();
}

uint64_t host_id() {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  return fnv1a(boot, fnv1a(host_name()));
}

std::vector<int> share_cores(int cores, int local_rank, int local_size) {
  std::vector<int> out;
  if (cores <= 0 || local_size <= 0 || local_rank < 0 || local_rank >= local_size) return out;
  if (local_size > cores) {
    out.push_back(local_rank % cores);
    return out;
  }
  const int base = cores / local_size, extra = cores % local_size;
  const int first = local_rank * base + (local_rank < extra ? local_rank : extra);
  const int count = base + (local_rank < extra ? 1 : 0);
  for (int c = first; c < first + count; ++c) out.push_back(c);
  return out;
}

Topology discover_topology(int local_rank, int local_size, bool bind) {
  Topology t;
  if (read_hwloc_topology(local_rank, local_size, bind, &t)) return t;
  // Without hwloc: hardware threads are taken for cores, and nothing is bound.
  t.hardware_threads = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  t.cores = t.hardware_threads;
  t.numa_nodes = 1;
  t.rank_cores = share_cores(t.cores, local_rank, local_size);
  t.rank_numa = {0};
  t.summary = describe_topology(t, local_rank, local_size,
                                "no hwloc: hardware threads counted as cores");
  return t;
}

}  // namespace zfc
