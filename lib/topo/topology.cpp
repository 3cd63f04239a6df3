#include "topo/topology.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#if ZIPFCOLL_HAVE_HWLOC
#include <hwloc.h>
#if ZIPFCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <hwloc/cudart.h>
#endif
#endif

namespace zfc {
namespace {

uint64_t fnv1a(const std::string& s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// "0-3,6" for a sorted list of indexes.
std::string ranges(const std::vector<int>& v) {
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

std::string host_name() {
  char name[256] = "unknown";
  gethostname(name, sizeof name - 1);
  return name;
}

std::string describe(const Topology& t, int local_rank, int local_size, const char* source) {
  std::ostringstream s;
  s << "host " << host_name() << ": " << t.cores << " cores, " << t.hardware_threads
    << " hardware threads, " << t.numa_nodes << " NUMA node" << (t.numa_nodes == 1 ? "" : "s")
    << " (" << source << "); local rank " << local_rank << " of " << local_size << " on cores "
    << ranges(t.rank_cores) << ", NUMA " << ranges(t.rank_numa)
    << (t.bound ? ", bound" : ", not bound");
  return s.str();
}

#if ZIPFCOLL_HAVE_HWLOC
// "; GPU 0 near cores 0-15 (NUMA 0)" for the current CUDA device, or "" without one.
std::string gpu_locality(hwloc_topology_t topo) {
#if ZIPFCOLL_HAVE_CUDA
  int device = -1, count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 ||
      cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  hwloc_bitmap_t near = hwloc_bitmap_alloc();
  std::string out;
  if (hwloc_cudart_get_device_cpuset(topo, device, near) == 0) {
    std::vector<int> cores, numa;
    const int n_cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    for (int c = 0; c < n_cores; ++c) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
      if (core != nullptr && hwloc_bitmap_intersects(core->cpuset, near)) cores.push_back(c);
    }
    const int n_numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    for (int n = 0; n < n_numa; ++n) {
      hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
      if (node != nullptr && hwloc_bitmap_intersects(node->cpuset, near)) numa.push_back(n);
    }
    out = "; GPU " + std::to_string(device) + " near cores " + ranges(cores) + " (NUMA " +
          ranges(numa) + ")";
  }
  hwloc_bitmap_free(near);
  return out;
#else
  (void)topo;
  return "";
#endif
}

Topology from_hwloc(int local_rank, int local_size, bool bind) {
  Topology t;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
    t.summary = "topology unknown: hwloc could not load this machine's topology";
    return t;
  }
  t.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  t.hardware_threads = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  t.numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  if (t.cores <= 0) t.cores = t.hardware_threads;
  t.rank_cores = share_cores(t.cores, local_rank, local_size);
  hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
  for (int c : t.rank_cores) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(c));
    if (core == nullptr) core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(c));
    if (core != nullptr) hwloc_bitmap_or(cpus, cpus, core->cpuset);
  }
  for (int n = 0; n < t.numa_nodes; ++n) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(n));
    if (node != nullptr && hwloc_bitmap_intersects(node->cpuset, cpus)) t.rank_numa.push_back(n);
  }
  const std::string gpu = gpu_locality(topo);
  if (bind && !hwloc_bitmap_iszero(cpus)) {
    t.bound = hwloc_set_cpubind(topo, cpus, HWLOC_CPUBIND_PROCESS) == 0;
  }
  hwloc_bitmap_free(cpus);
  hwloc_topology_destroy(topo);
  t.summary = describe(t, local_rank, local_size, "hwloc") + gpu;
  return t;
}
#endif

}  // namespace

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

bool hwloc_built() { return ZIPFCOLL_HAVE_HWLOC != 0; }

Topology discover_topology(int local_rank, int local_size, bool bind) {
#if ZIPFCOLL_HAVE_HWLOC
  return from_hwloc(local_rank, local_size, bind);
#else
  (void)bind;  // binding needs hwloc
  Topology t;
  t.hardware_threads = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  t.cores = t.hardware_threads;
  t.numa_nodes = 1;
  t.rank_cores = share_cores(t.cores, local_rank, local_size);
  t.rank_numa = {0};
  t.summary = describe(t, local_rank, local_size, "no hwloc: hardware threads counted as cores");
  return t;
#endif
}

}  // namespace zfc
